/**
 * Per-client rate limits that hold across edge isolates. The count of a key lives in one Durable Object
 * (ClientRateLimiter: a fixed window, `limit` calls per `windowMs`; an object per client and purpose, or one of a
 * purpose's shards for source addresses, `KeyedWindows`), so every isolate draws on the same budget and the sum
 * admitted in a window never exceeds the limit. Asking the object on every call would add a round trip to each
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
  constructor(
    private start = 0,
    private used = 0,
  ) {}

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

/** A window as a counter saves it: the fixed window's state and when it ends (epoch ms). */
export interface SavedWindow {
  start: number;
  used: number;
  resetAt: number;
}

/** How many keys' windows one counter object keeps at most (`KeyedWindows`). */
export const MAX_COUNTED_KEYS = 10_000;

/**
 * The windows of many keys in one counter object: a shard of a purpose whose keys have no bound (source addresses,
 * counterShards.ts), or the one key of an object of its own (`''`). At most `maxKeys` are kept: past that, the key
 * asked for longest ago goes first. Windows are aligned to the clock, so those are the keys of windows already ended
 * before any of the current window's; a key gone is counted afresh if it comes back. A take that spends nothing of a
 * key not kept keeps nothing.
 */
export class KeyedWindows {
  private readonly windows = new Map<string, { window: FixedWindow; resetAt: number }>();

  constructor(private readonly maxKeys = MAX_COUNTED_KEYS) {}

  get size(): number {
    return this.windows.size;
  }

  /** Carries a saved window on (a counter read back from its storage). */
  restore(key: string, saved: SavedWindow): void {
    this.windows.set(key, { window: new FixedWindow(saved.start, saved.used), resetAt: saved.resetAt });
  }

  /** Grants up to `want` calls of `key`'s window; `evicted` are the keys dropped to make room for it. */
  take(
    key: string,
    want: number,
    limit: number,
    windowMs: number,
    now: number,
  ): { grant: Grant; saved: SavedWindow; evicted: string[] } {
    const held = this.windows.get(key);
    const entry = held ?? { window: new FixedWindow(), resetAt: 0 };
    const grant = entry.window.take(want, limit, windowMs, now);
    entry.resetAt = grant.resetAt;
    const evicted: string[] = [];
    if (want > 0) {
      // The newest key goes last: the first in the map is the one asked for longest ago.
      this.windows.delete(key);
      this.windows.set(key, entry);
      for (const oldest of this.windows.keys()) {
        if (this.windows.size <= this.maxKeys) break;
        this.windows.delete(oldest);
        evicted.push(oldest);
      }
    }
    return { grant, saved: { ...entry.window.state(), resetAt: entry.resetAt }, evicted };
  }

  /** Drops the keys whose windows ended by `now`; answers them. */
  expire(now: number): string[] {
    const ended: string[] = [];
    for (const [key, entry] of this.windows) {
      if (entry.resetAt <= now) {
        this.windows.delete(key);
        ended.push(key);
      }
    }
    return ended;
  }

  /** When the last of the kept windows ends (epoch ms); 0 when none is kept. */
  lastReset(): number {
    let last = 0;
    for (const entry of this.windows.values()) last = Math.max(last, entry.resetAt);
    return last;
  }

  /** The calls used of each kept key's window (tests and drills). */
  used(): Record<string, number> {
    return Object.fromEntries([...this.windows].map(([key, entry]) => [key, entry.window.state().used]));
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

const refusal = (resetAt: number, now: number): Admission => ({
  ok: false,
  retryAfterSeconds: Math.max(1, Math.ceil((resetAt - now) / 1000)),
});

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
    return lease && lease.resetAt > now && lease.left === 0 && lease.exhausted
      ? refusal(lease.resetAt, now)
      : { ok: true };
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
    this.remember(key, {
      left,
      resetAt: grant.resetAt,
      exhausted,
      shadow: exhausted ? 0 : Math.min(leaseSize(limit.limit), grant.left) - 1,
    });
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
