import { describe, expect, it } from 'vitest';
import {
  failedTooLong,
  MAX_QUEUE_DELAY_SECONDS,
  retryAfterSeconds,
  retryDelaySeconds,
  withinRetryWindow,
} from './retryPolicy.js';

describe('webhook retries', () => {
  it('back off exponentially from 5 s with jitter over the upper half, capped at an hour', () => {
    expect(retryDelaySeconds(1, null, 0)).toBe(3);
    expect(retryDelaySeconds(1, null, 0.999)).toBe(5);
    expect(retryDelaySeconds(2, null, 0)).toBe(5);
    expect(retryDelaySeconds(5, null, 0.999)).toBe(80);
    expect(retryDelaySeconds(20, null, 0)).toBe(1800);
    expect(retryDelaySeconds(20, null, 0.9999)).toBe(3600);
  });

  it("honour a receiver's longer Retry-After, up to the queue's longest delay", () => {
    expect(retryDelaySeconds(1, 120, 0.5)).toBe(120);
    expect(retryDelaySeconds(1, 1, 0.999)).toBe(5);
    expect(retryDelaySeconds(1, 10 ** 9, 0)).toBe(MAX_QUEUE_DELAY_SECONDS);
  });

  it('read Retry-After as seconds or an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-12-04T00:00:00Z');
    expect(retryAfterSeconds('30', now)).toBe(30);
    expect(retryAfterSeconds(' 0 ', now)).toBe(0);
    expect(retryAfterSeconds('Fri, 04 Dec 2026 00:01:00 GMT', now)).toBe(60);
    expect(retryAfterSeconds('Thu, 03 Dec 2026 00:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('-5', now)).toBeNull();
    expect(retryAfterSeconds('soon', now)).toBeNull();
    expect(retryAfterSeconds(null, now)).toBeNull();
  });

  it('try within the retry window and not after it', () => {
    const first = Date.parse('2026-12-04T00:00:00Z');
    expect(withinRetryWindow(first, 24, first + 23.9 * 3_600_000)).toBe(true);
    expect(withinRetryWindow(first, 24, first + 24 * 3_600_000)).toBe(false);
  });

  it('disable an endpoint that failed every delivery for WEBHOOK_DISABLE_AFTER_DAYS, and never at 0', () => {
    const since = Date.parse('2026-12-01T00:00:00Z');
    const day = 86_400_000;
    expect(failedTooLong(since, 5, since + 5 * day - 1)).toBe(false);
    expect(failedTooLong(since, 5, since + 5 * day)).toBe(true);
    expect(failedTooLong(since, 1, since + 2 * day)).toBe(true);
    expect(failedTooLong(since, 0, since + 365 * day)).toBe(false);
  });
});
