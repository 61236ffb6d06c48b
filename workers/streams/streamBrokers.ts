/**
 * The brokers of one trade platform as a stream object sees them: the platform's ordered list, which of them holds
 * the subscription now, and when each broker left may be tried again. Free of the Durable Object and its sockets, so
 * it is unit-tested alone (`streamBrokers.test.ts`).
 *
 * The object subscribes on the first broker of the list. A broker left (its socket lost, hung, unreachable, refusing
 * the subscription, or draining) is tried again only after a backoff that grows while it keeps failing, and the
 * subscription moves to the next broker of the list, wrapping round, that is not waiting out its backoff; when every
 * broker is, to the one whose wait ends first. A broker that accepts a subscription starts afresh. Unlike a link
 * object, a stream object stays on the broker it moved to while that broker serves it: each move costs its clients a
 * resync, so it does not move back to an earlier broker on its own.
 */
import type { FailoverReason } from '../../shared/frames.js';

/** A broker left waits this long before it is tried again, by how many times running it failed (the last repeats). */
export const STREAM_BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000] as const;

interface Member {
  readonly url: string;
  /** Times running it was left without accepting a subscription in between. */
  failures: number;
  /** Not tried before this (epoch ms). */
  retryAt: number;
}

export class StreamBrokers {
  private readonly members: Member[];
  private index = 0;
  /** Moves to another broker, by why the one before was left. */
  readonly failovers: Partial<Record<FailoverReason, number>> = {};

  constructor(
    readonly urls: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    if (urls.length === 0) throw new Error('a platform needs at least one broker');
    this.members = urls.map((url) => ({ url, failures: 0, retryAt: 0 }));
  }

  /** The list's identity: a platform whose list changed gets a new set. */
  static key(urls: readonly string[]): string {
    return urls.join(' ');
  }

  get key(): string {
    return StreamBrokers.key(this.urls);
  }

  /** More than one broker: the one in use is watched by heartbeats, and a failure moves to another. */
  get paired(): boolean {
    return this.members.length > 1;
  }

  /** The broker to subscribe on now (or once `waitMs` has passed). */
  get current(): number {
    return this.index;
  }

  get currentUrl(): string {
    return this.members[this.index].url;
  }

  /** How long until the broker in use may be tried (0: now). */
  waitMs(): number {
    return Math.max(0, this.members[this.index].retryAt - this.now());
  }

  /** The broker at `index` accepted a subscription: its backoff starts afresh. */
  subscribed(index: number): void {
    const m = this.members[index];
    m.failures = 0;
    m.retryAt = 0;
  }

  /**
   * The broker at `index` is left for `reason`: it waits out its backoff, and if it was the one in use the next one
   * takes its place. Answers whether that is another broker (a failover, which the new broker is told of).
   */
  leave(index: number, reason: FailoverReason): boolean {
    const m = this.members[index];
    m.failures++;
    m.retryAt = this.now() + STREAM_BACKOFF_MS[Math.min(m.failures, STREAM_BACKOFF_MS.length) - 1];
    if (index !== this.index) return false;
    this.index = this.next(index);
    if (this.index === index) return false;
    this.failovers[reason] = (this.failovers[reason] ?? 0) + 1;
    return true;
  }

  /** The first broker after `from` (wrapping round, `from` itself last) not waiting out a backoff, else the soonest due. */
  private next(from: number): number {
    const n = this.members.length;
    const now = this.now();
    let soonest = -1;
    for (let step = 1; step <= n; step++) {
      const i = (from + step) % n;
      if (this.members[i].retryAt <= now) return i;
      if (soonest < 0 || this.members[i].retryAt < this.members[soonest].retryAt) soonest = i;
    }
    return soonest;
  }
}
