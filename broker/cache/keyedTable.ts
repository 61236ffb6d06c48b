/**
 * One kind of cached record (users, trades, ticks, ...) keyed by its identity field, with an ordered view for paged
 * lists. The ordered key array is built on the first paged read and then kept in order incrementally: appending a
 * key larger than the last (new tickets and logins usually are) is O(1), other inserts and deletes move part of the
 * array but never re-sort it, so a page read costs a binary search plus the page itself.
 *
 * A table with a `capacity` keeps only that many rows, the newest by arrival: a put (re)inserts its row as the newest
 * and the oldest beyond the capacity is dropped (recently closed trades).
 *
 * A packed table (the large ones: accounts, trades, positions) keeps each row once, as the JSON text it is answered
 * with, beside the few fields its key, its indexes and its filters read (a row's view): about a third of the heap of
 * the row as an object. Reads that answer rows as they are take the text (`json`, `pageViews`, `lookupViews` with
 * `rowTexts`); `get`, `page`, `lookup` and `values` rebuild the row from its text (exact for ids beyond 2^53 − 1) for
 * the readers that need every field, and the rebuilt row answers its stored text (`recordJson`).
 */
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import { recordJson, rememberJson } from './recordJson.js';

/** A record's key: an id (a number, or a bigint beyond 2^53 − 1: `shared/int64.ts`) or a text. */
export type CacheKey = number | bigint | string;

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  /** Key of the last item on the page, when there is one. */
  lastKey: CacheKey | undefined;
}

/**
 * What a key, an index or a filter reads of a row: the row itself, or in a packed table its kept fields (and its text
 * under a symbol key; `jsonOf` reads it).
 */
export type RowView = Record<string, unknown>;

const TEXT = Symbol('json');

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
  /** Rows by key: the records themselves, or in a packed table their views (kept fields and text). */
  private readonly rows = new Map<CacheKey, T>();
  private sorted: CacheKey[] | null = null;
  private readonly indexes = new Map<string, SecondaryIndex<T>>();

  /**
   * `packed`: the fields a packed table keeps beside each row's text (its key's, its indexes' and its filters' fields);
   * undefined keeps rows as the objects they are put as.
   */
  constructor(
    readonly keyOf: (record: T) => CacheKey | undefined,
    readonly capacity?: number,
    readonly packed?: readonly string[],
  ) {}

  /** The stored form of a record: itself, or its text beside its kept fields. */
  private pack(record: T): T {
    const fields = this.packed;
    if (fields === undefined) return record;
    const view: Record<string | symbol, unknown> = { [TEXT]: stringifyJson(record) };
    for (const field of fields) view[field] = (record as RowView)[field];
    return view as T;
  }

  /** The record a stored row holds: itself, or rebuilt from its text (which it then answers). */
  private unpack(stored: T): T {
    if (this.packed === undefined) return stored;
    const json = (stored as Record<symbol, string>)[TEXT];
    const row = parseJson(json) as T & object;
    rememberJson(row, json);
    return row;
  }

  /** The JSON text a row (or a view of this table) is answered with. */
  jsonOf(view: T): string {
    return this.packed === undefined ? recordJson(view as object) : (view as Record<symbol, string>)[TEXT];
  }

  /**
   * Rows or views of this table as their JSON texts, the elements of a JSON array (`HandlerResult.rows`): the
   * answer's frame is written from them row by row, never joined into one string first.
   */
  rowTexts(views: readonly T[]): string[] {
    const texts = new Array<string>(views.length);
    for (let i = 0; i < views.length; i++) texts[i] = this.jsonOf(views[i]);
    return texts;
  }

  /** The row of `key` as its JSON text. */
  json(key: CacheKey): string | undefined {
    const stored = this.rows.get(key);
    return stored === undefined ? undefined : this.jsonOf(stored);
  }

  has(key: CacheKey): boolean {
    return this.rows.has(key);
  }

  keys(): IterableIterator<CacheKey> {
    return this.rows.keys();
  }

  /** Keys and views (rows in an unpacked table), in arrival order. */
  entries(): IterableIterator<[CacheKey, T]> {
    return this.rows.entries();
  }

  /** Declares a secondary index before rows arrive; `lookup(name, value)` then costs the size of the answer. */
  addIndex(name: string, keyOf: (record: T) => CacheKey | undefined): this {
    const index: SecondaryIndex<T> = { keyOf, buckets: new Map() };
    for (const [key, row] of this.rows) this.indexAdd(index, row, key);
    this.indexes.set(name, index);
    return this;
  }

  /** The rows whose indexed field equals `value`, in primary key order. */
  lookup(name: string, value: CacheKey): T[] {
    return this.packed === undefined
      ? this.lookupViews(name, value)
      : this.lookupViews(name, value).map((v) => this.unpack(v));
  }

  /** `lookup` as views (see `rowTexts`). */
  lookupViews(name: string, value: CacheKey): T[] {
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
    const stored = this.rows.get(key);
    return stored === undefined ? undefined : this.unpack(stored);
  }

  /** The view of the row of `key`: its kept fields in a packed table (the row itself in another). */
  view(key: CacheKey): T | undefined {
    return this.rows.get(key);
  }

  /** Inserts or replaces a record; records without a usable key are ignored. */
  put(record: T): void {
    const key = this.keyOf(record);
    if (key === undefined) return;
    record = this.pack(record);
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
    if (this.capacity !== undefined && this.rows.size > this.capacity)
      this.delete(this.rows.keys().next().value as CacheKey);
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
    return Number.isInteger(pos) && pos >= 0 && pos < keys.length ? this.unpack(this.rows.get(keys[pos])!) : undefined;
  }

  values(): IterableIterator<T> {
    return this.packed === undefined ? this.rows.values() : this.unpackedValues();
  }

  private *unpackedValues(): IterableIterator<T> {
    for (const stored of this.rows.values()) yield this.unpack(stored);
  }

  /** Records with keys greater than `after` (all when undefined), at most `limit` (all when undefined). */
  page(after: CacheKey | undefined, limit: number | undefined): Page<T> {
    const page = this.pageViews(after, limit);
    if (this.packed !== undefined) page.items = page.items.map((v) => this.unpack(v));
    return page;
  }

  /** `page` as views (see `rowTexts`). */
  pageViews(after: CacheKey | undefined, limit: number | undefined): Page<T> {
    const keys = this.orderedKeys();
    const start = after === undefined ? 0 : this.upperBound(after);
    const end = limit === undefined ? keys.length : Math.min(keys.length, start + limit);
    const items = new Array<T>(Math.max(0, end - start));
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
