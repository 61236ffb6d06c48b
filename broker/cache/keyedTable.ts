/**
 * One kind of cached record (users, trades, ticks, ...) keyed by its identity field, with an ordered view for paged
 * lists. The ordered key array is built on the first paged read and then kept in order incrementally: appending a
 * key larger than the last (new tickets and logins usually are) is O(1), other inserts and deletes move part of the
 * array but never re-sort it, so a page read costs a binary search plus the page itself.
 */

export type CacheKey = number | string;

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  /** Key of the last item on the page, when there is one. */
  lastKey: CacheKey | undefined;
}

function compareKeys(a: CacheKey, b: CacheKey): number {
  // Numbers numerically, strings by code unit (ordinal), as the trading servers order them.
  return a < b ? -1 : a > b ? 1 : 0;
}

export class KeyedTable<T> {
  private readonly rows = new Map<CacheKey, T>();
  private sorted: CacheKey[] | null = null;

  constructor(readonly keyOf: (record: T) => CacheKey | undefined) {}

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
    const existed = this.rows.has(key);
    this.rows.set(key, record);
    if (existed || !this.sorted) return;
    const keys = this.sorted;
    if (keys.length === 0 || compareKeys(keys[keys.length - 1], key) < 0) keys.push(key);
    else keys.splice(this.lowerBound(key), 0, key);
  }

  delete(key: CacheKey): boolean {
    if (!this.rows.delete(key)) return false;
    if (this.sorted) {
      const at = this.lowerBound(key);
      if (this.sorted[at] === key) this.sorted.splice(at, 1);
      else this.sorted = null; // should not happen; rebuild rather than serve a wrong order
    }
    return true;
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
