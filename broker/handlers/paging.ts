/**
 * Paged lists: the cursor is the base64url of the JSON of the last item's key, opaque to callers. A page answers the
 * items plus `{nextCursor, hasMore}`; without `limit` the whole list is one page.
 */
import type { PagingResult } from '../../shared/frames.js';
import { OperationError } from '../../shared/errors.js';
import type { CacheKey, KeyedTable } from '../cache/keyedTable.js';
import type { HandlerResult } from './handler.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import { isInt64 } from '../../shared/int64.js';

export const BAD_CURSOR = 'cursor is not valid for this list';

export function encodeCursor(key: unknown): string {
  return Buffer.from(stringifyJson(key), 'utf8').toString('base64url');
}

/** Decodes a cursor whose key must satisfy `isKey`; anything else is a `Validation` error. */
export function decodeCursor<K>(cursor: string, isKey: (value: unknown) => value is K): K {
  let value: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    value = parseJson(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new OperationError('Validation', BAD_CURSOR);
  }
  if (!isKey(value)) throw new OperationError('Validation', BAD_CURSOR);
  return value;
}

/**
 * Integer keys (logins, tickets, positions) are never negative: a negative one can only be a tampered cursor. A key
 * beyond 2^53 − 1 is the exact bigint the cursor's lossless JSON reads.
 */
export const isIntegerKey = (value: unknown): value is number => isInt64(value) && value >= 0;
export const isStringKey = (value: unknown): value is string => typeof value === 'string';

export interface PageRequest<K> {
  limit: number | undefined;
  after: K | undefined;
}

/** Reads `limit` and `cursor` from validated args. */
export function pageRequest<K>(args: Record<string, unknown>, isKey: (value: unknown) => value is K): PageRequest<K> {
  const limit = typeof args.limit === 'number' && args.limit > 0 ? Math.floor(args.limit) : undefined;
  const cursor = typeof args.cursor === 'string' && args.cursor !== '' ? args.cursor : undefined;
  return { limit, after: cursor === undefined ? undefined : decodeCursor(cursor, isKey) };
}

export function pagingMeta(hasMore: boolean, lastKey: unknown): PagingResult {
  return { nextCursor: hasMore && lastKey !== undefined ? encodeCursor(lastKey) : null, hasMore };
}

/** One page of a cached table in key order. */
export function pageOfTable<T extends object, K extends CacheKey>(
  table: KeyedTable<T>,
  request: PageRequest<K>,
): HandlerResult {
  const page = table.pageViews(request.after, request.limit);
  return { rows: table.rowTexts(page.items), paging: pagingMeta(page.hasMore, page.lastKey) };
}

/**
 * One page of rows already in key order: the rows after the cursor's key (by `compare`), at most `limit`. Used for
 * lists that are not a cached table: an index bucket, a live list read whole.
 */
export function pageOf<R, K>(
  rows: readonly R[],
  keyOf: (row: R) => K,
  page: PageRequest<K>,
  compare: (a: K, b: K) => number = compareTupleKeys,
): { items: R[]; paging: PagingResult } {
  let start = 0;
  if (page.after !== undefined) {
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(keyOf(rows[mid]), page.after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const end = page.limit === undefined ? rows.length : Math.min(rows.length, start + page.limit);
  const items = rows.slice(start, end);
  return { items, paging: pagingMeta(end < rows.length, items.length ? keyOf(items[items.length - 1]) : undefined) };
}

/** Tuples field by field; within a field null first, then numbers and bigint ids (numerically), then text (by code unit, ordinal). */
export function compareTupleKeys(a: unknown, b: unknown): number {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareTupleKeys(a[i], b[i]);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  const rank = (v: unknown) =>
    v === null || v === undefined ? 0 : typeof v === 'number' || typeof v === 'bigint' ? 1 : 2;
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
}
