/**
 * The rate-limit counter of one purpose and key (`api:<clientId>`, `token:<clientId>`, `token-fail:<source>`,
 * `token-verify:all`; see rateLimit.ts): a Durable Object, so the count is one for every edge isolate. `take(0)`
 * spends nothing and tells what the window has left. The window is kept in the object's storage as well as in memory,
 * so an object evicted while idle (local workerd evicts one after about ten seconds, well inside a window) carries its
 * count on instead of starting the window afresh; an alarm at the end of the last window used deletes it, so a counter
 * of a key that stopped calling (an address that failed once) keeps nothing.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { FixedWindow, type Grant, type Limit } from './quota.js';

interface Saved { start: number; used: number; resetAt: number }

export class ClientRateLimiter extends DurableObject<Env> {
  private window: FixedWindow | undefined;
  private alarmAt = 0;

  /** Grants up to `want` calls of the current window. */
  async take(want: number, limit: Limit): Promise<Grant> {
    if (!this.window) {
      const saved = await this.ctx.storage.get<Saved>('window');
      this.window = new FixedWindow(saved?.start ?? 0, saved?.used ?? 0);
      this.alarmAt = saved?.resetAt ?? 0;
    }
    const grant = this.window.take(want, limit.limit, limit.windowMs, Date.now());
    if (grant.granted > 0) {
      // Not awaited: the runtime holds the answer until the write is durable.
      void this.ctx.storage.put('window', { ...this.window.state(), resetAt: grant.resetAt } satisfies Saved);
      if (this.alarmAt !== grant.resetAt) {
        this.alarmAt = grant.resetAt;
        void this.ctx.storage.setAlarm(grant.resetAt);
      }
    }
    return grant;
  }

  /** The last window used has ended: nothing is left to count. */
  override async alarm(): Promise<void> {
    const saved = await this.ctx.storage.get<Saved>('window');
    if (saved && saved.resetAt > Date.now()) return;
    await this.ctx.storage.deleteAll();
    this.window = undefined;
    this.alarmAt = 0;
  }

  /** What the storage holds (tests): the saved window, if any. */
  async saved(): Promise<Saved | null> {
    return (await this.ctx.storage.get<Saved>('window')) ?? null;
  }
}
