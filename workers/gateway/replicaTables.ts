/**
 * Where an edge replica keeps one table's rows (`edgeReplica.ts`): in memory while the table is small, in the link
 * object's SQLite storage once it grows past the memory bound (`EDGE_REPLICA_MAX_ROWS`), so a platform of real size
 * (100,000 accounts, 200,000 open trades) is replicated whole within an object's 128 MB. Rows are the broker's JSON
 * text either way, answered as they were sent.
 *
 * Only tables keyed by integers move to storage: SQLite orders them as the broker does (numerically), where its text
 * order (UTF-8 bytes) and the broker's (UTF-16 code units) could differ. The replica's storage is a cache: it is
 * emptied whenever the replica falls out of sync and at the object's start, never read as the truth.
 *
 * Free of Workers types (`ReplicaSql` is the part of `SqlStorage` used), so the logic is tested in Node.
 */
import type { ReplicaKey } from '../../shared/replication.js';

/** The part of a Durable Object's `ctx.storage.sql` a stored table uses. */
export interface ReplicaSql {
  exec(query: string, ...bindings: Array<string | number | null>): ReplicaCursor;
}
export interface ReplicaCursor extends Iterable<Record<string, string | number | null | ArrayBuffer>> {
  toArray(): Array<Record<string, string | number | null | ArrayBuffer>>;
  readonly rowsWritten: number;
}

/** One page of a table in key order: the rows' JSON, the last row's key, whether more follow. */
export interface TablePage {
  rows: string[];
  lastKey: ReplicaKey | undefined;
  hasMore: boolean;
}

export interface ReplicaTable {
  readonly size: number;
  /** Characters of row JSON held in memory. */
  readonly chars: number;
  /** Whether the rows are in the object's storage. */
  readonly stored: boolean;
  put(key: ReplicaKey, json: string): void;
  /** A snapshot's row: its key is not in the table yet (a snapshot sends each key once). */
  load(key: ReplicaKey, json: string): void;
  delete(key: ReplicaKey): void;
  get(key: ReplicaKey): string | undefined;
  /** The JSON of `field` of the row at `key` (a group's securities), or undefined when there is no such row. */
  member(key: ReplicaKey, field: string): string | undefined;
  /** The rows after `after` in key order, at most `limit` (all when undefined). */
  page(after: ReplicaKey | undefined, limit: number | undefined): TablePage;
  /** The whole table as one JSON array, or undefined when it is too large to build here (the broker answers). */
  listJson(): string | undefined;
  /** The type of the table's keys (`number` or `string`), or undefined while it is empty. */
  keyType(): 'number' | 'string' | undefined;
  /** Frees what the table holds (its storage rows). */
  drop(): void;
}

const compareKeys = (a: ReplicaKey, b: ReplicaKey) => (a < b ? -1 : a > b ? 1 : 0);

interface Entry {
  json: string;
  /** JSON of members answered on their own (a group's securities), made on first read. */
  members?: Map<string, string>;
}

export class MemoryTable implements ReplicaTable {
  readonly rows = new Map<ReplicaKey, Entry>();
  chars = 0;
  readonly stored = false;
  private list: string | undefined;
  private sorted: ReplicaKey[] | undefined;

  get size(): number {
    return this.rows.size;
  }

  put(key: ReplicaKey, json: string): void {
    const previous = this.rows.get(key);
    if (previous) this.chars -= previous.json.length;
    else this.sorted = undefined;
    this.rows.set(key, { json });
    this.chars += json.length;
    this.list = undefined;
  }

  load(key: ReplicaKey, json: string): void {
    this.put(key, json);
  }

  delete(key: ReplicaKey): void {
    const previous = this.rows.get(key);
    if (!previous) return;
    this.chars -= previous.json.length;
    this.rows.delete(key);
    this.list = undefined;
    this.sorted = undefined;
  }

  get(key: ReplicaKey): string | undefined {
    return this.rows.get(key)?.json;
  }

  member(key: ReplicaKey, field: string): string | undefined {
    const found = this.rows.get(key);
    if (!found) return undefined;
    let member = found.members?.get(field);
    if (member === undefined) {
      member = JSON.stringify((JSON.parse(found.json) as Record<string, unknown>)[field] ?? null);
      (found.members ??= new Map()).set(field, member);
    }
    return member;
  }

