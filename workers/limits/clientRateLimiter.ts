/**
 * A rate-limit counter (see rateLimit.ts), a Durable Object, so the count is one for every edge isolate. An object
 * counts either its own key, named by it (`api:<clientId>`, `token:<clientId>`, `token-verify:all`), or, as a shard
 * of a purpose whose keys have no bound (`token-fail#<n>`, counterShards.ts), the keys hashed onto it
 * (`token-fail:<source>`), each in a window of its own and at most MAX_COUNTED_KEYS of them (quota.ts
 * `KeyedWindows`): whatever the number of addresses, the purpose costs a fixed number of objects of bounded size.
 * `take(0)` spends nothing and tells what the window has left.
 *
 * Every window is kept in the object's storage as well as in memory (its own under `window`, a shard's keys under
 * `window:<key>`), so an object evicted while idle (local workerd evicts one after about ten seconds, well inside a
 * window) carries its counts on instead of starting them afresh; a key dropped to make room is deleted from storage
 * too. An alarm at the end of the last window used deletes what has ended, so a counter of keys that stopped calling
 * (addresses that failed once) keeps nothing.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { KeyedWindows, type Grant, type Limit, type SavedWindow } from './quota.js';

/** The storage key of a key's window: the object's own (`''`) under `window`, as before shards existed. */
const storageKey = (key: string) => (key === '' ? 'window' : `window:${key}`);
/** Storage deletes take at most this many keys at once. */
const DELETE_BATCH = 128;

export class ClientRateLimiter extends DurableObject<Env> {
  private windows: KeyedWindows | undefined;
  private alarmAt = 0;

  /** Grants up to `want` calls of the current window of `key` (`''`: the object's own count). */
  async take(want: number, limit: Limit, key = ''): Promise<Grant> {
    const windows = await this.load();
    const { grant, saved, evicted } = windows.take(key, want, limit.limit, limit.windowMs, Date.now());
    if (grant.granted > 0) {
      // Not awaited: the runtime holds the answer until the writes are durable.
      void this.ctx.storage.put(storageKey(key), saved);
      if (evicted.length > 0) void this.forget(evicted);
      if (grant.resetAt > this.alarmAt) {
        this.alarmAt = grant.resetAt;
        void this.ctx.storage.setAlarm(grant.resetAt);
      }
    }
    return grant;
  }

  /** The windows, read back from storage once per life of the object. */
  private async load(): Promise<KeyedWindows> {
    if (this.windows) return this.windows;
    const stored = await this.ctx.storage.list<SavedWindow>({ prefix: 'window' });
    const windows = new KeyedWindows();
    for (const [name, saved] of stored) {
      if (name === 'window') windows.restore('', saved);
      else if (name.startsWith('window:')) windows.restore(name.slice('window:'.length), saved);
    }
    this.alarmAt = windows.lastReset();
    // Another take may have loaded them while this one read: the first one loaded is the one kept.
    return (this.windows ??= windows);
  }

  private async forget(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH)
      await this.ctx.storage.delete(keys.slice(i, i + DELETE_BATCH).map(storageKey));
  }

  /** The last window used has ended: what has ended is deleted, and nothing is left once every window has. */
  override async alarm(): Promise<void> {
    const windows = await this.load();
    const ended = windows.expire(Date.now());
    if (windows.size === 0) {
      await this.ctx.storage.deleteAll();
      this.windows = undefined;
      this.alarmAt = 0;
      return;
    }
    await this.forget(ended);
    this.alarmAt = windows.lastReset();
    await this.ctx.storage.setAlarm(this.alarmAt);
  }

  /** What the storage holds for `key` (tests): its saved window, if any. */
  async saved(key = ''): Promise<SavedWindow | null> {
    return (await this.ctx.storage.get<SavedWindow>(storageKey(key))) ?? null;
  }

  /** The calls used of each key the object keeps, by key (tests and drills: which keys a shard counts). */
  async counted(): Promise<Record<string, number>> {
    return (await this.load()).used();
  }
}
