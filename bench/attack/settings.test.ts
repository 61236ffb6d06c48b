/**
 * The attack drill's settings (bench/attack/settings.ts): the edge's defaults unless the environment sets them, and
 * the stream bound that follows from the registry cache.
 */
import { describe, expect, it } from 'vitest';
import { attackSettings } from './settings.js';

describe('attack drill settings', () => {
  it("takes the edge's defaults with nothing set", () => {
    expect(attackSettings({})).toStrictEqual({
      CACHE_SECONDS: 5,
      WINDOW_MS: 60_000,
      TOKEN_LIMIT: 30,
      FAILURE_LIMIT: 30,
      VERIFY_LIMIT: 300,
      FAILURE_SHARDS: 16,
      TOLERANCE_MS: 5000,
      STREAM_END_BOUND_MS: 6000,
    });
  });

  it('takes what the environment sets, in the units the drill counts in', () => {
    const settings = attackSettings({
      REGISTRY_CACHE_SECONDS: '2',
      RATE_LIMIT_WINDOW_SECONDS: '10',
      TOKEN_RATE_LIMIT: '7',
      TOKEN_FAILURE_LIMIT: '4',
      TOKEN_VERIFY_LIMIT: '50',
      TOKEN_FAILURE_SHARDS: '3',
      TOKEN_CLOCK_TOLERANCE_SECONDS: '0',
    });
    expect(settings).toStrictEqual({
      CACHE_SECONDS: 2,
      WINDOW_MS: 10_000,
      TOKEN_LIMIT: 7,
      FAILURE_LIMIT: 4,
      VERIFY_LIMIT: 50,
      FAILURE_SHARDS: 3,
      TOLERANCE_MS: 0,
      STREAM_END_BOUND_MS: 3000,
    });
  });

  it('gives a stream at least a second of checking when the registry is read on every call', () => {
    expect(attackSettings({ REGISTRY_CACHE_SECONDS: '0' }).STREAM_END_BOUND_MS).toBe(2000);
    expect(attackSettings({ REGISTRY_CACHE_SECONDS: '0.5' }).STREAM_END_BOUND_MS).toBe(2000);
  });
});
