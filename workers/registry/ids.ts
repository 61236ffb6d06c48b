/**
 * Identifier rules of the registry, shared by the HTTP routes, the token verifier and the admin CLI so that what the
 * CLI accepts is exactly what the edge can later look up.
 */
import { z } from 'zod';

/** RFC 9562 uuid; registry ids are stored lower-case, so lookups normalise before querying. */
export const uuidSchema = z.uuid();

export function isUuid(value: unknown): value is string {
  return uuidSchema.safeParse(value).success;
}

/** The client id rule of the registry, the admin API's paths and the token endpoint (shared/catalog/registry.ts). */
export { clientIdSchema } from '../../shared/catalog/registry.js';

/**
 * The client id the audit trail gives the changes made with the registry CLI (workers/audit/operatorAudit.ts): no API
 * client may take it, so a trail's row of it is always the operator's.
 */
export const OPERATOR_CLIENT = 'registry-cli';
