/**
 * One kind of cached record (users, trades, ticks, ...) keyed by its identity field, with an ordered view for paged
 * lists. The ordered key array is built on the first paged read and then kept in order incrementally: appending a
 * key larger than the last (new tickets and logins usually are) is O(1), other inserts and deletes move part of the
 * array but never re-sort it, so a page read costs a binary search plus the page itself.
 *
 * A table with a `capacity` keeps only that many rows, the newest by arrival: a put (re)inserts its row as the newest
 * and the oldest beyond the capacity is dropped (recently closed trades).
 */

/** A record's key: an id (a number, or a bigint beyond 2^53 − 1: `shared/int64.ts`) or a text. */
export type CacheKey = number | bigint | string;

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  /** Key of the last item on the page, when there is one. */
  lastKey: CacheKey | undefined;
}

function compareKeys(a: CacheKey, b: CacheKey): number {
  // Ids numerically (number and bigint compare exactly), strings by code unit (ordinal), as the trading servers order them.
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A secondary index: the primary keys of the rows sharing one value of a field (a login's trades, a symbol's). */
interface SecondaryIndex<T> {
  keyOf: (record: T) => CacheKey | undefined;
  buckets: Map<CacheKey, Set<CacheKey>>;
}

export class KeyedTable<T> {
  private readonly rows = new Map<CacheKey, T>();
  private sorted: CacheKey[] | null = null;
  private readonly indexes = new Map<string, SecondaryIndex<T>>();

  constructor(readonly keyOf: (record: T) => CacheKey | undefined, readonly capacity?: number) {}

  /** Declares a secondary index before rows arrive; `lookup(name, value)` then costs the size of the answer. */
  addIndex(name: string, keyOf: (record: T) => CacheKey | undefined): this {
    const index: SecondaryIndex<T> = { keyOf, buckets: new Map() };
    for (const [key, row] of this.rows) this.indexAdd(index, row, key);
    this.indexes.set(name, index);
    return this;
  }

  /** The rows whose indexed field equals `value`, in primary key order. */
  lookup(name: string, value: CacheKey): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index ${name}`);
    const bucket = index.buckets.get(value);
    if (!bucket) return [];
    return [...bucket].sort(compareKeys).map((key) => this.rows.get(key)!);
  }

  get size(): number {
    return this.rows.size;
  }

  get(key: CacheKey): T | undefined {
    return this.rows.get(key);
  }

  /** Inserts or replaces a record; records without a usable key are ignored. */
  put(record: T): void {
    const key = this.keyOf(record);
    if (key === undefined) return;
    const previous = this.rows.get(key);
    const existed = previous !== undefined || this.rows.has(key);
    // A bounded table keeps arrival order in its map: the row moves to the newest end.
    if (existed && this.capacity !== undefined) this.rows.delete(key);
    this.rows.set(key, record);
    if (this.indexes.size) {
      for (const index of this.indexes.values()) {
        if (previous !== undefined) this.indexRemove(index, previous, key);
        this.indexAdd(index, record, key);
      }
    }
    if (!existed && this.sorted) {
      const keys = this.sorted;
      if (keys.length === 0 || compareKeys(keys[keys.length - 1], key) < 0) keys.push(key);
      else keys.splice(this.lowerBound(key), 0, key);
    }
    if (this.capacity !== undefined && this.rows.size > this.capacity) this.delete(this.rows.keys().next().value as CacheKey);
  }

  delete(key: CacheKey): boolean {
    const previous = this.rows.get(key);
    if (!this.rows.delete(key)) return false;
    if (previous !== undefined) for (const index of this.indexes.values()) this.indexRemove(index, previous, key);
    if (this.sorted) {
      const at = this.lowerBound(key);
      if (this.sorted[at] === key) this.sorted.splice(at, 1);
      else this.sorted = null; // should not happen; rebuild rather than serve a wrong order
    }
    return true;
  }

  /** The row at `pos` (0-based) in key order, e.g. the n-th news topic; undefined outside the table. */
  at(pos: number): T | undefined {
    const keys = this.orderedKeys();
    return Number.isInteger(pos) && pos >= 0 && pos < keys.length ? this.rows.get(keys[pos]) : undefined;
  }

  values(): IterableIterator<T> {
    return this.rows.values();
  }

  /** Records with keys greater than `after` (all when undefined), at most `limit` (all when undefined). */
  page(after: CacheKey | undefined, limit: number | undefined): Page<T> {
    const keys = this.orderedKeys();
    const start = after === undefined ? 0 : this.upperBound(after);
    const end = limit === undefined ? keys.length : Math.min(keys.length, start + limit);
    const items: T[] = new Array(Math.max(0, end - start));
    for (let i = start; i < end; i++) items[i - start] = this.rows.get(keys[i])!;
    return { items, hasMore: end < keys.length, lastKey: end > start ? keys[end - 1] : undefined };
  }

  private indexAdd(index: SecondaryIndex<T>, row: T, key: CacheKey): void {
    const value = index.keyOf(row);
    if (value === undefined) return;
    let bucket = index.buckets.get(value);
    if (!bucket) index.buckets.set(value, (bucket = new Set()));
    bucket.add(key);
  }

  private indexRemove(index: SecondaryIndex<T>, row: T, key: CacheKey): void {
    const value = index.keyOf(row);
    if (value === undefined) return;
    const bucket = index.buckets.get(value);
    if (!bucket) return;
    bucket.delete(key);
    if (bucket.size === 0) index.buckets.delete(value);
  }

  private orderedKeys(): CacheKey[] {
    if (!this.sorted) this.sorted = [...this.rows.keys()].sort(compareKeys);
    return this.sorted;
  }

  /** First index whose key is >= key. */
  private lowerBound(key: CacheKey): number {
    const keys = this.sorted!;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(keys[mid], key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose key is > key. */
  private upperBound(key: CacheKey): number {
    const keys = this.sorted!;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(keys[mid], key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
