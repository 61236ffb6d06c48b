/**
 * The edge worker's configuration (workers/config.ts): read once per bindings object, typed, with the schema's
 * defaults; a wrong variable logged once, in the sentence npm start refuses it with, and served at its fallback.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { configOf } from './config.js';
import type { Env } from './env.js';

const bindings = (vars: Record<string, string>) => ({ DB: {}, ...vars }) as unknown as Env;

describe('the edge configuration', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('reads the variables of a bindings object once, typed', () => {
    const env = bindings({ LINKS_PER_PLATFORM: '2', API_RATE_LIMIT: '0', ACCESS_LOG_BATCH: '1' });
    const config = configOf(env);
    expect(config).toMatchObject({
      LINKS_PER_PLATFORM: 2,
      API_RATE_LIMIT: 0,
      ACCESS_LOG_BATCH: true,
      IDEMPOTENCY_SHARDS: 16,
      BROKER_URL: ['http://127.0.0.1:8790'],
    });
    expect(configOf(env)).toBe(config);
    expect(Object.isFrozen(config)).toBe(true);
    // Other bindings are read on their own.
    expect(configOf(bindings({ LINKS_PER_PLATFORM: '3' })).LINKS_PER_PLATFORM).toBe(3);
  });

  it('answers the defaults for no bindings at all', () => {
    expect(configOf(undefined)).toMatchObject({ TOKEN_RATE_LIMIT: 30, STREAM_FLUSH_MS: 10, ACCESS_LOG_BATCH: false });
    expect(configOf(undefined)).toBe(configOf(undefined));
  });

  it('logs each wrong variable once per bindings object and serves its fallback', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const env = bindings({ API_RATE_LIMIT: '30k', STREAM_SHARDS: '0', BROKER_SECRET: 'never-logged' });
    expect(configOf(env)).toMatchObject({ API_RATE_LIMIT: 30_000, STREAM_SHARDS: 1, BROKER_SECRET: 'never-logged' });
    configOf(env);
    const lines = errors.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, string>);
    expect(lines).toEqual([
      {
        level: 'error',
        msg: 'wrong edge variable: its fallback is used',
        problem: 'API_RATE_LIMIT must be a whole number of requests from 0 to 1000000000, got "30k"',
      },
      {
        level: 'error',
        msg: 'wrong edge variable: its fallback is used',
        problem: 'STREAM_SHARDS must be a whole number of objects from 1 to 256, got "0"',
      },
    ]);
  });
});