  page(after: ReplicaKey | undefined, limit: number | undefined): TablePage {
    const keys = this.keys();
    let start = 0;
    if (after !== undefined) {
      let lo = 0;
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareKeys(keys[mid], after) <= 0) lo = mid + 1;
        else hi = mid;
      }
      start = lo;
    }
    const end = limit === undefined ? keys.length : Math.min(keys.length, start + limit);
    const rows: string[] = [];
    for (let i = start; i < end; i++) rows.push(this.rows.get(keys[i])!.json);
    return { rows, lastKey: end > start ? keys[end - 1] : undefined, hasMore: end < keys.length };
  }

  /** Every row in key order (numbers numerically, text by code unit, as the broker's tables order them). */
  listJson(): string {
    if (this.list === undefined) {
      const keys = this.keys();
      let out = '[';
      for (let i = 0; i < keys.length; i++) out += (i ? ',' : '') + this.rows.get(keys[i])!.json;
      this.list = `${out}]`;
    }
    return this.list;
  }

  keyType(): 'number' | 'string' | undefined {
    for (const key of this.rows.keys()) return typeof key === 'number' ? 'number' : 'string';
    return undefined;
  }

  drop(): void {
    this.rows.clear();
    this.chars = 0;
    this.list = undefined;
    this.sorted = undefined;
  }

  /** Whether every key is an integer, so the table may move to storage. */
  integerKeyed(): boolean {
    for (const key of this.rows.keys()) if (typeof key !== 'number' || !Number.isSafeInteger(key)) return false;
    return true;
  }

  private keys(): ReplicaKey[] {
    return (this.sorted ??= [...this.rows.keys()].sort(compareKeys));
  }
}

/** The storage table every stored replica table shares, one row per `(table, key)`. */
const ROWS = 'edge_replica_rows';

/**
 * A table's rows in the object's SQLite storage. The row count is kept here (each write says whether it added a row),
 * so a read never counts.
 */
export class StoredTable implements ReplicaTable {
  readonly stored = true;
  readonly chars = 0;
  private count = 0;

  constructor(
    private readonly sql: ReplicaSql,
    readonly name: string,
  ) {}

  /** Makes the storage table, empty: whatever an earlier life of the object left there is not in sync. */
  static reset(sql: ReplicaSql): void {
    sql.exec(`DROP TABLE IF EXISTS ${ROWS}`);
    sql.exec(
      `CREATE TABLE ${ROWS} (t TEXT NOT NULL, k INTEGER NOT NULL, json TEXT NOT NULL, PRIMARY KEY (t, k)) WITHOUT ROWID`,
    );
  }

  /** A stored table holding `from`'s rows (a memory table grown past its bound). */
  static from(sql: ReplicaSql, name: string, from: MemoryTable): StoredTable {
    const table = new StoredTable(sql, name);
    for (const [key, entry] of from.rows) table.load(key, entry.json);
    return table;
  }

  get size(): number {
    return this.count;
  }

  put(key: ReplicaKey, json: string): void {
    if (this.sql.exec(`UPDATE ${ROWS} SET json = ? WHERE t = ? AND k = ?`, json, this.name, key).rowsWritten > 0)
      return;
    this.sql.exec(`INSERT INTO ${ROWS} (t, k, json) VALUES (?, ?, ?)`, this.name, key, json);
    this.count++;
  }

  /** One statement, where `put` may take two: a snapshot's rows are all new. */
  load(key: ReplicaKey, json: string): void {
    this.sql.exec(`INSERT OR REPLACE INTO ${ROWS} (t, k, json) VALUES (?, ?, ?)`, this.name, key, json);
    this.count++;
  }

  delete(key: ReplicaKey): void {
    if (this.sql.exec(`DELETE FROM ${ROWS} WHERE t = ? AND k = ?`, this.name, key).rowsWritten > 0) this.count--;
  }

  get(key: ReplicaKey): string | undefined {
    if (typeof key !== 'number') return undefined;
    for (const row of this.sql.exec(`SELECT json FROM ${ROWS} WHERE t = ? AND k = ?`, this.name, key))
      return row.json as string;
    return undefined;
  }

  member(key: ReplicaKey, field: string): string | undefined {
    const json = this.get(key);
    return json === undefined
      ? undefined
      : JSON.stringify((JSON.parse(json) as Record<string, unknown>)[field] ?? null);
  }

  /** A page of at most `limit` rows; a stored table is never read whole (`limit` undefined answers nothing). */
  page(after: ReplicaKey | undefined, limit: number | undefined): TablePage {
    if (limit === undefined) throw new Error('a stored replica table is read a page at a time');
    const rows: string[] = [];
    let lastKey: ReplicaKey | undefined;
    const found =
      after === undefined
        ? this.sql.exec(`SELECT k, json FROM ${ROWS} WHERE t = ? ORDER BY k LIMIT ?`, this.name, limit + 1)
        : this.sql.exec(
            `SELECT k, json FROM ${ROWS} WHERE t = ? AND k > ? ORDER BY k LIMIT ?`,
            this.name,
            after,
            limit + 1,
          );
    let hasMore = false;
    for (const row of found) {
      if (rows.length === limit) {
        hasMore = true;
        break;
      }
      rows.push(row.json as string);
      lastKey = row.k as number;
    }
    return { rows, lastKey, hasMore };
  }

  listJson(): undefined {
    return undefined;
  }

  keyType(): 'number' | undefined {
    return this.count > 0 ? 'number' : undefined;
  }

  drop(): void {
    this.sql.exec(`DELETE FROM ${ROWS} WHERE t = ?`, this.name);
    this.count = 0;
  }
}
