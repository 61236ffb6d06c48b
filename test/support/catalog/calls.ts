/**
 * Helpers of the catalog rule tests (shared/catalog/v2, and the broker's handler tests that call an entry): an entry
 * by its generation and family prefix and name, and one call through the edge's validation (`validateInputs`), whose
 * answer is `accepted(args)` or `refused(message)`.
 */
import { findOperation, type Operation } from '../../../shared/catalog/index.js';
import { validateInputs, type RawBody } from '../../../shared/catalog/inputs.js';

/** The catalog entry `<prefix><name>` (`v2.PF4.` and `UserRecordGet`); a name the catalog lacks fails the test. */
export function entryOf(prefix: string, name: string): Operation {
  const entry = findOperation(`${prefix}${name}`);
  if (!entry) throw new Error(`no catalog entry ${prefix}${name}`);
  return entry;
}

/** The request URL of a call with this query text (with its `?`); the path is the parameters' business. */
export const url = (query = '') => new URL(`http://edge/x${query}`);
export const none: RawBody = { kind: 'none' };
export const json = (value: unknown): RawBody => ({ kind: 'json', value });
export const refused = (message: string) => ({ ok: false, message });
export const accepted = (args: Record<string, unknown>) => ({ ok: true, args });

/** Validates one call of the entry `<prefix><name>`: path parameters, query text and body (none by default). */
export const callerOf =
  (prefix: string) =>
  (name: string, params: Record<string, string>, query: string, body: RawBody = none) =>
    validateInputs(entryOf(prefix, name), params, url(query), body);
