/**
 * Checking a presented client secret at the token endpoint, and standing in for that check when the client id is
 * unknown. A check is a PBKDF2 of the secret (shared/secrets.ts), the endpoint's one expensive step; an unknown id has
 * no hash to check against, so instead of hashing for nothing the endpoint waits about as long as a check takes and
 * then answers as it answers a wrong secret. Waiting costs the isolate no CPU, and neither the answer nor its timing
 * tells which client ids exist.
 *
 * How long to wait: a duration drawn at random from this isolate's latest timed checks (so the waits spread as the
 * checks do), or, before the isolate has timed one, TYPICAL_CHECK_MS with a quarter either way. A check the clock
 * did not see take time (Workers may hold the clock still while code runs) is not kept as a sample.
 */
import { verifySecret, type SecretHash } from '../../shared/secrets.js';

/**
 * A typical check of a 100,000-iteration hash in local workerd, waited before this isolate has timed one of its own
 * (the figure: docs/perf/2026-11-27-figures-behind-defaults.md).
 */
export const TYPICAL_CHECK_MS = 20;
const SAMPLES = 32;

const durations: number[] = [];
let nextSample = 0;

/** Whether `secret` is the one `stored` was made from; times the check for the stand-in. */
export async function checkSecret(secret: string, stored: SecretHash): Promise<boolean> {
  const started = Date.now();
  const matches = await verifySecret(secret, stored);
  const took = Date.now() - started;
  if (took >= 1) {
    durations[nextSample] = took;
    nextSample = (nextSample + 1) % SAMPLES;
  }
  return matches;
}

/** Waits about as long as `checkSecret` takes, without hashing. */
export function standInForCheck(): Promise<void> {
  const ms =
    durations.length > 0
      ? durations[Math.floor(Math.random() * durations.length)]
      : TYPICAL_CHECK_MS * (0.75 + Math.random() * 0.5);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
