/**
 * The pumping cache of one trade platform: the records the manager session's change stream keeps current, from which
 * the "Get" operations are answered without a round trip to the trading server.
 *
 * Every (re)login is followed by a full resync: `begin` starts fresh tables beside the live ones, `chunk`s fill them,
 * and `end` swaps them in with one assignment, so a read sees either the whole old snapshot or the whole new one,
 * never a half-filled table. With `sliceRows` the events are applied in turns of the event loop of that many rows at
 * most: a large chunk is applied in slices, and the events that arrive meanwhile wait their turn behind it, so timers
 * and sockets (the edge links' heartbeats) are served between slices and nothing is applied out of order. Until the first resync completes there is nothing to answer from; reads wait for it
 * (bounded by their deadline) rather than answer not-found from an empty cache. Tables the snapshot does not carry
 * (recently closed trades, news bodies) live across resyncs instead. A cold standby that logs out empties the whole
 * cache (`reset`): it is not ready again until the snapshot of its next login.
 *
 * Some tables are derived at ingestion rather than sent as they are: a group's securities come out of its record,
 * the `margin` kind fills `margins`, a closing trade moves to `closedTrades`, and each tick moves its symbol's summary
 * (`symbolInfo`). Every read is a key lookup, an index bucket or a page of one table.
 */
import {
  CHANGE_KINDS,
  type ChangeKind,
  type Family,
  type ManagerEvent,
  type ResyncChunk,
} from '../../shared/protocol.js';
import { shapeRecord } from '../../shared/records/shape.js';
import { KeyedTable, type CacheKey } from './keyedTable.js';

export type Row = Record<string, unknown>;

/** One kind of cached record: its identity field, the contract record it is kept as, and its secondary indexes. */
export interface KindSpec {
  key: string;
  /** Contract record the rows are shaped to on arrival (every field present, secrets null), so reads answer as is. */
  schema?: string;
  /** How rows that are not one contract record are kept (a key beside contract records). */
  shape?: (row: Row) => Row;
  /** Secondary indexes: index name → the field it groups rows by. */
  indexes?: Record<string, string>;
  /**
   * Not part of a resync snapshot: the table lives across resyncs and events change it at once, even while a resync
   * streams. At the end of a resync its rows that the new snapshot contradicts are dropped (a closed trade open again,
   * the body of a topic no longer listed).
   */
  carried?: boolean;
  /** Keeps only the newest `PumpCacheOptions.closedTradesLimit` rows by arrival. */
  bounded?: boolean;
  /**
   * Kept packed (`KeyedTable`): each row once, as its JSON text, beside its key's and indexes' fields and the fields
   * listed here (what the catalog's filters on the table read). For the large tables; the small ones that ticks
   * rewrite many times a second stay objects.
   */
  packed?: readonly string[];
}

const shapeSymbolGroup = shapeRecord('PF4SymbolGroup');
const shapeDaySessions = shapeRecord('PF4SymbolDaySessions[]');
const shapeSecGroups = shapeRecord('PF4GroupSec[]');
const shapeSecMargins = shapeRecord('PF4GroupMargin[]');

