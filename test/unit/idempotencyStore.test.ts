/**
 * The Idempotency-Key records of a platform gateway object over an in-memory stand-in for Durable Object storage and
 * a clock the test moves: replay, conflicts, expiry on its own (before any purge), the purge alarm and its re-arming.
 */
import { describe, expect, it } from 'vitest';
import { IdempotencyStore, type IdempotencyStorage } from '../../workers/gateway/idempotencyStore.js';
import type { GatewayResponse } from '../../workers/gateway/messages.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 12, 0, 0);

/** Durable Object storage semantics the store relies on: ordered keys, exclusive `end`, `limit`, one alarm. */
class MemoryStorage implements IdempotencyStorage {
  readonly data = new Map<string, unknown>();
  alarm: number | null = null;
  async get<T>(key: string) { return structuredClone(this.data.get(key)) as T | undefined; }
  async put<T>(entries: Record<string, T>) { for (const [k, v] of Object.entries(entries)) this.data.set(k, structuredClone(v)); }
  async delete(keys: string[]) { return keys.filter((k) => this.data.delete(k)).length; }
  async list<T>(options: { prefix: string; end?: string; limit?: number }) {
    const keys = [...this.data.keys()].filter((k) => k.startsWith(options.prefix) && (options.end === undefined || k < options.end)).sort();
    return new Map(keys.slice(0, options.limit ?? keys.length).map((k) => [k, this.data.get(k) as T]));
  }
  async getAlarm() { return this.alarm; }
  async setAlarm(time: number) { this.alarm = time; }
}

const answer = (body: string): GatewayResponse => ({ status: 200, body, headers: {} });

function setUp() {
  const clock = { now: T0 };
  const storage = new MemoryStorage();
  const store = new IdempotencyStore(storage, () => clock.now);
  return { clock, storage, store };
}

describe('idempotency records', () => {
  it('replay the stored answer to the same request and refuse another request under the key', async () => {
    const { store } = setUp();
    expect(await store.lookup('client-a:k1', 'hash-1')).toEqual({ kind: 'none' });
    await store.store('client-a:k1', 'hash-1', answer('first'), 24);
    expect(await store.lookup('client-a:k1', 'hash-1')).toEqual({ kind: 'replay', response: answer('first') });
    expect(await store.lookup('client-a:k1', 'hash-2')).toEqual({ kind: 'conflict' });
    expect(await store.lookup('client-b:k1', 'hash-1')).toEqual({ kind: 'none' });
  });

  it('stop answering at their expiry even while the purge has not run', async () => {
    const { clock, storage, store } = setUp();
    await store.store('c:k', 'hash-1', answer('first'), 1);
    clock.now = T0 + HOUR - 1;
    expect((await store.lookup('c:k', 'hash-1')).kind).toBe('replay');
    clock.now = T0 + HOUR;
    // The record is still stored (no alarm has run), but it has expired: the key is free, for any request.
    expect(await store.stats()).toEqual({ records: 1, expiries: 1 });
    expect(await store.lookup('c:k', 'hash-1')).toEqual({ kind: 'none' });
    expect(await store.lookup('c:k', 'hash-2')).toEqual({ kind: 'none' });
    expect(storage.data.size).toBe(2);
  });

  it('are purged by the alarm once expired, keeping a newer record of a key reused after expiry', async () => {
    const { clock, storage, store } = setUp();
    await store.store('c:old', 'h', answer('old'), 1);
    expect(storage.alarm).toBe(T0 + HOUR);
    clock.now = T0 + 30 * 60_000;
    await store.store('c:later', 'h', answer('later'), 1);
    expect(storage.alarm).toBe(T0 + HOUR); // the earlier expiry keeps the alarm

    clock.now = T0 + HOUR; // the alarm fires
    await store.store('c:old', 'h2', answer('reused'), 1); // the expired key is used again before the purge
    await store.purge();
    expect(await store.lookup('c:old', 'h2')).toEqual({ kind: 'replay', response: answer('reused') });
    expect(await store.lookup('c:later', 'h')).toEqual({ kind: 'replay', response: answer('later') });
    expect(await store.stats()).toEqual({ records: 2, expiries: 2 });
    // Re-armed for the next expiry: the later record's.
    expect(storage.alarm).toBe(T0 + 90 * 60_000);

    clock.now = T0 + 2 * HOUR;
    await store.purge();
    expect(await store.stats()).toEqual({ records: 0, expiries: 0 });
    expect(storage.data.size).toBe(0);
  });

  it('arm the purge earlier when a shorter retention stores a record that expires before the armed alarm', async () => {
    const { storage, store } = setUp();
    await store.store('c:long', 'h', answer('long'), 24);
    expect(storage.alarm).toBe(T0 + 24 * HOUR);
    await store.store('c:short', 'h', answer('short'), 1);
    expect(storage.alarm).toBe(T0 + HOUR);
  });

  it('purge in batches until every expired record is gone', async () => {
    const { clock, store } = setUp();
    for (let i = 0; i < 1_200; i++) await store.store(`c:${i}`, 'h', answer(String(i)), 1);
    await store.store('c:keep', 'h', answer('keep'), 2);
    clock.now = T0 + HOUR;
    await store.purge();
    expect(await store.stats()).toEqual({ records: 1, expiries: 1 });
    expect((await store.lookup('c:keep', 'h')).kind).toBe('replay');
  });
});
