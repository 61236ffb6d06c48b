/**
 * A record table keyed by a number (login, order ticket, deal ticket) that also pages in key order. Lookups go through
 * the Map; the sorted key array is kept up to date cheaply for the common case (new keys are the largest) and rebuilt
 * lazily otherwise, so a large table is never re-sorted per change.
 */
import { compareInt64 } from '../../shared/int64.js';
export interface Page<V> {
  items: V[];
  hasMore: boolean;
}

export class KeyedRecords<V> {
  private readonly byKey = new Map<number, V>();
  private sortedKeys: number[] = [];
  private sorted = true;

  get size(): number {
    return this.byKey.size;
  }

  get(key: number): V | undefined {
    return this.byKey.get(key);
  }

  has(key: number): boolean {
    return this.byKey.has(key);
  }

  /** Inserts or replaces. */
  set(key: number, value: V): void {
    if (!this.byKey.has(key)) {
      const last = this.sortedKeys[this.sortedKeys.length - 1];
      if (this.sorted && last !== undefined && key < last) this.sorted = false;
      this.sortedKeys.push(key);
    }
    this.byKey.set(key, value);
  }

  delete(key: number): boolean {
    if (!this.byKey.delete(key)) return false;
    const keys = this.keys();
    const at = lowerBound(keys, key);
    if (keys[at] === key) keys.splice(at, 1);
    return true;
  }

  /** Largest key, or undefined when empty. */
  maxKey(): number | undefined {
    const keys = this.keys();
    return keys[keys.length - 1];
  }

  /** Keys ascending. The array is shared: callers must not change it. */
  keys(): number[] {
    if (!this.sorted) {
      // Ids beyond 2^53 − 1 are bigints (`shared/int64.ts`): compared, never subtracted.
      this.sortedKeys.sort(compareInt64);
      this.sorted = true;
    }
    return this.sortedKeys;
  }

  /** Values in key order (a fresh array, safe to hold while the table changes). */
  values(): V[] {
    return this.keys().map((k) => this.byKey.get(k) as V);
  }

  /** Values with keys greater than `after`, at most `limit` of them. */
  page(after: number | undefined, limit: number): Page<V> {
    const keys = this.keys();
    const start = after === undefined ? 0 : upperBound(keys, after);
    const end = Math.min(keys.length, start + limit);
    const items: V[] = [];
    for (let i = start; i < end; i++) items.push(this.byKey.get(keys[i]) as V);
    return { items, hasMore: end < keys.length };
  }
}

/** First index whose key is >= key. */
function lowerBound(keys: number[], key: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose key is > key. */
function upperBound(keys: number[], key: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
