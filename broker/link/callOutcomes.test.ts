/**
 * The outcome store of calls under an Idempotency-Key: an id runs once while it is remembered, a query waits (bounded)
 * for a running call, ends are final, another platform's id is unknown, and ended outcomes are forgotten by age and by
 * count, oldest first, while running ones never are; an ended outcome is undelivered until marked delivered, and a
 * forgotten one counts as neither.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallOutcomes } from './callOutcomes.js';

const ok = (data: unknown) => ({ ok: true as const, data });

afterEach(() => {
  vi.useRealTimers();
});

describe('the outcome store', () => {
  it('begins an id once, and counts running and ended ids', () => {
    const store = new CallOutcomes();
    expect(store.size).toStrictEqual({ pending: 0, ended: 0 });
    expect(store.begin('a', 'p')).toBe(true);
    expect(store.begin('a', 'p')).toBe(false);
    expect(store.begin('a', 'q')).toBe(false);
    expect(store.begin('b', 'p')).toBe(true);
    expect(store.size).toStrictEqual({ pending: 2, ended: 0 });
    store.settle('a', ok(1));
    expect(store.size).toStrictEqual({ pending: 1, ended: 1 });
    expect(store.begin('a', 'p')).toBe(false);
  });

  it('reports an ended call at once, and only to its own platform', () => {
    const store = new CallOutcomes();
    store.begin('s', 'p');
    store.settle('s', ok({ login: 5 }));
    store.begin('l', 'p');
    store.lose('l', 'dropped');
    expect(store.query('s', 'p', 1000)).toStrictEqual({ state: 'settled', result: ok({ login: 5 }) });
    expect(store.query('l', 'p', 1000)).toStrictEqual({ state: 'lost', reason: 'dropped' });
    expect(store.query('s', 'other', 1000)).toStrictEqual({ state: 'unknown' });
    expect(store.query('never', 'p', 1000)).toStrictEqual({ state: 'unknown' });
  });

  it('keeps the first end of a call: a later settle or lose changes nothing, nor does ending an unknown id', () => {
    const store = new CallOutcomes();
    store.begin('x', 'p');
    store.lose('x', 'first');
    store.settle('x', ok(2));
    store.lose('x', 'second');
    expect(store.query('x', 'p', 0)).toStrictEqual({ state: 'lost', reason: 'first' });
    store.settle('ghost', ok(1));
    expect(store.query('ghost', 'p', 0)).toStrictEqual({ state: 'unknown' });
    expect(store.size).toStrictEqual({ pending: 0, ended: 1 });
  });

  it('answers pending for a running call without waiting when asked not to wait', () => {
    const store = new CallOutcomes();
    store.begin('r', 'p');
    expect(store.query('r', 'p', 0)).toStrictEqual({ state: 'pending' });
    expect(store.query('r', 'p', -5)).toStrictEqual({ state: 'pending' });
  });

  it('waits for a running call to end, every waiter getting the outcome', async () => {
    vi.useFakeTimers({ now: 0 });
    const store = new CallOutcomes();
    store.begin('r', 'p');
    const one = store.query('r', 'p', 5000);
    const two = store.query('r', 'p', 5000);
    expect(one).toBeInstanceOf(Promise);
    await vi.advanceTimersByTimeAsync(4000);
    store.settle('r', ok('done'));
    await expect(one).resolves.toStrictEqual({ state: 'settled', result: ok('done') });
    await expect(two).resolves.toStrictEqual({ state: 'settled', result: ok('done') });
  });

  it('answers pending when the wait passes first, and a later end reaches only the waiters still there', async () => {
    vi.useFakeTimers({ now: 0 });
    const store = new CallOutcomes();
    store.begin('r', 'p');
    const early = store.query('r', 'p', 100);
    const patient = store.query('r', 'p', 10_000);
    let earlyAnswer: unknown;
    void (early as Promise<unknown>).then((a) => {
      earlyAnswer = a;
    });
    await vi.advanceTimersByTimeAsync(99);
    expect(earlyAnswer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(earlyAnswer).toStrictEqual({ state: 'pending' });
    store.lose('r', 'gone');
    await expect(patient).resolves.toStrictEqual({ state: 'lost', reason: 'gone' });
    expect(earlyAnswer).toStrictEqual({ state: 'pending' });
    // The patient waiter's timer was stopped: nothing is left to fire.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps at most maxSettled ended outcomes, the oldest ending first going first, never a running call', () => {
    const store = new CallOutcomes({ maxSettled: 2 });
    store.begin('running', 'p');
    for (const id of ['a', 'b', 'c']) store.begin(id, 'p');
    store.settle('b', ok('b'));
    store.settle('a', ok('a'));
    store.settle('c', ok('c'));
    expect(store.query('b', 'p', 0)).toStrictEqual({ state: 'unknown' });
    expect(store.query('a', 'p', 0)).toStrictEqual({ state: 'settled', result: ok('a') });
    expect(store.query('c', 'p', 0)).toStrictEqual({ state: 'settled', result: ok('c') });
    expect(store.query('running', 'p', 0)).toStrictEqual({ state: 'pending' });
    expect(store.size).toStrictEqual({ pending: 1, ended: 2 });
    // A forgotten id may begin again.
    expect(store.begin('b', 'p')).toBe(true);
  });

  it('forgets an ended outcome once retentionMs passed since it ended, checked on begin and on query', () => {
    vi.useFakeTimers({ now: 0 });
    const store = new CallOutcomes({ retentionMs: 1000 });
    store.begin('old', 'p');
    vi.setSystemTime(500);
    store.settle('old', ok(1));
    store.begin('young', 'p');
    vi.setSystemTime(900);
    store.settle('young', ok(2));
    vi.setSystemTime(1499);
    expect(store.query('old', 'p', 0)).toStrictEqual({ state: 'settled', result: ok(1) });
    vi.setSystemTime(1500);
    expect(store.begin('other', 'p')).toBe(true);
    expect(store.size).toStrictEqual({ pending: 1, ended: 1 });
    expect(store.query('old', 'p', 0)).toStrictEqual({ state: 'unknown' });
    expect(store.query('young', 'p', 0)).toStrictEqual({ state: 'settled', result: ok(2) });
    vi.setSystemTime(1900);
    expect(store.query('young', 'p', 0)).toStrictEqual({ state: 'unknown' });
  });

  it('keeps ended outcomes ten minutes and twenty thousand by default', () => {
    vi.useFakeTimers({ now: 0 });
    const store = new CallOutcomes();
    store.begin('x', 'p');
    store.settle('x', ok(1));
    vi.setSystemTime(599_999);
    expect(store.query('x', 'p', 0)).toMatchObject({ state: 'settled' });
    vi.setSystemTime(600_000);
    expect(store.query('x', 'p', 0)).toStrictEqual({ state: 'unknown' });
    for (let i = 0; i <= 20_000; i++) {
      store.begin(`n${i}`, 'p');
      store.settle(`n${i}`, ok(i));
    }
    expect(store.size).toStrictEqual({ pending: 0, ended: 20_000 });
    expect(store.query('n0', 'p', 0)).toStrictEqual({ state: 'unknown' });
    expect(store.query('n1', 'p', 0)).toMatchObject({ state: 'settled' });
  });

  it('counts ended outcomes undelivered until delivered; running and forgotten ones are not counted', () => {
    vi.useFakeTimers({ now: 0 });
    const store = new CallOutcomes({ retentionMs: 1000 });
    store.begin('a', 'p');
    store.begin('b', 'p');
    store.begin('c', 'p');
    expect(store.undelivered).toBe(0);
    store.settle('a', ok(1));
    store.lose('b', 'dropped');
    expect(store.undelivered).toBe(2);
    store.delivered('a');
    store.delivered('a');
    store.delivered('never');
    expect(store.undelivered).toBe(1);
    expect(store.has('b')).toBe(true);
    vi.setSystemTime(1000);
    // Ending `c` prunes `a` and `b`: `b` was never delivered, but it is forgotten now.
    store.settle('c', ok(3));
    expect(store.has('b')).toBe(false);
    expect(store.undelivered).toBe(1);
    store.delivered('c');
    expect(store.undelivered).toBe(0);
  });
});
