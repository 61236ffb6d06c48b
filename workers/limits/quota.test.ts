/**
 * Rate-limit counting across isolates: several isolates lease from one fixed-window counter (the Durable Object's
 * logic), and whatever the interleaving, the calls admitted in a window never exceed the limit; a spent window is
 * refused locally with the seconds until it ends, and the next window admits again; looking without spending
 * (`knownRefusal`, `peek`) learns a spent window as spending does. Fake clock.
 */
import { describe, expect, it } from 'vitest';
import { FixedWindow, leaseSize, QuotaLeases, type Limit } from './quota.js';

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
