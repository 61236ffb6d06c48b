/**
 * A link object's replica of its platform's hot cached tables (`shared/replication.ts`): the rows as the broker's
 * JSON text, kept by a snapshot and the ordered changes that follow it over the object's own broker link. Free of
 * Workers types, so it is tested in Node beside the broker's side.
 *
 * A read is answered here only while the replica is in sync (a whole snapshot landed and every frame since came in
 * order) and every table the read needs is replicated; otherwise `read` answers undefined and the call goes to the
 * broker as before. Answers are built from the same text the broker answers with, so they are the same bytes.
 */
import type { CachedList, CachedRecord } from '../../shared/catalog/answer.js';
import type { Operation } from '../../shared/catalog/operation.js';
import type { CallResult } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import { REPLICATED_TABLES, type ReplicaFrame } from '../../shared/replication.js';
import { NOT_FOUND_CODE } from '../../shared/resultCodes.js';
import { parsePosition, positionText, reached, type Position } from '../../shared/positions.js';
import type { PagingResult } from '../../shared/frames.js';
import { base64url } from 'jose';
import { MemoryTable, StoredTable, type ReplicaSql, type ReplicaTable } from './replicaTables.js';

/** How a catalog entry is answered from a replica, when it can be. */
export type ReplicaPlan =
  | { kind: 'record'; family: Family; tables: string[]; key: string; what: string; field?: string }
  | { kind: 'list'; family: Family; table: string; paged: boolean };

/**
 * The plan of an entry answered from the cache by a record key, or as a whole unfiltered, unpaged list, on tables the
 * family replicates; undefined for every other entry (forwarded as before).
 */
export function replicaPlan(entry: Operation): ReplicaPlan | undefined {
  const family = entry.family;
  if ((family !== 'PF4' && family !== 'PF5') || entry.read !== 'cached' || entry.mutating) return undefined;
  const hot = REPLICATED_TABLES[family];
  const answer = entry.answer as
    | CachedRecord<Record<string, unknown>>
    | CachedList<Record<string, unknown>>
    | { kind: string }
    | undefined;
  if (answer?.kind === 'cachedRecord') {
    const a = answer as CachedRecord<Record<string, unknown>>;
    const tables = [a.table, ...(a.orIn ?? [])];
    if (!tables.every((t) => hot.includes(t))) return undefined;
    return {
      kind: 'record',
      family,
      tables,
      key: a.key,
      what: a.what,
      ...(a.field !== undefined ? { field: a.field } : {}),
    };
  }
  if (answer?.kind === 'cachedList') {
    const a = answer as CachedList<Record<string, unknown>>;
    // A paged list pages by the table's key (the broker's interpreter refuses any other at its start).
    if (a.index || a.where || !hot.includes(a.table)) return undefined;
    return { kind: 'list', family, table: a.table, paged: !!entry.paged };
  }
  return undefined;
}

export interface ReplicaStats {
  /** A whole snapshot landed and every frame since came in order. */
  inSync: boolean;
  /** Rows per replicated table. */
  tables: Record<string, number>;
  /** Characters of row JSON held in memory. */
  chars: number;
  /** Tables whose rows are in the object's storage (grown past the memory bound). */
  stored: string[];
  /** Reads answered from the replica. */
  answered: number;
  /** Snapshots taken in (the first and every resync). */
  snapshots: number;
  /** Times the replica fell out of sync (a gap in the frames, a stop, the link's loss). */
  lost: number;
  /** How far the replica has come in the platform's change stream (`<epoch>-<count>`), or null when not known. */
  position: string | null;
}

export class EdgeReplica {
  private rep = -1;
  private nextSeq = 0;
  private snapshotting = false;
  private synced = false;
  private readonly tables = new Map<string, ReplicaTable>();
  /** Whether the storage table holds rows to empty before the next snapshot. */
  private storageUsed = false;
  /** The cache's position the replica reflects, from the last `end` or `changes` frame that named one. */
  private at: Position | undefined;
  /** Reads waiting for the replica to reach a position: each settles true once it does, false when it falls out of sync. */
  private waiters: Array<{ wanted: Position; settle: (ok: boolean) => void }> = [];
  answered = 0;
  snapshots = 0;
  lost = 0;

