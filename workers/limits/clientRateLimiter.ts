/**
 * The rate-limit counter of one purpose and key (`api:<clientId>`, `token:<clientId>`, `token-fail:<source>`,
 * `token-verify:all`; see rateLimit.ts): a Durable Object, so the count is one for every edge isolate. `take(0)`
 * spends nothing and tells what the window has left. It keeps the window in memory only: an object is evicted only
 * after it has been idle, and a key idle that long has nothing left to count.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { FixedWindow, type Grant, type Limit } from './quota.js';

export class ClientRateLimiter extends DurableObject<Env> {
  private readonly window = new FixedWindow();

  /** Grants up to `want` calls of the current window. */
  async take(want: number, limit: Limit): Promise<Grant> {
    return this.window.take(want, limit.limit, limit.windowMs, Date.now());
  }
}
