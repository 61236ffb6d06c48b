/**
 * Per-client rate limits that hold across edge isolates. The count lives in one Durable Object per client and purpose
 * (ClientRateLimiter: a fixed window, `limit` calls per `windowMs`), so every isolate draws on the same budget and the
 * sum admitted in a window never exceeds the limit. Asking the object on every call would add a round trip to each
 * one, so an isolate takes a small lease of the window's budget and spends it locally, asking again when it runs
 * out; once the object has nothing left, the isolate refuses locally until the window ends without asking again.
 * The cost of leases: calls another isolate leased but did not spend are lost to this window, so a client spread
 * over many isolates may be refused slightly before reaching the limit, never after.
 *
 * Pure logic, free of Worker types, so unit tests drive it with a fake clock and an in-memory counter.
 */

/** The window's answer to a request for `want` calls: how many it grants and when the window ends (epoch ms). */
export interface Grant {
  granted: number;
  resetAt: number;
}

/** The shared count of one client and purpose: a fixed window of `limit` calls per `windowMs`. */
export class FixedWindow {
  private start = 0;
  private used = 0;

  take(want: number, limit: number, windowMs: number, now: number): Grant {
    const start = now - (now % windowMs);
    if (start !== this.start) {
      this.start = start;
      this.used = 0;
    }
    const granted = Math.max(0, Math.min(want, limit - this.used));
    this.used += granted;
    return { granted, resetAt: start + windowMs };
  }
}

export type Admission = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface Limit {
  /** Calls per window; 0 or less means unlimited. */
  limit: number;
  windowMs: number;
}

/** How many calls an isolate leases at once: a twentieth of the limit, at least 1 and at most 100. */
export const leaseSize = (limit: number) => Math.max(1, Math.min(100, Math.floor(limit / 20)));

/** One isolate's leases, by client and purpose, over a counter reached through `take` (the Durable Object). */
export class QuotaLeases {
  private readonly leases = new Map<string, { left: number; resetAt: number; exhausted: boolean }>();

  constructor(
    private readonly take: (key: string, want: number, limit: Limit) => Promise<Grant>,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 10_000,
  ) {}

  async admit(key: string, limit: Limit): Promise<Admission> {
    if (!(limit.limit > 0)) return { ok: true };
    for (let attempt = 0; attempt < 3; attempt++) {
      const lease = this.leases.get(key);
      const now = this.now();
      if (lease && lease.resetAt > now) {
        if (lease.left > 0) {
          lease.left--;
          return { ok: true };
        }
        if (lease.exhausted) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((lease.resetAt - now) / 1000)) };
      }
      await this.refill(key, limit);
    }
    // Others drained every refill first: treat as exhausted for the rest of the window.
    const lease = this.leases.get(key);
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(((lease?.resetAt ?? this.now() + limit.windowMs) - this.now()) / 1000)) };
  }

  /**
   * Leases more of the window. Concurrent calls of one key may each ask (no promise is shared between requests, which
   * Workers do not allow across request contexts); the counter still never grants more than the limit.
   */
  private async refill(key: string, limit: Limit): Promise<void> {
    const grant = await this.take(key, leaseSize(limit.limit), limit);
    const held = this.leases.get(key);
    // Calls left of a lease of the same window are kept: a concurrent refill must not discard another's grant.
    const left = held && held.resetAt === grant.resetAt ? held.left + grant.granted : grant.granted;
    this.leases.delete(key);
    if (this.leases.size >= this.maxKeys) this.leases.delete(this.leases.keys().next().value!);
    // A grant of nothing means the window is spent: remember that until it ends instead of asking again.
    this.leases.set(key, { left, resetAt: grant.resetAt, exhausted: grant.granted === 0 && left === 0 });
  }
}
