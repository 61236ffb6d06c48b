/**
 * Reconnect delays for manager sessions: exponential backoff with full jitter, so that many brokers (or many
 * platforms of one broker) reconnecting to a trading server that just came back do not arrive in lock step.
 */

export interface BackoffPolicy {
  /** Delay ceiling of the first retry, in ms. */
  baseMs: number;
  /** No delay ever exceeds this, in ms. */
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 250, capMs: 10_000 };

/**
 * Delay before reconnect attempt number `attempt` (0 for the first retry after a loss): uniformly random between 0
 * and min(cap, base · 2^attempt).
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  // Past ~30 doublings the ceiling is the cap anyway; clamping the exponent keeps 2 ** n finite.
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(Math.max(attempt, 0), 30));
  return Math.floor(random() * ceiling);
}