/** Kinds the cache holds per family, by table name. */
export const KINDS: Record<Family, Record<string, KindSpec>> = {
  PF4: {
    users: { key: 'login', schema: 'PF4User', packed: [] },
    trades: {
      key: 'order',
      schema: 'PF4Trade',
      indexes: { login: 'login', symbol: 'symbol' },
      packed: ['tradeCommand'],
    },
    ticks: { key: 'symbol', schema: 'PF4TickInfo' },
    symbols: { key: 'symbol' },
    /** Groups as GroupsGet answers them: the nested security arrays (and anything else outside PF4Group) dropped. */
    groups: { key: 'group', schema: 'PF4Group' },
    /**
     * `{group, secGroups: PF4GroupSec[32], secMargins: PF4GroupMargin[]}`, taken from the `secGroups` / `secMargins`
     * arrays of each group record as it arrives; `secMargins` holds only the first `secMarginsTotal` entries.
     */
    groupSecurities: { key: 'group' },
    /** One margin level per login with open trades or orders (event and resync kind `margin`). */
    margins: { key: 'login', schema: 'PF4MarginLevel', packed: [] },
    online: { key: 'login', schema: 'PF4Online' },
    /** News headers; the n-th topic is `table('news').at(n)` (keys grow with arrival). */
    news: { key: 'key', schema: 'PF4NewsTopic' },
    /** `{key, body}`: bodies pushed after NewsBodyRequest; not in the snapshot, kept while their topic is listed. */
    newsBodies: {
      key: 'key',
      carried: true,
      shape: (row) => ({ key: row.key, body: typeof row.body === 'string' ? row.body : '' }),
    },
    /** `{pos, name, description}`: the 32 security (symbol) group slots. */
    symbolGroups: { key: 'pos', shape: (row) => ({ pos: row.pos, ...(shapeSymbolGroup(row) as Row) }) },
    /** `{symbol, days: PF4SymbolDaySessions[7]}` of every configured symbol. */
    symbolSessions: { key: 'symbol', shape: (row) => ({ symbol: row.symbol, days: shapeDaySessions(row.days) }) },
    /** Recently closed and deleted trades (TradeRecordGet), the newest `closedTradesLimit` by arrival. */
    closedTrades: { key: 'order', schema: 'PF4Trade', carried: true, bounded: true, packed: [] },
    /** Symbol summaries of the active set, kept current from ticks and symbol changes. */
    symbolInfo: { key: 'symbol', schema: 'PF4SymbolInfo' },
  },
  PF5: {
    users: { key: 'login', schema: 'PF5User', packed: ['group'] },
    positions: { key: 'position', schema: 'PF5Position', indexes: { login: 'login' }, packed: ['symbol'] },
    orders: { key: 'order', schema: 'PF5Order', indexes: { login: 'login' }, packed: ['symbol'] },
    deals: { key: 'deal', schema: 'PF5Deal', indexes: { login: 'login' }, packed: ['symbol'] },
    ticks: { key: 'symbol' },
    symbols: { key: 'symbol', schema: 'PF5Symbol' },
    groups: { key: 'group', schema: 'PF5ConGroup' },
  },
};

/** Event and resync kinds whose table has another name. */
export const TABLE_OF_KIND: Readonly<Record<string, string>> = { margin: 'margins' };

/** Tables filled by the events of a kind of another name (derived at ingestion, or the kind's table renamed). */
const KIND_OF_TABLE: Readonly<Record<string, ChangeKind>> = {
  margins: 'margin',
  groupSecurities: 'groups',
  closedTrades: 'trades',
};

/**
 * The change-event kind whose events (and snapshot part) fill `table`: a read from the table holds something only when
 * the trading server pushes that kind (its login's `capabilities.events`).
 */
export function eventKindOf(table: string): ChangeKind {
  const kind = KIND_OF_TABLE[table] ?? table;
  if (!(CHANGE_KINDS as readonly string[]).includes(kind))
    throw new Error(`no change-event kind fills the cache table ${table}`);
  return kind;
}

export type Tables = Map<string, KeyedTable<Row>>;

export interface PumpCacheOptions {
  /** Recently closed or deleted PF4 trades kept for TradeRecordGet, the newest by arrival. Default 10 000. */
  closedTradesLimit?: number;
  /**
   * Now, in epoch milliseconds (default Date.now). It stamps `lastResyncAt` and dates a tick that carries no usable
   * time. A tick's own (server) time decides the day its price belongs to: high and low restart with the first tick
   * of a new UTC day, as the server's daily bar does.
   */
  clock?: () => number;
  /**
   * Rows applied in one turn of the event loop (an event other than a chunk counts as one); what is left waits for the
   * next turn (setImmediate), in order. Default: no bound, each event applied whole as it is given, as a cache filled
   * from a snapshot held in hand wants. A platform's cache fed by its manager session takes `STREAM_SLICE_ROWS`.
   */
  sliceRows?: number;
  /** Told each event once it is applied, in the order the events were given (the platform's feed and streams). */
  onApplied?: (event: ManagerEvent) => void;
}

/**
 * The rows a platform's cache applies per turn of the event loop: a turn of that many rows of the largest kinds stays
 * far below the edge link's heartbeat timeout on a loaded host (docs/perf/2026-12-01-broker-resync-stall.md).
 */
export const STREAM_SLICE_ROWS = 500;

/** An event waiting for its turn, with the rows of its chunk already applied; or the end of a resync cut short. */
type Step = { event: ManagerEvent; offset: number; done: boolean } | { abort: true; then?: () => void };

