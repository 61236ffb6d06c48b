/**
 * Rate-limit counting across isolates: several isolates lease from one fixed-window counter (the Durable Object's
 * logic), and whatever the interleaving, the calls admitted in a window never exceed the limit; a spent window is
 * refused locally with the seconds until it ends, and the next window admits again; looking without spending
 * (`knownRefusal`, `peek`) learns a spent window as spending does. One object counting many keys (a shard) gives each
 * key the window an object of its own would, and keeps at most its bound of keys. Fake clock.
 */
import { describe, expect, it } from 'vitest';
import { FixedWindow, KeyedWindows, leaseSize, QuotaLeases, type Limit } from './quota.js';

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
    const answers = await Promise.all(
      Array.from({ length: 400 }, (_, i) => isolates[i % isolates.length].admit('api:c', LIMIT)),
    );
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
    // The last lease's answer said the counter had nothing left: the refusals after it ask nothing.
    expect(asked()).toBe(100 / leaseSize(100));
    clock.now += 15_000;
    expect(await one.admit('api:c', LIMIT)).toEqual({ ok: false, retryAfterSeconds: 45 });
    expect(asked()).toBe(100 / leaseSize(100));
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

describe('looking at a window without spending', () => {
  it('knownRefusal answers only from what the isolate learned, never asking the counter', async () => {
    const { isolate, asked, clock } = world();
    const one = isolate();
    const small: Limit = { limit: 2, windowMs: 60_000 };
    expect(one.knownRefusal('token-fail:s')).toEqual({ ok: true });
    expect(asked()).toBe(0);
    expect((await one.admit('token-fail:s', small)).ok).toBe(true);
    expect(one.knownRefusal('token-fail:s')).toEqual({ ok: true });
    // The second call's answer says the counter has nothing left: known at once, before a third is tried.
    expect((await one.admit('token-fail:s', small)).ok).toBe(true);
    const before = asked();
    expect(one.knownRefusal('token-fail:s')).toEqual({ ok: false, retryAfterSeconds: 60 });
    clock.now += 20_000;
    expect(one.knownRefusal('token-fail:s')).toEqual({ ok: false, retryAfterSeconds: 40 });
    // Another isolate has learned nothing, and another source is not refused.
    expect(isolate().knownRefusal('token-fail:s')).toEqual({ ok: true });
    expect(one.knownRefusal('token-fail:t')).toEqual({ ok: true });
    expect(asked()).toBe(before);
    clock.now += 40_000;
    expect(one.knownRefusal('token-fail:s')).toEqual({ ok: true });
  });

  it('peek spends nothing, asks the counter once per lease of peeks, and learns a window spent elsewhere', async () => {
    const { isolate, asked } = world();
    const peeker = isolate();
    const spender = isolate();
    const limit: Limit = { limit: 40, windowMs: 60_000 };
    // Seven peeks, two per lease: the counter is asked at the first, third, fifth and seventh.
    expect(leaseSize(40)).toBe(2);
    for (let i = 0; i < 7; i++) expect(await peeker.peek('token-verify:all', limit)).toEqual({ ok: true });
    expect(asked()).toBe(4);
    // Nothing was spent: the other isolate gets the whole limit.
    let admitted = 0;
    for (let i = 0; i < 50; i++) if ((await spender.admit('token-verify:all', limit)).ok) admitted++;
    expect(admitted).toBe(40);
    // The peeker answers from its last look for the rest of that lease's worth, then asks and learns the window is spent.
    expect((await peeker.peek('token-verify:all', limit)).ok).toBe(true);
    expect(await peeker.peek('token-verify:all', limit)).toEqual({ ok: false, retryAfterSeconds: 60 });
    expect(peeker.knownRefusal('token-verify:all').ok).toBe(false);
    expect((await peeker.admit('token-verify:all', limit)).ok).toBe(false);
    expect(await peeker.peek('token-verify:all', { limit: 0, windowMs: 60_000 })).toEqual({ ok: true });
  });
});

describe('many keys in one counter', () => {
  const take = (w: KeyedWindows, key: string, want: number, now: number) => w.take(key, want, 3, 60_000, now);

  it('gives each key the window an object of its own would give it', () => {
    const shard = new KeyedWindows();
    const own = new FixedWindow();
    const now = 125_000;
    for (let i = 0; i < 4; i++)
      expect(take(shard, 'token-fail:a', 1, now + i).grant).toEqual(own.take(1, 3, 60_000, now + i));
    // Spent for a, whole for b, on the same object.
    expect(take(shard, 'token-fail:a', 1, now).grant).toEqual({ granted: 0, left: 0, resetAt: 180_000 });
    expect(take(shard, 'token-fail:b', 1, now).grant).toEqual({ granted: 1, left: 2, resetAt: 180_000 });
    expect(take(shard, 'token-fail:a', 1, 180_000).grant).toEqual({ granted: 1, left: 2, resetAt: 240_000 });
    expect(take(shard, 'token-fail:a', 0, 180_000).saved).toEqual({ start: 180_000, used: 1, resetAt: 240_000 });
  });

  it('keeps nothing for a take that spends nothing of a key it does not know', () => {
    const shard = new KeyedWindows();
    expect(take(shard, 'token-fail:peek', 0, 1000).grant).toEqual({ granted: 0, left: 3, resetAt: 60_000 });
    expect(shard.size).toBe(0);
  });

  it('keeps at most its bound of keys, dropping the one asked for longest ago', () => {
    const shard = new KeyedWindows(3);
    // An earlier window's key, then the current window's.
    take(shard, 'old', 1, 10_000);
    for (const key of ['a', 'b']) take(shard, key, 1, 70_000);
    take(shard, 'a', 1, 70_001);
    expect(take(shard, 'c', 1, 70_002).evicted).toEqual(['old']);
    expect(take(shard, 'd', 1, 70_003).evicted).toEqual(['b']);
    expect(shard.used()).toEqual({ a: 2, c: 1, d: 1 });
    // However many keys come, it holds three.
    for (let i = 0; i < 1000; i++) take(shard, `flood-${i}`, 1, 70_004);
    expect(shard.size).toBe(3);
    expect(Object.keys(shard.used())).toEqual(['flood-997', 'flood-998', 'flood-999']);
  });

  it('drops the keys whose windows ended, and says when the last kept one ends', () => {
    const shard = new KeyedWindows();
    take(shard, 'a', 1, 10_000);
    take(shard, 'b', 1, 70_000);
    expect(shard.lastReset()).toBe(120_000);
    expect(shard.expire(60_000)).toEqual(['a']);
    expect(shard.used()).toEqual({ b: 1 });
    expect(shard.expire(120_000)).toEqual(['b']);
    expect([shard.size, shard.lastReset()]).toEqual([0, 0]);
    shard.restore('r', { start: 120_000, used: 3, resetAt: 180_000 });
    expect(take(shard, 'r', 1, 130_000).grant).toEqual({ granted: 0, left: 0, resetAt: 180_000 });
  });
});
