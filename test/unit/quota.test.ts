/**
 * Rate-limit counting across isolates: several isolates lease from one fixed-window counter (the Durable Object's
 * logic), and whatever the interleaving, the calls admitted in a window never exceed the limit; a spent window is
 * refused locally with the seconds until it ends, and the next window admits again. Fake clock.
 */
import { describe, expect, it } from 'vitest';
import { FixedWindow, leaseSize, QuotaLeases, type Limit } from '../../workers/limits/quota.js';

const LIMIT: Limit = { limit: 100, windowMs: 60_000 };

function world() {
  const clock = { now: 120_000 };
  /** One counter per key, as one Durable Object per client and purpose. */
  const windows = new Map<string, FixedWindow>();
  let asked = 0;
  const take = async (key: string, want: number, limit: Limit) => {
    asked++;
    await Promise.resolve();
    if (!windows.has(key)) windows.set(key, new FixedWindow());
    return windows.get(key)!.take(want, limit.limit, limit.windowMs, clock.now);
  };
  const isolate = () => new QuotaLeases(take, () => clock.now);
  return { clock, isolate, asked: () => asked };
}

describe('quota leases over one counter', () => {
  it('never admits more than the limit in a window, however many isolates take part', async () => {
    const { isolate } = world();
    const isolates = Array.from({ length: 7 }, isolate);
    const answers = await Promise.all(Array.from({ length: 400 }, (_, i) => isolates[i % isolates.length].admit('api:c', LIMIT)));
    const admitted = answers.filter((a) => a.ok).length;
    expect(admitted).toBeLessThanOrEqual(LIMIT.limit);
    // Leases lost in other isolates cost at most one lease each.
    expect(admitted).toBeGreaterThanOrEqual(LIMIT.limit - isolates.length * leaseSize(LIMIT.limit));
  });

  it('admits exactly the limit from one isolate, asks the counter once per lease, and refuses the rest locally', async () => {
    const { isolate, asked, clock } = world();
    const one = isolate();
    let admitted = 0;
    for (let i = 0; i < 150; i++) if ((await one.admit('api:c', LIMIT)).ok) admitted++;
    expect(admitted).toBe(100);
    expect(asked()).toBe(100 / leaseSize(100) + 1);
    clock.now += 15_000;
    expect(await one.admit('api:c', LIMIT)).toEqual({ ok: false, retryAfterSeconds: 45 });
    expect(asked()).toBe(100 / leaseSize(100) + 1);
    clock.now += 45_000;
    expect(await one.admit('api:c', LIMIT)).toEqual({ ok: true });
  });

  it('counts each key on its own, and admits everything when the limit is 0', async () => {
    const { isolate } = world();
    const one = isolate();
    for (let i = 0; i < 100; i++) await one.admit('api:a', LIMIT);
    expect((await one.admit('api:a', LIMIT)).ok).toBe(false);
    expect((await one.admit('api:b', LIMIT)).ok).toBe(true);
    for (let i = 0; i < 1000; i++) expect((await one.admit('api:a', { limit: 0, windowMs: 1000 })).ok).toBe(true);
  });
});