  /**
   * `maxRows` bounds a table held in memory; with `sql` (the object's storage), a table keyed by integers that grows
   * past it moves there, up to `storedRows`; any other table past its bound leaves the replica (its reads go to the
   * broker).
   */
  constructor(
    readonly family: Family,
    readonly maxRows: number,
    private readonly storage?: { sql: ReplicaSql; storedRows: number },
  ) {
    if (storage) StoredTable.reset(storage.sql);
  }

  /** The bound the broker is asked for: tables larger than any this replica can hold are not sent. */
  get askRows(): number {
    return this.storage ? Math.max(this.maxRows, this.storage.storedRows) : this.maxRows;
  }

  get inSync(): boolean {
    return this.synced;
  }

  /** The position the replica reflects while in sync; undefined out of sync or when the broker names none. */
  get position(): Position | undefined {
    return this.synced ? this.at : undefined;
  }

  /** Whether the replica is in sync and has reached `wanted`. */
  hasReached(wanted: Position): boolean {
    return this.synced && this.at !== undefined && reached(this.at, wanted);
  }

  /**
   * Resolves true once the replica reaches `wanted`, false if it has not within `waitMs` or falls out of sync first
   * (the read then goes to the broker).
   */
  whenReached(wanted: Position, waitMs: number): Promise<boolean> {
    if (this.hasReached(wanted)) return Promise.resolve(true);
    if (!this.synced || waitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        wanted,
        settle: (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, waitMs);
      this.waiters.push(waiter);
    });
  }

  /** No replication asked for (never, or the last one ended): a new `#replicate` is due. */
  get idle(): boolean {
    return this.rep < 0;
  }

  /** Still waiting for the snapshot of replication `rep`. */
  awaiting(rep: number): boolean {
    return this.rep === rep && !this.synced;
  }

  /** A `#replicate` with this `rep` was sent: everything held is forgotten until its snapshot lands. */
  expect(rep: number): void {
    this.clear();
    this.rep = rep;
    this.nextSeq = 0;
  }

  /** The link dropped (or the replication was refused): out of sync until a new replication's snapshot. */
  reset(): void {
    if (this.synced || this.snapshotting) this.lost++;
    this.clear();
    this.rep = -1;
  }

  /**
   * Takes one pushed frame. Answers false when the replica fell out of sync (a frame out of order, a stop): the caller
   * asks for a new replication; frames of another replication are ignored.
   */
  apply(frame: ReplicaFrame): boolean {
    if (frame.rep !== this.rep || this.rep < 0) return true;
    if (frame.seq !== this.nextSeq) {
      this.reset();
      return false;
    }
    this.nextSeq++;
    if ('begin' in frame) {
      this.clear();
      this.snapshotting = true;
      for (const name of frame.begin.tables)
        if (REPLICATED_TABLES[this.family].includes(name)) this.tables.set(name, new MemoryTable());
    } else if ('rows' in frame) {
      if (!this.snapshotting) return this.outOfOrder();
      const table = this.tables.get(frame.table);
      if (!table) return true;
      for (const [key, json] of frame.rows) table.load(key, json);
      this.bound(frame.table, table);
    } else if ('end' in frame) {
      if (!this.snapshotting) return this.outOfOrder();
      this.snapshotting = false;
      this.synced = true;
      this.snapshots++;
      this.advance(frame.pos);
    } else if ('changes' in frame) {
      // A snapshot sent a part at a time ends with the changes made while it went out, before its `end`.
      if (!this.synced && !this.snapshotting) return this.outOfOrder();
      for (const [name, key, json] of frame.changes) {
        const table = this.tables.get(name);
        if (!table) continue;
        if (json === null) table.delete(key);
        else table.put(key, json);
        this.bound(name, table);
      }
      if (this.synced) this.advance(frame.pos);
    } else if ('drop' in frame) {
      this.tables.get(frame.drop)?.drop();
      this.tables.delete(frame.drop);
    } else if ('stop' in frame) {
      this.reset();
      return false;
    }
    return true;
  }

  /**
   * The answer of a call from the replica, as the broker would give it (`CallResult`, with `data` as JSON text), or
   * undefined when the replica cannot answer it now.
   */
  read(
    plan: ReplicaPlan,
    args: Record<string, unknown>,
  ): ({ ok: true; dataJson: string; paging?: PagingResult } | Extract<CallResult, { ok: false }>) | undefined {
    if (!this.synced) return undefined;
    if (plan.kind === 'list') {
      const table = this.tables.get(plan.table);
      if (!table) return undefined;
      if (plan.paged) return this.readPage(table, args);
      const whole = table.listJson();
      if (whole === undefined) return undefined;
      this.answered++;
      return { ok: true, dataJson: whole };
    }
    const key = args[plan.key];
    if (typeof key !== 'number' && typeof key !== 'string') return undefined;
    const tables: ReplicaTable[] = [];
    for (const name of plan.tables) {
      const table = this.tables.get(name);
      if (!table) return undefined;
      tables.push(table);
    }
    let dataJson: string | undefined;
    for (const table of tables) {
      dataJson = plan.field === undefined ? table.get(key) : table.member(key, plan.field);
      if (dataJson !== undefined) break;
    }
    this.answered++;
    if (dataJson === undefined) {
      return {
        ok: false,
        error: { code: 'NotFound', managerCode: NOT_FOUND_CODE[plan.family], message: `${plan.what} ${key} not found` },
      };
    }
    return { ok: true, dataJson };
  }

  /**
   * A page of a list as the broker pages it (`broker/handlers/paging.ts`): `limit` and the cursor of the last key
   * sent. A cursor the replica cannot judge exactly as the broker would (not in the broker's own encoding, a key of
   * another type than the table's) and a whole stored table are left to the broker.
   */
  private readPage(table: ReplicaTable, args: Record<string, unknown>) {
    const limit = typeof args.limit === 'number' && args.limit > 0 ? Math.floor(args.limit) : undefined;
    if (limit === undefined && table.stored) return undefined;
    let after: number | string | undefined;
    if (typeof args.cursor === 'string' && args.cursor !== '') {
      after = cursorKey(args.cursor);
      if (after === undefined) return undefined;
      const type = table.keyType();
      if (type !== undefined && typeof after !== type) return undefined;
    }
    const page = table.page(after, limit);
    this.answered++;
    return {
      ok: true as const,
      dataJson: `[${page.rows.join(',')}]`,
      paging: {
        nextCursor: page.hasMore && page.lastKey !== undefined ? encodeCursor(page.lastKey) : null,
        hasMore: page.hasMore,
      },
    };
  }

  stats(): ReplicaStats {
    const tables: Record<string, number> = {};
    const stored: string[] = [];
    let chars = 0;
    for (const [name, t] of this.tables) {
      tables[name] = t.size;
      chars += t.chars;
      if (t.stored) stored.push(name);
    }
    return {
      inSync: this.synced,
      tables,
      chars,
      stored,
      answered: this.answered,
      snapshots: this.snapshots,
      lost: this.lost,
      position: this.position ? positionText(this.position) : null,
    };
  }

  /** Takes a frame's position and settles the reads waiting for one it reached. */
  private advance(text: string | undefined): void {
    const pos = parsePosition(text);
    if (pos === null) return;
    this.at = pos;
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (reached(pos, w.wanted)) w.settle(true);
      else still.push(w);
    }
    this.waiters = still;
  }

  /**
   * Keeps a table within its bound: past the memory bound it moves to storage when it can (keys all integers, storage
   * given, within `storedRows`), else it leaves the replica and its reads go to the broker.
   */
  private bound(name: string, table: ReplicaTable): void {
    if (table.size <= this.maxRows) return;
    const storage = this.storage;
    if (storage && table.size <= storage.storedRows) {
      if (table.stored) return;
      if (table instanceof MemoryTable && table.integerKeyed()) {
        this.storageUsed = true;
        this.tables.set(name, StoredTable.from(storage.sql, name, table));
        table.drop();
        return;
      }
    }
    table.drop();
    this.tables.delete(name);
  }

  private outOfOrder(): boolean {
    this.reset();
    return false;
  }

  private clear(): void {
    if (this.storageUsed && this.storage) StoredTable.reset(this.storage.sql);
    this.storageUsed = false;
    this.tables.clear();
    this.snapshotting = false;
    this.synced = false;
    this.at = undefined;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w.settle(false);
  }
}

/** A cursor as the broker writes it: the base64url of the JSON of the last key. */
export function encodeCursor(key: number | string): string {
  return base64url.encode(JSON.stringify(key));
}

/**
 * The key a cursor names when it is exactly as the broker would write it for a key it can page by (a non-negative
 * safe integer, or text); undefined for anything else, which the broker then judges (refusing a tampered one).
 */
export function cursorKey(cursor: string): number | string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(base64url.decode(cursor)));
  } catch {
    return undefined;
  }
  const key =
    typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)
      ? value
      : undefined;
  return key !== undefined && encodeCursor(key) === cursor ? key : undefined;
}
