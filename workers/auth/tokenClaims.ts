/**
 * Reading a verified access token's claims, free of Worker types so unit tests can import it:
 * - limits on the token's own times, beyond its signature and expiry: a token that claims to have been issued in the
 *   future, or to live longer than the configured maximum, is refused whoever signed it. A leaked long-lived token,
 *   or one minted with a skewed clock, is then worth no more than an ordinary one;
 * - its scopes, in the forms identity providers send them.
 */
import type { JWTPayload } from 'jose';

/** Why the token's times are unacceptable, in words safe to answer; null when they are fine. */
export function lifetimeProblem(
  payload: JWTPayload,
  maxLifetimeSeconds: number,
  toleranceSeconds: number,
  nowMs = Date.now(),
): string | null {
  const now = nowMs / 1000;
  const { iat, exp } = payload;
  if (iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat)))
    return 'the access token claim iat is invalid';
  if (typeof iat === 'number' && iat - toleranceSeconds > now) return 'the access token was issued in the future';
  if (typeof exp !== 'number') return null; // a missing exp is refused by the signature check already
  // Measured from iat when the token states it, else from now: what is left can never exceed the maximum either way.
  const lifetime = exp - (typeof iat === 'number' ? iat : now);
  if (lifetime > maxLifetimeSeconds)
    return `the access token lives longer than the ${maxLifetimeSeconds} s this API accepts`;
  return null;
}

/**
 * RFC 9068 carries scopes as one space-delimited string; some providers send an array, or use `scp` (either form).
 * Both claims are read when both are present.
 */
export function scopesOf(payload: JWTPayload): string[] {
  const out = new Set<string>();
  for (const raw of [payload.scope, payload.scp]) {
    if (typeof raw === 'string')
      for (const s of raw.split(/\s+/)) {
        if (s) out.add(s);
      }
    else if (Array.isArray(raw))
      for (const s of raw) {
        if (typeof s === 'string' && s) out.add(s);
      }
  }
  return [...out];
}
