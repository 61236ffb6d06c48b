/**
 * A migrated, in-memory D1 registry for tests that run registry and auth code in this Node process (the store, the
 * registry routes, the token check) rather than in workerd: Miniflare hosts the D1 database (an idle worker in the
 * edge's place) and the registry worker runs this process's statements, as for the edge and the registry CLI.
 */
import { applyMigrations, miniflareOptions, registryDb, startMiniflare, type D1Like } from '../../launcher/edge.js';

const IDLE_WORKER = `import { DurableObject } from 'cloudflare:workers';
export class PlatformLink extends DurableObject {}
export class IdempotencyLedger extends DurableObject {}
export class ClientRateLimiter extends DurableObject {}
export class PlatformStream extends DurableObject {}
export class AuditTrail extends DurableObject {}
export class WebhookDeliveries extends DurableObject {}
export class WebhookSource extends DurableObject {}
export default { fetch: () => new Response(null, { status: 404 }) };`;

export interface RegistryDb {
  db: D1Like;
  close(): Promise<void>;
}

export async function startRegistryDb(): Promise<RegistryDb> {
  const { miniflare } = await startMiniflare(miniflareOptions(IDLE_WORKER, {}));
  const db = registryDb(miniflare);
  await applyMigrations(db);
  return { db, close: () => miniflare.dispose() };
}
