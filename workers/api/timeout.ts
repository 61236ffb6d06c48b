/**
 * The call's time budget: `X-Request-Timeout` header or `requestTimeout` query, 1 to 300 seconds (fractions allowed),
 * else the entry's class default. The value used is answered in `X-Request-Timeout-Applied` on every response.
 */
import { TIMEOUT_CLASSES, TIMEOUT_MAX_S, TIMEOUT_MIN_S, type Operation } from '../../shared/catalog/index.js';

export const TIMEOUT_HEADER = 'X-Request-Timeout';
export const TIMEOUT_APPLIED_HEADER = 'X-Request-Timeout-Applied';

export type Budget = { ok: true; seconds: number } | { ok: false; seconds: number; message: string };

export function resolveTimeout(entry: Operation, header: string | undefined, query: string | null): Budget {
  const fallback = TIMEOUT_CLASSES[entry.timeout];
  const [field, raw] = header !== undefined ? [TIMEOUT_HEADER, header] : ['requestTimeout', query];
  if (raw === null || raw === undefined) return { ok: true, seconds: fallback };
  const text = raw.trim();
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= TIMEOUT_MIN_S && seconds <= TIMEOUT_MAX_S)) {
    return { ok: false, seconds: fallback, message: `${field}: must be a number of seconds from ${TIMEOUT_MIN_S} to ${TIMEOUT_MAX_S}` };
  }
  return { ok: true, seconds };
}
