/**
 * A rate-limit counter keeps its window in its storage, so an object evicted while idle (inside a window) carries the
 * count on instead of letting a source fail again and again within one window; its storage is deleted once the last
 * window it counted has ended. A shard keeps each key's window apart, the same way. Real worker, its own objects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, type TestEdge } from '../support/edge.js';
import type { Grant, Limit } from '../../workers/limits/quota.js';
import { objectCall } from '../../launcher/edge.js';

let edge: TestEdge;
beforeAll(async () => {
  edge = await startTestEdge();
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

type Saved = { start: number; used: number; resetAt: number };
type Counter = {
  take(want: number, limit: Limit, key?: string): Promise<Grant>;
  saved(key?: string): Promise<Saved | null>;
};
/** The counter `name`, called through the edge's inspection worker (asynchronous round trips only). */
function counter(name: string): Counter {
  return {
    take: (want, limit, ...key) => objectCall<Grant>(edge.miniflare, 'RATE_LIMITER', name, 'take', want, limit, ...key),
    saved: (...key) => objectCall(edge.miniflare, 'RATE_LIMITER', name, 'saved', ...key),
  };
}

/**
 * Waits for the start of the next window of `windowMs` (windows are aligned to the clock), so the calls that read a
 * short window back have all of it, not what was left of it when the test came to it.
 */
const windowStart = (windowMs: number) => new Promise((r) => setTimeout(r, windowMs - (Date.now() % windowMs)));

describe('a rate-limit counter', () => {
  it('saves its window with every take that spends, so an evicted counter carries it on', async () => {
    const hour: Limit = { limit: 30, windowMs: 3_600_000 };
    const c = counter(`token-fail:saved-${Date.now()}`);
    const first = await c.take(20, hour);
    expect(first.granted).toBe(20);
    expect(await c.saved()).toEqual({ start: first.resetAt - hour.windowMs, used: 20, resetAt: first.resetAt });
    const second = await c.take(20, hour);
    if (second.resetAt === first.resetAt) {
      expect(second).toEqual({ granted: 10, left: 0, resetAt: first.resetAt });
      expect((await c.saved())?.used).toBe(30);
    }
  });

  it('keeps nothing once the last window it counted has ended', async () => {
    const short: Limit = { limit: 5, windowMs: 1000 };
    const c = counter(`token-fail:short-${Date.now()}`);
    await windowStart(short.windowMs);
    const grant = await c.take(2, short);
    expect(grant.granted).toBe(2);
    expect((await c.saved())?.used).toBe(2);
    await new Promise((r) => setTimeout(r, Math.max(0, grant.resetAt - Date.now())));
    // The alarm at the window's end deletes it (polled: an alarm may run a little late on a loaded machine).
    await expect.poll(() => c.saved(), { timeout: 15_000, interval: 200 }).toBeNull();
    // A new window starts from nothing.
    expect((await c.take(5, short)).granted).toBe(5);
  });

  it('saves nothing for a take that spends nothing', async () => {
    const c = counter(`token-fail:peek-${Date.now()}`);
    expect((await c.take(0, { limit: 5, windowMs: 60_000 })).left).toBe(5);
    expect(await c.saved()).toBeNull();
  });

  it('keeps the window of each key a shard counts, and nothing once they have ended', async () => {
    const short: Limit = { limit: 5, windowMs: 1000 };
    const name = `token-fail#short-${Date.now()}`;
    const shard = counter(name);
    await windowStart(short.windowMs);
    const a = await shard.take(2, short, 'token-fail:a');
    expect(a.granted).toBe(2);
    expect((await shard.take(5, short, 'token-fail:b')).granted).toBe(5);
    expect((await shard.saved('token-fail:a'))?.used).toBe(2);
    expect((await shard.saved('token-fail:b'))?.used).toBe(5);
    // Counted apart: the shard has no window of its own.
    expect(await shard.saved()).toBeNull();
    await new Promise((r) => setTimeout(r, Math.max(0, a.resetAt - Date.now())));
    await expect
      .poll(async () => [await shard.saved('token-fail:a'), await shard.saved('token-fail:b')], {
        timeout: 15_000,
        interval: 200,
      })
      .toEqual([null, null]);
    expect(await objectCall(edge.miniflare, 'RATE_LIMITER', name, 'counted')).toEqual({});
    expect((await shard.take(5, short, 'token-fail:a')).granted).toBe(5);
  });
});
