/**
 * Per-client rate limits that hold across edge isolates. The count lives in one Durable Object per client and purpose
 * (ClientRateLimiter: a fixed window, `limit` calls per `windowMs`), so every isolate draws on the same budget and the
 * sum admitted in a window never exceeds the limit. Asking the object on every call would add a round trip to each
 * one, so an isolate takes a small lease of the window's budget and spends it locally, asking again when it runs
 * out; once the object has nothing left, the isolate refuses locally until the window ends without asking again.
 * The cost of leases: calls another isolate leased but did not spend are lost to this window, so a client spread
 * over many isolates may be refused slightly before reaching the limit, never after.
 *
 * Two lookups spend nothing: `knownRefusal` answers from what the isolate already learned (no counter call at all),
 * and `peek` answers as `admit` would, asking the counter no more often than `admit` would, so a caller that must
 * not spend still learns that the window is spent when a spending caller would.
 *
 * Pure logic, free of Worker types, so unit tests drive it with a fake clock and an in-memory counter.
 */

/** The window's answer to a request for `want` calls: how many it grants, how many it has left after that, and when it ends (epoch ms). */
export interface Grant {
  granted: number;
  left: number;
  resetAt: number;
}

/** The shared count of one client and purpose: a fixed window of `limit` calls per `windowMs`. */
export class FixedWindow {
  /** A window carried on from a saved state (`state()`), or a fresh one. */
  constructor(private start = 0, private used = 0) {}

  /** What a counter keeps to carry the window on after a restart. */
  state(): { start: number; used: number } {
    return { start: this.start, used: this.used };
  }

  take(want: number, limit: number, windowMs: number, now: number): Grant {
    const start = now - (now % windowMs);
    if (start !== this.start) {
      this.start = start;
      this.used = 0;
    }
    const granted = Math.max(0, Math.min(want, limit - this.used));
    this.used += granted;
    return { granted, left: Math.max(0, limit - this.used), resetAt: start + windowMs };
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

interface Lease {
  /** Calls leased and not yet spent. */
  left: number;
  resetAt: number;
  /** The counter had nothing left when last asked: once `left` is spent, refuse locally until the window ends. */
  exhausted: boolean;
  /** Peeks answered locally before the counter is asked again (the calls `admit` would have leased). */
  shadow: number;
}

const refusal = (resetAt: number, now: number): Admission => ({ ok: false, retryAfterSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)) });

/** One isolate's leases, by client and purpose, over a counter reached through `take` (the Durable Object). */
export class QuotaLeases {
  private readonly leases = new Map<string, Lease>();

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
        if (lease.exhausted) return refusal(lease.resetAt, now);
      }
      await this.refill(key, limit);
    }
    // Others drained every refill first: treat as exhausted for the rest of the window.
    const lease = this.leases.get(key);
    return refusal(lease?.resetAt ?? this.now() + limit.windowMs, this.now());
  }

  /** The refusal this isolate has already learned for `key` (its window spent), else ok: never asks the counter. */
  knownRefusal(key: string): Admission {
    const lease = this.leases.get(key);
    const now = this.now();
    return lease && lease.resetAt > now && lease.left === 0 && lease.exhausted ? refusal(lease.resetAt, now) : { ok: true };
  }

  /**
   * Whether `admit` would admit one more call, spending nothing. Answered locally while the isolate holds leased
   * calls, or for a lease's worth of peeks after the counter last said calls are left; otherwise the counter is asked
   * (for nothing), and a spent window is remembered as `admit` remembers it.
   */
  async peek(key: string, limit: Limit): Promise<Admission> {
    if (!(limit.limit > 0)) return { ok: true };
    const now = this.now();
    const lease = this.leases.get(key);
    if (lease && lease.resetAt > now) {
      if (lease.left > 0) return { ok: true };
      if (lease.exhausted) return refusal(lease.resetAt, now);
      if (lease.shadow > 0) {
        lease.shadow--;
        return { ok: true };
      }
    }
    const grant = await this.take(key, 0, limit);
    const held = this.current(key, grant.resetAt);
    const left = held?.left ?? 0;
    const exhausted = grant.left === 0 || (held?.exhausted ?? false);
    this.remember(key, { left, resetAt: grant.resetAt, exhausted, shadow: exhausted ? 0 : Math.min(leaseSize(limit.limit), grant.left) - 1 });
    return exhausted && left === 0 ? refusal(grant.resetAt, this.now()) : { ok: true };
  }

  /**
   * Leases more of the window. Concurrent calls of one key may each ask (no promise is shared between requests, which
   * Workers do not allow across request contexts); the counter still never grants more than the limit.
   */
  private async refill(key: string, limit: Limit): Promise<void> {
    const grant = await this.take(key, leaseSize(limit.limit), limit);
    const held = this.current(key, grant.resetAt);
    // Calls left of a lease of the same window are kept: a concurrent refill must not discard another's grant.
    const left = (held?.left ?? 0) + grant.granted;
    // A counter with nothing left means the window is spent once this lease is (a counter never gains calls within a
    // window): remember that until it ends instead of asking again.
    const exhausted = grant.left === 0 || (held?.exhausted ?? false);
    this.remember(key, { left, resetAt: grant.resetAt, exhausted, shadow: held?.shadow ?? 0 });
  }

  /** The lease of `key` if it belongs to the window ending at `resetAt`. */
  private current(key: string, resetAt: number): Lease | undefined {
    const held = this.leases.get(key);
    return held && held.resetAt === resetAt ? held : undefined;
  }

  /** Stores a lease as the newest key, dropping the oldest past `maxKeys`. */
  private remember(key: string, lease: Lease): void {
    this.leases.delete(key);
    if (this.leases.size >= this.maxKeys) this.leases.delete(this.leases.keys().next().value!);
    this.leases.set(key, lease);
  }
}
