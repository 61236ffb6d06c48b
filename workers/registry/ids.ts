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

/**
 * Client ids travel in HTTP Basic credentials and form bodies; unreserved URI characters avoid any ambiguity with the
 * `:` separator and need no percent-encoding in either place.
 */
export const clientIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{1,128}$/, 'client id must be 1-128 characters of A-Z a-z 0-9 . _ ~ -');
