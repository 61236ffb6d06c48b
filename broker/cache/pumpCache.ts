/**
 * The pumping cache of one trade platform: the records the manager session's change stream keeps current, from which
 * the "Get" operations are answered without a round trip to the trading server.
 *
 * Every (re)login is followed by a full resync: `begin` starts fresh tables beside the live ones, `chunk`s fill them,
 * and `end` swaps them in with one assignment, so a read sees either the whole old snapshot or the whole new one,
 * never a half-filled table. Until the first resync completes there is nothing to answer from; reads wait for it
 * (bounded by their deadline) rather than answer not-found from an empty cache.
 */
import type { Family, ManagerEvent, ResyncChunk } from '../../shared/protocol.js';
import { shapeRecord } from '../../shared/records/shape.js';
import { KeyedTable, type CacheKey } from './keyedTable.js';

export type Row = Record<string, unknown>;

/** One kind of cached record: its identity field, the contract record it is kept as, and its secondary indexes. */
export interface KindSpec {
  key: string;
  /** Contract record the rows are shaped to on arrival (every field present, secrets null), so reads answer as is. */
  schema?: string;
  /** Secondary indexes: index name → the field it groups rows by. */
  indexes?: Record<string, string>;
}

/** Kinds the cache holds per family. */
export const KINDS: Record<Family, Record<string, KindSpec>> = {
  PF4: {
    users: { key: 'login', schema: 'PF4User' },
    trades: { key: 'order', schema: 'PF4Trade', indexes: { login: 'login', symbol: 'symbol' } },
    ticks: { key: 'symbol', schema: 'PF4TickInfo' },
    symbols: { key: 'symbol' },
    groups: { key: 'group' },
  },
  PF5: {
    users: { key: 'login', schema: 'PF5User' },
    positions: { key: 'position', schema: 'PF5Position', indexes: { login: 'login' } },
    orders: { key: 'order', schema: 'PF5Order', indexes: { login: 'login' } },
    deals: { key: 'deal', schema: 'PF5Deal', indexes: { login: 'login' } },
    ticks: { key: 'symbol' },
    symbols: { key: 'symbol', schema: 'PF5Symbol' },
    groups: { key: 'group', schema: 'PF5ConGroup' },
  },
};

export type Tables = Map<string, KeyedTable<Row>>;

function keyReader(field: string): (row: Row) => CacheKey | undefined {
  return (row) => {
    const key = row[field];
    return typeof key === 'number' || typeof key === 'string' ? key : undefined;
  };
}

/** A PF4 trade that is no longer open leaves the open-trades table even if the server sends it as an update. */
function isClosedTrade(row: Row): boolean {
  const state = row.tradeRecordState;
  return typeof state === 'string' && (state.startsWith('Closed') || state === 'Deleted');
}

export class PumpCache {
  private tables: Tables;
  private staging: Tables | null = null;
  private readyFlag = false;
  private readyWaiters: Array<() => void> = [];
  /** Completed resyncs, for tests and metrics. */
  resyncs = 0;
  lastResyncAt: string | null = null;

  constructor(readonly family: Family) {
    this.tables = this.emptyTables();
  }

  /** True once the first resync has been swapped in. */
  get ready(): boolean {
    return this.readyFlag;
  }

  /** Resolves once the cache holds a complete snapshot (at once if it already does). */
  whenReady(): Promise<void> {
    if (this.readyFlag) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  table(kind: string): KeyedTable<Row> | undefined {
    return this.tables.get(kind);
  }

  get(kind: string, key: CacheKey): Row | undefined {
    return this.tables.get(kind)?.get(key);
  }

  sizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [kind, table] of this.tables) out[kind] = table.size;
    return out;
  }

  /** Applies one frame of the change stream. */
  apply(event: ManagerEvent): void {
    if (event.event === 'resync') {
      this.applyResync(event);
      return;
    }
    // During a resync the change belongs to the snapshot being built; the live tables are about to be replaced.
    const target = (this.staging ?? this.tables).get(event.event);
    if (!target) return; // a kind this cache does not keep (online, margin, news, ...)
    const record = event.record as Row | null;
    if (!record || typeof record !== 'object') return;
    switch (event.op) {
      case 'add':
      case 'update':
        if (event.event === 'trades' && isClosedTrade(record)) this.deleteByRecord(target, record);
        else target.put(this.clean(event.event, record));
        break;
      case 'delete':
        this.deleteByRecord(target, record);
        break;
    }
  }

  /** The session dropped: a resync that was streaming will never end, so its partial tables are discarded. */
  abortResync(): void {
    this.staging = null;
  }

  /** Called when the platform is removed: wakes readers so nothing waits on a cache that will never fill. */
  dispose(): void {
    this.staging = null;
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const wake of waiters) wake();
  }

  private applyResync(event: ManagerEvent): void {
    switch (event.op) {
      case 'begin':
        this.staging = this.emptyTables();
        break;
      case 'chunk': {
        if (!this.staging) return; // a chunk without its begin: ignore rather than mix snapshots
        const chunk = event.record as ResyncChunk | null;
        const table = chunk && Array.isArray(chunk.items) ? this.staging.get(chunk.kind) : undefined;
        if (!table) return;
        for (const item of chunk!.items) {
          if (item && typeof item === 'object') {
            const row = item as Row;
            if (chunk!.kind === 'trades' && isClosedTrade(row)) continue;
            table.put(this.clean(chunk!.kind, row));
          }
        }
        break;
      }
      case 'end': {
        if (!this.staging) return;
        this.tables = this.staging;
        this.staging = null;
        this.resyncs++;
        this.lastResyncAt = new Date().toISOString();
        if (!this.readyFlag) {
          this.readyFlag = true;
          const waiters = this.readyWaiters;
          this.readyWaiters = [];
          for (const wake of waiters) wake();
        }
        break;
      }
    }
  }

  private deleteByRecord(table: KeyedTable<Row>, record: Row): void {
    const key = table.keyOf(record);
    if (key !== undefined) table.delete(key);
  }

  /** The record as the contract has it: shaped once on arrival, so every read answers it without more work. */
  private clean(kind: string, row: Row): Row {
    const schema = KINDS[this.family][kind]?.schema;
    return schema ? (shapeRecord(schema)(row) as Row) : row;
  }

  private emptyTables(): Tables {
    const tables: Tables = new Map();
    for (const [kind, spec] of Object.entries(KINDS[this.family])) {
      const table = new KeyedTable<Row>(keyReader(spec.key));
      for (const [name, field] of Object.entries(spec.indexes ?? {})) table.addIndex(name, keyReader(field));
      tables.set(kind, table);
    }
    return tables;
  }
}