export const DEFAULT_CLOSED_TRADES_LIMIT = 10_000;
const DAY_MS = 86_400_000;
/** Symbol fields a symbol configuration change carries over to its summary; spread and prices follow the ticks. */
const INFO_FROM_SYMBOL = ['digits', 'type', 'point'] as const;

function keyReader(field: string): (row: Row) => CacheKey | undefined {
  return (row) => {
    const key = row[field];
    return typeof key === 'number' || typeof key === 'bigint' || typeof key === 'string' ? key : undefined;
  };
}

/** A PF4 trade that is no longer open leaves the open-trades table even if the server sends it as an update. */
export function isClosedTrade(row: Row): boolean {
  const state = row.tradeRecordState;
  return typeof state === 'string' && (state.startsWith('Closed') || state === 'Deleted');
}

function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : time;
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** Flat rows with the same fields and values. */
function sameRow(a: Row, b: Row): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.is(a[key], b[key]));
}

const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class PumpCache {
  private tables: Tables;
  private staging: Tables | null = null;
  private readyFlag = false;
  private readyWaiters: Array<() => void> = [];
  /** Symbols whose summary changed since the last takeUpdatedSymbols. */
  private updatedSymbols = new Set<string>();
  private readonly clock: () => number;
  private readonly closedTradesLimit: number;
  private readonly sliceRows: number;
  private readonly onApplied: ((event: ManagerEvent) => void) | undefined;
  /** Events given and not yet applied, in order, from `head` on. */
  private queue: Step[] = [];
  private head = 0;
  /** A turn is running or scheduled (`turn`): new events join the queue. */
  private draining = false;
  private turn: ReturnType<typeof setImmediate> | undefined;
  private settledWaiters: Array<() => void> = [];
  /** Completed resyncs, for tests and metrics. */
  resyncs = 0;
  lastResyncAt: string | null = null;

  constructor(
    readonly family: Family,
    options: PumpCacheOptions = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.closedTradesLimit = options.closedTradesLimit ?? DEFAULT_CLOSED_TRADES_LIMIT;
    if (options.sliceRows !== undefined && !(options.sliceRows >= 1))
      throw new RangeError('sliceRows must be at least 1');
    this.sliceRows = options.sliceRows ?? Number.POSITIVE_INFINITY;
    this.onApplied = options.onApplied;
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

  /** What a filter reads of a row: in a packed table its kept fields, without rebuilding the row (`KeyedTable.view`). */
  view(kind: string, key: CacheKey): Row | undefined {
    return this.tables.get(kind)?.view(key);
  }

  sizes(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [kind, table] of this.tables) out[kind] = table.size;
    return out;
  }

  /**
   * The names of the symbols whose `symbolInfo` row changed since the previous call, sorted by name (ordinal), and a
   * new set starts (SymbolInfoUpdated's flush). A row changes with a tick of its symbol, a symbol configuration change
   * that alters its digits, type or point, a row the server sends whole, and a resync that brings a different or a new
   * row; a symbol that leaves the active set (hidden or deleted) leaves the set too. Costs the size of the answer.
   */
  takeUpdatedSymbols(): string[] {
    const names = [...this.updatedSymbols].sort(ordinal);
    this.updatedSymbols = new Set();
    return names;
  }

  /**
   * Resolves once every event given so far is applied (at once when none waits). An event given meanwhile is waited
   * for too.
   */
  settled(): Promise<void> {
    if (!this.draining) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /**
   * Applies one frame of the change stream after those given before it: at once when none waits and it fits in a
   * turn (`sliceRows`), otherwise over the next turns of the event loop.
   */
  apply(event: ManagerEvent): void {
    this.queue.push({ event, offset: 0, done: false });
    if (!this.draining) this.drain();
  }

  /** One turn: the waiting events in order, up to `sliceRows` rows; what is left is scheduled for the next turn. */
  private drain(): void {
    this.turn = undefined;
    this.draining = true;
    let budget = this.sliceRows;
    let current: Step | undefined;
    try {
      while (this.head < this.queue.length && budget > 0) {
        current = this.queue[this.head];
        if ('abort' in current) {
          this.head++;
          this.staging = null;
          current.then?.();
          continue;
        }
        budget -= this.applyPart(current, budget);
        if (!current.done) break;
        this.head++;
        this.onApplied?.(current.event);
      }
    } catch (error) {
      // The event that failed is dropped; those after it keep their turn.
      if (current && this.queue[this.head] === current) this.head++;
      this.afterTurn();
      throw error;
    }
    this.afterTurn();
  }

  private afterTurn(): void {
    if (this.head < this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
      this.turn ??= setImmediate(() => this.drain());
      return;
    }
    this.queue = [];
    this.head = 0;
    this.draining = false;
    this.wakeSettled();
  }

  private wakeSettled(): void {
    const waiters = this.settledWaiters;
    this.settledWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Drops every event waiting for its turn (the cache is emptied or gone). */
  private dropQueue(): void {
    if (this.turn) clearImmediate(this.turn);
    this.turn = undefined;
    this.queue = [];
    this.head = 0;
    this.draining = false;
    this.wakeSettled();
  }

  /** Applies `step`, or the next `budget` rows of its chunk; the rows spent (an event other than a chunk costs one). */
  private applyPart(step: { event: ManagerEvent; offset: number; done: boolean }, budget: number): number {
    const { event } = step;
    if (event.event === 'resync' && event.op === 'chunk') return this.applyChunk(step, budget);
    step.done = true;
    this.applyWhole(event);
    return 1;
  }

  private applyWhole(event: ManagerEvent): void {
    if (event.event === 'resync') {
      this.applyResync(event);
      return;
    }
    const record = event.record as Row | null;
    if (!record || typeof record !== 'object' || Array.isArray(record)) return;
    if (event.op !== 'add' && event.op !== 'update' && event.op !== 'delete') return;
    // During a resync the change belongs to the snapshot being built; the live tables are about to be replaced.
    // Carried tables are the same objects in both, so their changes show at once.
    this.change(this.staging ?? this.tables, event.event, event.op, record, this.staging === null);
  }

  /**
   * The session dropped: a resync that was streaming will never end, so its partial tables are discarded, once the
   * events given before this are applied; `then` runs right after (at once when none waits).
   */
  abortResync(then?: () => void): void {
    if (!this.draining) {
      this.staging = null;
      then?.();
      return;
    }
    this.queue.push({ abort: true, then });
  }

  /**
   * A cold standby logged out: its records would go stale, so every table empties (carried ones too) and reads wait
   * for the snapshot of its next login.
   */
  reset(): void {
    this.dropQueue();
    this.staging = null;
    this.readyFlag = false;
    this.tables = this.emptyTables();
    this.updatedSymbols = new Set();
  }

  /** Called when the platform is removed: wakes readers so nothing waits on a cache that will never fill. */
  dispose(): void {
    this.dropQueue();
    this.staging = null;
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const wake of waiters) wake();
  }

  // ---- change events ---------------------------------------------------------------------------------------------

  private change(tables: Tables, kind: string, op: 'add' | 'update' | 'delete', record: Row, live: boolean): void {
    switch (kind) {
      case 'trades':
        this.tradeChange(tables, op, record);
        return;
      case 'groups':
        this.groupChange(tables, op, record);
        return;
      case 'ticks':
        this.tickChange(tables, op, record, live);
        return;
      case 'symbols':
        this.symbolChange(tables, op, record, live);
        return;
    }
    const name = TABLE_OF_KIND[kind] ?? kind;
    const table = tables.get(name);
    if (!table) return; // a kind this cache does not keep (mail, ...)
    if (op === 'delete') this.deleteByRecord(table, record);
    else table.put(this.clean(name, record));
    // A news item the server dropped takes its fetched body with it.
    const bodies = name === 'news' && op === 'delete' ? tables.get('newsBodies') : undefined;
    if (bodies) this.deleteByRecord(bodies, record);
    if (name === 'symbolInfo' && live && typeof record.symbol === 'string') {
      if (op === 'delete') this.updatedSymbols.delete(record.symbol);
      else this.updatedSymbols.add(record.symbol);
    }
  }

  /**
   * Open trades, and the recently closed: a delete (which carries the final record) or an update in a closed state
   * moves the trade from the open trades to the closed ones; a trade open again (a rolled-back close) leaves them.
   */
  private tradeChange(tables: Tables, op: string, record: Row): void {
    const open = tables.get('trades');
    const closed = tables.get('closedTrades');
    if (!open) return;
    if (op === 'delete' || isClosedTrade(record)) {
      this.deleteByRecord(open, record);
      // A delete carrying the key alone says nothing about how the trade ended.
      if (closed && isClosedTrade(record)) closed.put(this.clean('closedTrades', record));
      return;
    }
    open.put(this.clean('trades', record));
    if (closed) this.deleteByRecord(closed, record);
  }

  /** A group record also carries its securities; they are taken out into their own table before it is shaped. */
  private groupChange(tables: Tables, op: string, record: Row): void {
    const groups = tables.get('groups');
    const securities = tables.get('groupSecurities');
    if (!groups) return;
    if (op === 'delete') {
      this.deleteByRecord(groups, record);
      if (securities) this.deleteByRecord(securities, record);
      return;
    }
    groups.put(this.clean('groups', record));
    if (securities) {
      const row = securitiesOf(record, securities.get(record.group as CacheKey));
      if (row) securities.put(row);
    }
  }

  private tickChange(tables: Tables, op: string, record: Row, live: boolean): void {
    const ticks = tables.get('ticks');
    if (!ticks) return;
    if (op === 'delete') {
      this.deleteByRecord(ticks, record);
      return;
    }
    ticks.put(this.clean('ticks', record));
    const info = tables.get('symbolInfo');
    if (!info || typeof record.symbol !== 'string') return;
    const previous = info.get(record.symbol);
    if (!previous || !finite(record.bid) || !finite(record.ask)) return;
    info.put(this.afterTick(previous, record));
    if (live) this.updatedSymbols.add(record.symbol);
  }

  /**
   * A symbol summary moved by one tick: prices, spread in points, time, the direction against the previous tick (None
   * when that tick is more than a day older), and the day's high and low of the bid, restarted by the first tick of a
   * new (UTC) day.
   */
  private afterTick(previous: Row, tick: Row): Row {
    const bid = tick.bid as number;
    const ask = tick.ask as number;
    let time = timeOf(tick.time);
    const lastTime = time === undefined ? new Date((time = this.clock())).toISOString() : (tick.time as string);
    const before = timeOf(previous.lastTime);
    const prevBid = previous.bid as number;
    const recent = before !== undefined && before <= time && before >= time - DAY_MS && finite(prevBid);
    const direction = !recent || bid === prevBid ? 'None' : bid > prevBid ? 'Up' : 'Down';
    const sameDay = before !== undefined && Math.floor(before / DAY_MS) === Math.floor(time / DAY_MS);
    const high = sameDay && finite(previous.high) ? Math.max(previous.high, bid) : bid;
    const low = sameDay && finite(previous.low) ? Math.min(previous.low, bid) : bid;
    const point = previous.point;
    const spread = finite(point) && point > 0 ? Math.round((ask - bid) / point) : previous.spread;
    return { ...previous, spread, direction, bid, ask, high, low, lastTime };
  }

  /** The symbols table follows the active set; a summary takes the symbol's digits, type and point and leaves with it. */
  private symbolChange(tables: Tables, op: string, record: Row, live: boolean): void {
    const symbols = tables.get('symbols');
    if (!symbols) return;
    const info = tables.get('symbolInfo');
    const name = typeof record.symbol === 'string' ? record.symbol : undefined;
    if (op === 'delete') {
      this.deleteByRecord(symbols, record);
      if (info && name !== undefined) {
        info.delete(name);
        this.updatedSymbols.delete(name);
      }
      return;
    }
    symbols.put(this.clean('symbols', record));
    const previous = info && name !== undefined ? info.get(name) : undefined;
    if (!previous) return;
    const next: Row = { ...previous };
    for (const field of INFO_FROM_SYMBOL) if (finite(record[field])) next[field] = record[field];
    if (sameRow(previous, next)) return;
    info!.put(next);
    if (live) this.updatedSymbols.add(name!);
  }

  // ---- resync ----------------------------------------------------------------------------------------------------

  private applyResync(event: ManagerEvent): void {
    switch (event.op) {
      case 'begin':
        this.staging = this.emptyTables(this.tables);
        break;
      case 'end': {
        if (!this.staging) return;
        const next = this.staging;
        this.staging = null;
        this.reconcileCarried(next);
        this.noteChangedSummaries(this.tables, next);
        this.tables = next;
        this.resyncs++;
        this.lastResyncAt = new Date(this.clock()).toISOString();
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

  /** The next `budget` rows of a snapshot chunk from `step.offset`; the rows spent. */
  private applyChunk(step: { event: ManagerEvent; offset: number; done: boolean }, budget: number): number {
    const chunk = step.event.record as ResyncChunk | null;
    // A chunk without its begin (or whose resync was cut short) is ignored rather than mixed into another snapshot.
    if (!this.staging || !chunk || !Array.isArray(chunk.items)) {
      step.done = true;
      return 0;
    }
    const { items } = chunk;
    const from = step.offset;
    const to = Math.min(items.length, from + budget);
    for (let i = from; i < to; i++) {
      const item = items[i];
      if (item && typeof item === 'object' && !Array.isArray(item))
        this.snapshotRow(this.staging, chunk.kind, item as Row);
    }
    step.offset = to;
    step.done = to >= items.length;
    return to - from;
  }

  /** One row of a snapshot: as it is, nothing derived (the snapshot's own rows are the truth). */
  private snapshotRow(tables: Tables, kind: string, row: Row): void {
    if (kind === 'trades') {
      const table = tables.get(isClosedTrade(row) ? 'closedTrades' : 'trades');
      table?.put(this.clean(isClosedTrade(row) ? 'closedTrades' : 'trades', row));
      return;
    }
    if (kind === 'groups') {
      this.groupChange(tables, 'add', row);
      return;
    }
    const name = TABLE_OF_KIND[kind] ?? kind;
    tables.get(name)?.put(this.clean(name, row));
  }

  /** Rows of the carried tables the new snapshot contradicts: closed trades it has open, bodies of topics it lacks. */
  private reconcileCarried(next: Tables): void {
    const open = next.get('trades');
    const closed = next.get('closedTrades');
    if (open && closed) {
      for (const key of [...closed.keys()]) if (open.has(key)) closed.delete(key);
    }
    const news = next.get('news');
    const bodies = next.get('newsBodies');
    if (news && bodies) {
      for (const key of [...bodies.keys()]) if (!news.has(key)) bodies.delete(key);
    }
  }

  /** The symbols a resync changed count as updated; those it no longer has leave the set. */
  private noteChangedSummaries(previous: Tables, next: Tables): void {
    const before = previous.get('symbolInfo');
    const after = next.get('symbolInfo');
    if (!before || !after) return;
    for (const row of after.values()) {
      const name = row.symbol;
      if (typeof name !== 'string') continue;
      const old = before.get(name);
      if (!old || !sameRow(old, row)) this.updatedSymbols.add(name);
    }
    for (const name of [...this.updatedSymbols]) if (!after.get(name)) this.updatedSymbols.delete(name);
  }

  private deleteByRecord(table: KeyedTable<Row>, record: Row): void {
    const key = table.keyOf(record);
    if (key !== undefined) table.delete(key);
  }

  /** The record as the contract has it: shaped once on arrival, so every read answers it without more work. */
  private clean(kind: string, row: Row): Row {
    const spec = KINDS[this.family][kind];
    if (spec?.shape) return spec.shape(row);
    return spec?.schema ? (shapeRecord(spec.schema)(row) as Row) : row;
  }

  /** Fresh tables; with `carry`, the carried tables are taken over from it rather than made afresh. */
  private emptyTables(carry?: Tables): Tables {
    const tables: Tables = new Map();
    for (const [kind, spec] of Object.entries(KINDS[this.family])) {
      const kept = spec.carried ? carry?.get(kind) : undefined;
      if (kept) {
        tables.set(kind, kept);
        continue;
      }
      const fields = spec.packed && [...new Set([spec.key, ...Object.values(spec.indexes ?? {}), ...spec.packed])];
      const table = new KeyedTable<Row>(keyReader(spec.key), spec.bounded ? this.closedTradesLimit : undefined, fields);
      for (const [name, field] of Object.entries(spec.indexes ?? {})) table.addIndex(name, keyReader(field));
      tables.set(kind, table);
    }
    return tables;
  }
}

/**
 * The securities row of a group record: its 32 security entries and its in-use margin overrides (the first
 * `secMarginsTotal`), each as the contract has it. An array the record lacks keeps what `previous` had.
 */
function securitiesOf(record: Row, previous: Row | undefined): Row | undefined {
  const group = record.group;
  if (typeof group !== 'string') return undefined;
  const total = record.secMarginsTotal;
  let margins = record.secMargins;
  if (Array.isArray(margins) && finite(total)) margins = margins.slice(0, Math.max(0, total));
  return {
    group,
    secGroups: Array.isArray(record.secGroups) ? shapeSecGroups(record.secGroups) : (previous?.secGroups ?? []),
    secMargins: Array.isArray(margins) ? shapeSecMargins(margins) : (previous?.secMargins ?? []),
  };
}
