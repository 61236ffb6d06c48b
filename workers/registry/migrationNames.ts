/**
 * The migration files of `migrations/`, in the order wrangler applies them: what the registry must have applied
 * before the edge serves it (`readiness.ts`). A test keeps this list equal to the folder; a new migration is named
 * here too.
 */
export const REGISTRY_MIGRATIONS: readonly string[] = [
  '0001_registry.sql',
  '0002_client_grants.sql',
  '0003_client_scopes.sql',
  '0004_registry_holds.sql',
  '0005_broker_urls.sql',
  '0006_regions.sql',
  '0007_client_networks.sql',
  '0008_webhook_endpoints.sql',
  '0009_operator_audit.sql',
  '0010_local_idempotency.sql',
];
