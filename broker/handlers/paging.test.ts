import { resultJson, type HandlerResult } from './handler.js';
import { describe, expect, it } from 'vitest';
import { OperationError } from '../../shared/errors.js';
import { KeyedTable } from '../cache/keyedTable.js';
import {
  BAD_CURSOR,
  compareTupleKeys,
  decodeCursor,
  encodeCursor,
  isIntegerKey,
  isStringKey,
  pageOfTable,
  pageRequest,
  pagingMeta,
} from './paging.js';

const items = (r: HandlerResult) => JSON.parse(resultJson(r)!) as Array<{ order: number }>;

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
      try {
        decodeCursor(bad, isIntegerKey);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(OperationError);
      expect(caught).toMatchObject({ code: 'Validation', message: BAD_CURSOR, managerCode: null });
    }
  });
});

describe('cursor text', () => {
  const refused = (cursor: string, isKey: (v: unknown) => boolean = isIntegerKey) => {
    try {
      decodeCursor(cursor, isKey as typeof isIntegerKey);
    } catch (e) {
      return (e as OperationError).message;
    }
    return 'accepted';
  };

  it('takes base64url characters only, anywhere in the cursor, although the decoder would skip the others', () => {
    const good = encodeCursor(100);
    expect(good).toBe('MTAw');
    expect(refused(good)).toBe('accepted');
    for (const bad of [`${good}+`, `+${good}`, `${good}=`, `${good} `, `M/Aw`])
      expect(refused(bad), bad).toBe(BAD_CURSOR);
  });

  it('takes a text key only for a text list, and an integer key only for an integer list', () => {
    expect(refused(encodeCursor(5), isStringKey)).toBe(BAD_CURSOR);
    expect(refused(encodeCursor('5'))).toBe(BAD_CURSOR);
    expect(decodeCursor(encodeCursor(''), isStringKey)).toBe('');
  });
});

describe('pageRequest', () => {
  it('takes a positive limit (whole), and no limit for anything else', () => {
    const limitOf = (limit: unknown) => pageRequest({ limit }, isIntegerKey).limit;
    expect([5, 2.7, 1, 0, -3, '5', null, undefined].map(limitOf)).toStrictEqual([
      5,
      2,
      1,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('reads a non-empty text cursor, and no cursor for anything else', () => {
    expect(pageRequest({ cursor: encodeCursor(7) }, isIntegerKey)).toStrictEqual({ limit: undefined, after: 7 });
    for (const cursor of ['', 7, null, undefined])
      expect(pageRequest({ cursor }, isIntegerKey), String(cursor)).toStrictEqual({
        limit: undefined,
        after: undefined,
      });
  });
});

describe('compareTupleKeys', () => {
  it('compares a tuple with a single key by rank: a tuple ranks with text', () => {
    expect(compareTupleKeys(['a'], 5)).toBe(1);
    expect(compareTupleKeys(5, ['a'])).toBe(-1);
    expect(compareTupleKeys(null, [1])).toBe(-2);
  });

  it('ranks within a field null first, then numbers and bigint ids numerically, then text by code unit', () => {
    const keys = ['b', 10, null, 2n ** 60n, 'B', 3, -1, '10'];
    expect([...keys].sort(compareTupleKeys)).toStrictEqual([null, -1, 3, 10, 2n ** 60n, '10', 'B', 'b']);
    expect([compareTupleKeys(undefined, -1), compareTupleKeys(undefined, null)]).toStrictEqual([-1, 0]);
    expect([
      compareTupleKeys(5, 'a'),
      compareTupleKeys('a', 5),
      compareTupleKeys(5n, 'a'),
      compareTupleKeys(2n, 3),
      compareTupleKeys(3, 2n),
    ]).toStrictEqual([-1, 1, -1, -1, 1]);
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
