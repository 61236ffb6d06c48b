/**
 * Verified access tokens, remembered per isolate. A token is immutable, so once its signature and claims checked out
 * the only thing that can change is time: a repeat presentation is checked for expiry and nothing else, sparing the
 * signature verification that otherwise dominates a cached read's cost at the edge. Bounded; the oldest entry goes
 * first. A token stays accepted until it expires even if the identity provider rotates its key out meanwhile, which
 * is the usual contract of self-contained access tokens.
 */
import type { JWTPayload } from 'jose';

const MAX_ENTRIES = 10_000;
const entries = new Map<string, JWTPayload>();

/** The payload of a token verified earlier under the same issuer and audience, if it is still within its lifetime. */
export function rememberedPayload(scope: string, token: string, toleranceSeconds: number): JWTPayload | undefined {
  const key = `${scope}\n${token}`;
  const payload = entries.get(key);
  if (!payload) return undefined;
  const now = Date.now() / 1000;
  if (typeof payload.exp !== 'number' || payload.exp + toleranceSeconds <= now) {
    entries.delete(key);
    return undefined;
  }
  if (typeof payload.nbf === 'number' && payload.nbf - toleranceSeconds > now) return undefined;
  return payload;
}

export function rememberPayload(scope: string, token: string, payload: JWTPayload): void {
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  entries.set(`${scope}\n${token}`, payload);
}
