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
import { REPLICATED_TABLES, type ReplicaFrame, type ReplicaKey } from '../../shared/replication.js';
import { NOT_FOUND_CODE } from '../../shared/resultCodes.js';
import { parsePosition, positionText, reached, type Position } from '../../shared/positions.js';

/** How a catalog entry is answered from a replica, when it can be. */
export type ReplicaPlan =
  | { kind: 'record'; family: Family; tables: string[]; key: string; what: string; field?: string }
  | { kind: 'list'; family: Family; table: string };

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
    if (a.index || a.where || entry.paged || !hot.includes(a.table)) return undefined;
    return { kind: 'list', family, table: a.table };
  }
  return undefined;
}

interface Entry {
  json: string;
  /** JSON of members answered on their own (a group's securities), made on first read. */
  members?: Map<string, string>;
}

class ReplicaTable {
  readonly rows = new Map<ReplicaKey, Entry>();
  /** Characters of row JSON held (the replica's memory is about twice this: UTF-16 strings and the maps). */
  chars = 0;
  private list: string | undefined;

  put(key: ReplicaKey, json: string): void {
    const previous = this.rows.get(key);
    if (previous) this.chars -= previous.json.length;
    this.rows.set(key, { json });
    this.chars += json.length;
    this.list = undefined;
  }

  delete(key: ReplicaKey): void {
    const previous = this.rows.get(key);
    if (!previous) return;
    this.chars -= previous.json.length;
    this.rows.delete(key);
    this.list = undefined;
  }

  /** Every row in key order (numbers numerically, text by code unit, as the broker's tables order them). */
  listJson(): string {
    if (this.list === undefined) {
      const keys = [...this.rows.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      let out = '[';
      for (let i = 0; i < keys.length; i++) out += (i ? ',' : '') + this.rows.get(keys[i])!.json;
      this.list = `${out}]`;
    }
    return this.list;
  }
}

export interface ReplicaStats {
  /** A whole snapshot landed and every frame since came in order. */
  inSync: boolean;
  /** Rows per replicated table. */
  tables: Record<string, number>;
  /** Characters of row JSON held. */
  chars: number;
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
  /** The cache's position the replica reflects, from the last `end` or `changes` frame that named one. */
  private at: Position | undefined;
  /** Reads waiting for the replica to reach a position: each settles true once it does, false when it falls out of sync. */
  private waiters: Array<{ wanted: Position; settle: (ok: boolean) => void }> = [];
  answered = 0;
  snapshots = 0;
  lost = 0;

  constructor(
    readonly family: Family,
    readonly maxRows: number,
  ) {}

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
        if (REPLICATED_TABLES[this.family].includes(name)) this.tables.set(name, new ReplicaTable());
    } else if ('rows' in frame) {
      if (!this.snapshotting) return this.outOfOrder();
      const table = this.tables.get(frame.table);
      if (!table) return true;
      for (const [key, json] of frame.rows) table.put(key, json);
      if (table.rows.size > this.maxRows) this.tables.delete(frame.table);
    } else if ('end' in frame) {
      if (!this.snapshotting) return this.outOfOrder();
      this.snapshotting = false;
      this.synced = true;
      this.snapshots++;
      this.advance(frame.pos);
    } else if ('changes' in frame) {
      if (!this.synced) return this.outOfOrder();
      for (const [name, key, json] of frame.changes) {
        const table = this.tables.get(name);
        if (!table) continue;
        if (json === null) table.delete(key);
        else table.put(key, json);
        // Grown past the bound: no longer replicated, its reads go to the broker.
        if (table.rows.size > this.maxRows) this.tables.delete(name);
      }
      this.advance(frame.pos);
    } else if ('drop' in frame) {
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
  ): ({ ok: true; dataJson: string } | Extract<CallResult, { ok: false }>) | undefined {
    if (!this.synced) return undefined;
    if (plan.kind === 'list') {
      const table = this.tables.get(plan.table);
      if (!table) return undefined;
      this.answered++;
      return { ok: true, dataJson: table.listJson() };
    }
    const key = args[plan.key];
    if (typeof key !== 'number' && typeof key !== 'string') return undefined;
    let found: Entry | undefined;
    for (const name of plan.tables) {
      const table = this.tables.get(name);
      if (!table) return undefined;
      found ??= table.rows.get(key);
    }
    this.answered++;
    if (!found) {
      return {
        ok: false,
        error: { code: 'NotFound', managerCode: NOT_FOUND_CODE[plan.family], message: `${plan.what} ${key} not found` },
      };
    }
    if (plan.field === undefined) return { ok: true, dataJson: found.json };
    let member = found.members?.get(plan.field);
    if (member === undefined) {
      member = JSON.stringify((JSON.parse(found.json) as Record<string, unknown>)[plan.field] ?? null);
      (found.members ??= new Map()).set(plan.field, member);
    }
    return { ok: true, dataJson: member };
  }

  stats(): ReplicaStats {
    const tables: Record<string, number> = {};
    let chars = 0;
    for (const [name, t] of this.tables) {
      tables[name] = t.rows.size;
      chars += t.chars;
    }
    return {
      inSync: this.synced,
      tables,
      chars,
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

  private outOfOrder(): boolean {
    this.reset();
    return false;
  }

  private clear(): void {
    this.tables.clear();
    this.snapshotting = false;
    this.synced = false;
    this.at = undefined;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w.settle(false);
  }
}
