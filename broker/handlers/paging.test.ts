import { describe, expect, it } from 'vitest';
import { OperationError } from '../../shared/errors.js';
import { KeyedTable } from '../cache/keyedTable.js';
import { BAD_CURSOR, decodeCursor, encodeCursor, isIntegerKey, isStringKey, pageOfTable, pageRequest, pagingMeta } from './paging.js';

const items = (r: { json?: string }) => JSON.parse(r.json!) as Array<{ order: number }>;

const table = () => {
  const t = new KeyedTable<{ order: number }>((r) => r.order);
  for (const order of [9, 3, 7, 1, 5]) t.put({ order });
  return t;
};

describe('cursor', () => {
  it('is base64url of the JSON of the last key, and decodes back', () => {
    expect(encodeCursor(100042)).toBe(Buffer.from('100042').toString('base64url'));
    expect(decodeCursor(encodeCursor(100042), isIntegerKey)).toBe(100042);
    expect(decodeCursor(encodeCursor('EURUSD'), isStringKey)).toBe('EURUSD');
    expect(encodeCursor(['a', 1])).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('rejects garbage and keys of the wrong type as a Validation error', () => {
    for (const bad of ['%%%', 'bm90IGpzb24', encodeCursor('text'), encodeCursor(1.5), encodeCursor(null), '']) {
      let caught: unknown;
      try { decodeCursor(bad, isIntegerKey); } catch (e) { caught = e; }
      expect(caught).toBeInstanceOf(OperationError);
      expect(caught).toMatchObject({ code: 'Validation', message: BAD_CURSOR, managerCode: null });
    }
  });
});

describe('pages of a cached table', () => {
  it('walks the table in key order, page by page, with no gaps or repeats', () => {
    const t = table();
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const r = pageOfTable(t, pageRequest({ limit: 2, cursor }, isIntegerKey));
      seen.push(...items(r).map((x) => x.order));
      if (!r.paging!.hasMore) {
        expect(r.paging!.nextCursor).toBeNull();
        break;
      }
      cursor = r.paging!.nextCursor!;
    }
    expect(seen).toEqual([1, 3, 5, 7, 9]);
  });

  it('answers everything in one page without a limit', () => {
    const r = pageOfTable(table(), pageRequest({}, isIntegerKey));
    expect(items(r)).toHaveLength(5);
    expect(r.paging).toEqual({ nextCursor: null, hasMore: false });
  });

  it('answers an empty last page after the last key', () => {
    const r = pageOfTable(table(), pageRequest({ limit: 3, cursor: encodeCursor(9) }, isIntegerKey));
    expect(items(r)).toEqual([]);
    expect(r.paging).toEqual({ nextCursor: null, hasMore: false });
  });

  it('has no cursor when nothing more follows, even on a full page', () => {
    expect(pagingMeta(false, 5)).toEqual({ nextCursor: null, hasMore: false });
    const r = pageOfTable(table(), pageRequest({ limit: 5 }, isIntegerKey));
    expect(r.paging).toEqual({ nextCursor: null, hasMore: false });
  });
});
