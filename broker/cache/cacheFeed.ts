/**
 * What changed in a platform's pumping cache, event by event, for edge replicas (`broker/link/edgeReplication.ts`).
 *
 * The feed is told each manager event after the cache applied it. It does not carry rows: it names the rows an event
 * may have touched (the event's own table and the tables the cache derives from it: a tick moves its symbol's summary,
 * a group record its securities, a symbol change its summary) and the listener reads their current value from the
 * cache, so a row the event left alone is sent again unchanged rather than ever missed. A completed resync swaps every
 * table at once: listeners are told to send a whole new snapshot.
 */
import type { Family, ManagerEvent } from '../../shared/protocol.js';
import { KINDS, type Row } from './pumpCache.js';
import type { CacheKey } from './keyedTable.js';
import { ListenerSet } from '../../shared/listenerSet.js';
import { positionText, type Position } from '../../shared/positions.js';

export interface CacheListener {
  /** A row of `table` may have changed (or gone). */
  changed(table: string, key: CacheKey): void;
  /** A resync was swapped in: every table may differ. */
  resynced(): void;
  /** The platform is gone. */
  closed(): void;
}

/** Tables a change event of each kind touches, besides the one named like the kind (mirrors PumpCache's routing). */
const TOUCHED: Readonly<Record<string, readonly string[]>> = {
  trades: ['trades', 'closedTrades'],
  groups: ['groups', 'groupSecurities'],
  ticks: ['ticks', 'symbolInfo'],
  symbols: ['symbols', 'symbolInfo'],
  margin: ['margins'],
};

export class CacheFeed {
  private readonly listeners = new ListenerSet<CacheListener>();
  /**
   * How far the cache has come (`shared/positions.ts`): the epoch of its current snapshot and the change events
   * applied since; undefined before its first snapshot. A resync's events before its `end` are applied to the tables
   * being built, not to the ones answering, so the position moves to a new epoch only when the new tables are
   * swapped in.
   */
  private at: Position | undefined;

  constructor(readonly family: Family) {}

  listen(listener: CacheListener): () => void {
    return this.listeners.listen(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** The cache's position now; undefined before its first snapshot. */
  position(): Position | undefined {
    return this.at;
  }

  /** The position as frames carry it (`<epoch>-<count>`); undefined before the first snapshot. */
  positionText(): string | undefined {
    return this.at !== undefined ? positionText(this.at) : undefined;
  }

  /** One event of the change stream, after `PumpCache.apply` took it. */
  afterEvent(event: ManagerEvent): void {
    if (event.event === 'resync') {
      if (event.op === 'end') {
        // A new epoch for every snapshot, later than the last one even if the clock did not move.
        this.at = { epoch: Math.max(Date.now(), (this.at?.epoch ?? 0) + 1), count: 0 };
        this.listeners.each((l) => l.resynced());
      }
      return;
    }
    if (this.at !== undefined) this.at = { epoch: this.at.epoch, count: this.at.count + 1 };
    if (this.listeners.size === 0) return;
    const record = event.record as Row | null;
    if (!record || typeof record !== 'object') return;
    const kinds = KINDS[this.family];
    for (const table of TOUCHED[event.event] ?? [event.event]) {
      const spec = kinds[table];
      if (!spec) continue;
      const key = record[spec.key];
      if (typeof key !== 'number' && typeof key !== 'string') continue;
      this.listeners.each((l) => l.changed(table, key));
    }
  }

  close(): void {
    for (const l of this.listeners.clear()) l.closed();
  }
}
