/**
 * The rate-limit counter of one client and purpose (`api:<clientId>`, `token:<clientId>`): a Durable Object, so the
 * count is one for every edge isolate. It keeps the window in memory only: an object is evicted only after it has
 * been idle, and a client idle that long has nothing left to count.
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
