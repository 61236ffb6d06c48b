/**
 * When a failed delivery is tried again, and when it is given up: exponential backoff from 5 s, doubling, capped at
 * an hour, with full jitter over the upper half (so receivers coming back are not hit by every sender at once); a
 * receiver's `Retry-After` is honoured when it asks for longer; past the retry window (WEBHOOK_RETRY_HOURS, default
 * 24) the delivery goes to the dead letters. The queue's own limit on a message's delay (12 hours) bounds any wait.
 */

const FIRST_DELAY_SECONDS = 5;
const MAX_BACKOFF_SECONDS = 3600;
/** The most a Cloudflare Queues message may be delayed by one retry. */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

/**
 * Seconds before attempt `attempt + 1` after `attempt` failed attempts (1 after the first failure). `random` is in
 * [0, 1); `retryAfterSeconds` is the receiver's own ask.
 */
export function retryDelaySeconds(attempt: number, retryAfterSeconds: number | null, random = Math.random()): number {
  const ceiling = Math.min(MAX_BACKOFF_SECONDS, FIRST_DELAY_SECONDS * 2 ** Math.max(0, attempt - 1));
  const backoff = Math.ceil(ceiling / 2 + (ceiling / 2) * random);
  return Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(backoff, retryAfterSeconds ?? 0));
}

/**
 * A `Retry-After` value in seconds from now (delta seconds or an HTTP date, RFC 9110 §10.2.3); null when absent or
 * not one of those.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (!Number.isFinite(at) || !/[A-Za-z]/.test(text)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Whether a delivery first tried at `firstAttemptAt` may still be tried at `now` (within the retry window). */
export function withinRetryWindow(firstAttemptAt: number, retryHours: number, now = Date.now()): boolean {
  return now - firstAttemptAt < retryHours * 3_600_000;
}

/**
 * Whether an endpoint failing every delivery since `failingSince` has failed long enough to be disabled at `now`
 * (WEBHOOK_DISABLE_AFTER_DAYS; 0 never disables).
 */
export function failedTooLong(failingSince: number, disableAfterDays: number, now = Date.now()): boolean {
  return disableAfterDays > 0 && now - failingSince >= disableAfterDays * 86_400_000;
}
