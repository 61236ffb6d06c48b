/**
 * What became of the calls made under an Idempotency-Key (frames with a `callId`), so that the edge can learn the
 * real outcome of a call whose answer it did not get: it passed its deadline, or the link dropped before the answer
 * reached the edge. Held in memory: a broker restart forgets every id, and the edge then treats those outcomes as
 * never knowable (`unknown`), which is safe because it never sends a call id twice.
 *
 * Bounds: a call id is `pending` while its handler runs (itself bounded by the late-answer window), then kept
 * `retentionMs` after it settled, and at most `maxSettled` settled ids are kept (the oldest go first). Invariant: an
 * id that was ever begun is never begun again while it is remembered.
 *
 * An ended outcome is undelivered until some edge learned it: its answer frame went out on an open link in time, its
 * `late` frame did, or an `#outcome` query (or a repeated frame) was answered with it. A draining broker stays up while
 * undelivered outcomes remain (bounded by its drain timeout); a forgotten outcome counts as neither.
 */
import type { CallResult, OutcomeReport } from '../../shared/frames.js';

type Ended = Extract<OutcomeReport, { state: 'settled' | 'lost' }>;

interface Entry {
  platform: string;
  report: Ended | null;
  /** Set once ended, for retention. */
  endedAt: number;
  waiters: Array<(report: Ended) => void>;
}

export interface CallOutcomesOptions {
  /** How long an ended call's outcome is kept (default 10 minutes). */
  retentionMs?: number;
  /** Most ended outcomes kept (default 20,000). */
  maxSettled?: number;
}

export const DEFAULT_OUTCOME_RETENTION_MS = 10 * 60_000;
export const DEFAULT_MAX_SETTLED = 20_000;

export class CallOutcomes {
  private readonly entries = new Map<string, Entry>();
  /** Ended ids in the order they ended: the retention and size bounds drop from the front. */
  private readonly ended = new Map<string, number>();
  /** Ended ids no edge has learned the outcome of yet. */
  private readonly undeliveredIds = new Set<string>();
  private readonly retentionMs: number;
  private readonly maxSettled: number;

  constructor(options: CallOutcomesOptions = {}) {
    this.retentionMs = options.retentionMs ?? DEFAULT_OUTCOME_RETENTION_MS;
    this.maxSettled = options.maxSettled ?? DEFAULT_MAX_SETTLED;
  }

  /** Counts for metrics and tests. */
  get size(): { pending: number; ended: number } {
    return { pending: this.entries.size - this.ended.size, ended: this.ended.size };
  }

  /** Ended outcomes not yet delivered to any edge. */
  get undelivered(): number {
    return this.undeliveredIds.size;
  }

  /** An edge learned the ended outcome of `callId` (an answer, a `late` frame or a query's report went out). */
  delivered(callId: string): void {
    this.undeliveredIds.delete(callId);
  }

  /** Whether `callId` is remembered (running or ended), on any platform. */
  has(callId: string): boolean {
    return this.entries.has(callId);
  }

  /** Registers a new call id; false when the id is already known (the caller must not run it again). */
  begin(callId: string, platform: string): boolean {
    this.prune(Date.now());
    if (this.entries.has(callId)) return false;
    this.entries.set(callId, { platform, report: null, endedAt: 0, waiters: [] });
    return true;
  }

  settle(callId: string, result: CallResult): void {
    this.end(callId, { state: 'settled', result });
  }

  lose(callId: string, reason: string): void {
    this.end(callId, { state: 'lost', reason });
  }

  /**
   * The outcome of `callId` for `platform`: at once when ended or unknown, else when it ends or `waitMs` passes
   * (then `pending`). Another platform's call id is as unknown as a forgotten one.
   */
  query(callId: string, platform: string, waitMs: number): OutcomeReport | Promise<OutcomeReport> {
    this.prune(Date.now());
    const entry = this.entries.get(callId);
    if (!entry || entry.platform !== platform) return { state: 'unknown' };
    if (entry.report) return entry.report;
    if (waitMs <= 0) return { state: 'pending' };
    return new Promise<OutcomeReport>((resolve) => {
      const timer = setTimeout(() => {
        entry.waiters = entry.waiters.filter((w) => w !== waiter);
        resolve({ state: 'pending' });
      }, waitMs);
      const waiter = (report: Ended) => {
        clearTimeout(timer);
        resolve(report);
      };
      entry.waiters.push(waiter);
    });
  }

  private end(callId: string, report: Ended): void {
    const entry = this.entries.get(callId);
    if (!entry || entry.report) return;
    const now = Date.now();
    entry.report = report;
    entry.endedAt = now;
    this.ended.set(callId, now);
    this.undeliveredIds.add(callId);
    const waiters = entry.waiters;
    entry.waiters = [];
    for (const w of waiters) w(report);
    this.prune(now);
  }

  private prune(now: number): void {
    for (const [callId, endedAt] of this.ended) {
      if (this.ended.size <= this.maxSettled && now - endedAt < this.retentionMs) break;
      this.ended.delete(callId);
      this.entries.delete(callId);
      this.undeliveredIds.delete(callId);
    }
  }
}
