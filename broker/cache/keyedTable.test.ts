/**
 * One cached table on its own: keys (numbers, bigints, texts) in the order the trading servers use, pages after a key,
 * positions, secondary indexes following every put and delete, the bound of a table that keeps only its newest
 * rows by arrival, and a packed table (rows kept as their JSON text beside a few fields) answering as the rows do.
 */
import { describe, expect, it } from 'vitest';
import { stringifyJson } from '../../shared/losslessJson.js';
import { KeyedTable, type CacheKey } from './keyedTable.js';
import { recordJson, recordsJson } from './recordJson.js';

interface Row {
  id?: CacheKey;
  login?: number;
  v?: string;
}
const table = (capacity?: number) => new KeyedTable<Row>((r) => r.id, capacity);
const ids = (rows: Row[]) => rows.map((r) => r.id);
function filled(keys: CacheKey[], capacity?: number): KeyedTable<Row> {
  const t = table(capacity);
  for (const id of keys) t.put({ id });
  return t;
}

describe('a keyed table', () => {
  it('inserts, replaces and deletes by key; a row without a key is not kept', () => {
    const t = table();
    t.put({ id: 1, v: 'a' });
    t.put({ id: 1, v: 'b' });
    t.put({ v: 'no key' });
    expect(t.size).toBe(1);
    expect(t.get(1)).toStrictEqual({ id: 1, v: 'b' });
    expect(t.delete(2)).toBe(false);
    expect(t.delete(1)).toBe(true);
    expect(t.delete(1)).toBe(false);
    expect(t.size).toBe(0);
    expect(t.get(1)).toBeUndefined();
  });

  it('orders ids numerically, bigints among numbers, and texts by code unit', () => {
    expect(ids(filled([10, 2n ** 60n, 9, 100, 2 ** 53]).page(undefined, undefined).items)).toStrictEqual([
      9,
      10,
      100,
      2 ** 53,
      2n ** 60n,
    ]);
    expect(ids(filled(['b', 'B', 'a', 'A', 'ab']).page(undefined, undefined).items)).toStrictEqual([
      'A',
      'B',
      'a',
      'ab',
      'b',
    ]);
  });

  it('pages after a key, present or not, at most limit rows, saying whether more follow and the last key', () => {
    const t = filled([50, 10, 40, 20, 30]);
    expect(t.page(undefined, 2)).toStrictEqual({ items: [{ id: 10 }, { id: 20 }], hasMore: true, lastKey: 20 });
    expect(t.page(20, 2)).toStrictEqual({ items: [{ id: 30 }, { id: 40 }], hasMore: true, lastKey: 40 });
    expect(t.page(35, 2)).toStrictEqual({ items: [{ id: 40 }, { id: 50 }], hasMore: false, lastKey: 50 });
    expect(t.page(40, 1)).toStrictEqual({ items: [{ id: 50 }], hasMore: false, lastKey: 50 });
    expect(t.page(5, undefined)).toStrictEqual({
      items: [10, 20, 30, 40, 50].map((id) => ({ id })),
      hasMore: false,
      lastKey: 50,
    });
    expect(t.page(50, 3)).toStrictEqual({ items: [], hasMore: false, lastKey: undefined });
    expect(t.page(undefined, 0)).toStrictEqual({ items: [], hasMore: true, lastKey: undefined });
    expect(table().page(undefined, 10)).toStrictEqual({ items: [], hasMore: false, lastKey: undefined });
  });

  it('keeps the order through puts and deletes after the first paged read', () => {
    const t = filled([20, 40]);
    expect(ids(t.page(undefined, undefined).items)).toStrictEqual([20, 40]);
    for (const id of [60, 10, 30, 50, 30, 5]) t.put({ id, v: String(id) });
    expect(ids(t.page(undefined, undefined).items)).toStrictEqual([5, 10, 20, 30, 40, 50, 60]);
    expect(t.page(25, undefined).items[0]).toStrictEqual({ id: 30, v: '30' });
    expect(t.delete(30)).toBe(true);
    expect(t.delete(5)).toBe(true);
    expect(t.delete(60)).toBe(true);
    expect(t.delete(99)).toBe(false);
    expect(ids(t.page(undefined, undefined).items)).toStrictEqual([10, 20, 40, 50]);
    t.put({ id: 45 });
    expect(ids(t.page(20, 2).items)).toStrictEqual([40, 45]);
    const empty = filled([]);
    expect(empty.page(undefined, undefined).items).toStrictEqual([]);
    empty.put({ id: 3 });
    empty.put({ id: 1 });
    expect(ids(empty.page(undefined, undefined).items)).toStrictEqual([1, 3]);
  });

  it('answers the row at a position in key order, nothing outside the table or at a fractional position', () => {
    const t = filled(['c', 'a', 'b']);
    expect(t.at(0)).toStrictEqual({ id: 'a' });
    expect(t.at(2)).toStrictEqual({ id: 'c' });
    expect(t.at(3)).toBeUndefined();
    expect(t.at(-1)).toBeUndefined();
    expect(t.at(0.5)).toBeUndefined();
    t.put({ id: 'aa' });
    expect(t.at(1)).toStrictEqual({ id: 'aa' });
  });

  it('iterates its rows in arrival order', () => {
    expect(ids([...filled([3, 1, 2]).values()])).toStrictEqual([3, 1, 2]);
  });

  it('answers nothing at a position that is not a number, even one written as digits', () => {
    const t = filled([30, 10, 20]);
    expect(t.at('1' as unknown as number)).toBeUndefined();
    expect(t.at(1)).toStrictEqual({ id: 20 });
    expect(t.at(Number.NaN)).toBeUndefined();
  });

  it('keeps a replaced row at its arrival place when unbounded, in its order once', () => {
    const t = filled([3, 1, 2]);
    expect(ids(t.page(undefined, undefined).items)).toStrictEqual([1, 2, 3]);
    t.put({ id: 3, v: 'again' });
    t.put({ id: 1, v: 'again' });
    expect([...t.values()]).toStrictEqual([{ id: 3, v: 'again' }, { id: 1, v: 'again' }, { id: 2 }]);
    expect(t.page(undefined, undefined)).toStrictEqual({
      items: [{ id: 1, v: 'again' }, { id: 2 }, { id: 3, v: 'again' }],
      hasMore: false,
      lastKey: 3,
    });
    expect(t.size).toBe(3);
  });

  it('counts a row stored as undefined as present when its key is put again', () => {
    const keyOf = (r: Row | undefined) => r?.id ?? 0;
    const t = new KeyedTable<Row | undefined>(keyOf);
    t.put(undefined);
    t.put({ id: 1 });
    expect(t.page(undefined, undefined).items).toStrictEqual([undefined, { id: 1 }]);
    t.put(undefined);
    expect(t.size).toBe(2);
    expect(t.page(undefined, undefined)).toStrictEqual({ items: [undefined, { id: 1 }], hasMore: false, lastKey: 1 });
    const bounded = new KeyedTable<Row | undefined>(keyOf, 2);
    bounded.put(undefined);
    bounded.put({ id: 1 });
    bounded.put(undefined);
    expect([...bounded.values()]).toStrictEqual([{ id: 1 }, undefined]);
    bounded.put({ id: 2 });
    expect([...bounded.values()]).toStrictEqual([undefined, { id: 2 }]);
  });

  it('answers an empty page when the limit ends it before its start', () => {
    const t = filled([10, 20, 30]);
    expect(t.page(10, -1)).toStrictEqual({ items: [], hasMore: true, lastKey: undefined });
    expect(t.page(undefined, -5)).toStrictEqual({ items: [], hasMore: true, lastKey: undefined });
    expect(t.page(30, -1)).toStrictEqual({ items: [], hasMore: true, lastKey: undefined });
    expect(t.page(10, 1)).toStrictEqual({ items: [{ id: 20 }], hasMore: true, lastKey: 20 });
  });

  it('keeps bigint and text keys in order through appends and inserts after the first paged read', () => {
    const big = filled([2n ** 60n, 5]);
    expect(ids(big.page(undefined, undefined).items)).toStrictEqual([5, 2n ** 60n]);
    for (const id of [2n ** 61n, 7, 2n ** 59n, 2 ** 53 - 1]) big.put({ id });
    expect(ids(big.page(undefined, undefined).items)).toStrictEqual([
      5,
      7,
      2 ** 53 - 1,
      2n ** 59n,
      2n ** 60n,
      2n ** 61n,
    ]);
    expect(big.delete(2n ** 60n)).toBe(true);
    expect(big.page(2n ** 59n, undefined)).toStrictEqual({
      items: [{ id: 2n ** 61n }],
      hasMore: false,
      lastKey: 2n ** 61n,
    });
    const text = filled(['m', 'c']);
    expect(ids(text.page(undefined, undefined).items)).toStrictEqual(['c', 'm']);
    for (const id of ['z', 'A', 'd', 'ma']) text.put({ id });
    expect(ids(text.page(undefined, undefined).items)).toStrictEqual(['A', 'c', 'd', 'm', 'ma', 'z']);
    expect(text.at(3)).toStrictEqual({ id: 'm' });
  });

  it('rebuilds its order when a delete cannot find its key there (a number and a text of the same digits)', () => {
    const t = filled([7, '7']);
    expect(t.page(undefined, undefined).items).toHaveLength(2);
    expect(t.delete('7')).toBe(true);
    expect(t.page(undefined, undefined)).toStrictEqual({ items: [{ id: 7 }], hasMore: false, lastKey: 7 });
    expect(t.at(0)).toStrictEqual({ id: 7 });
    expect(t.at(1)).toBeUndefined();
  });
});

describe('secondary indexes', () => {
  it('groups rows by a field in key order, following updates that move a row and deletes', () => {
    const t = table().addIndex('login', (r) => r.login);
    t.put({ id: 3, login: 1 });
    t.put({ id: 1, login: 1 });
    t.put({ id: 2, login: 2 });
    t.put({ id: 4 });
    expect(ids(t.lookup('login', 1))).toStrictEqual([1, 3]);
    t.put({ id: 3, login: 2 });
    expect(ids(t.lookup('login', 1))).toStrictEqual([1]);
    expect(ids(t.lookup('login', 2))).toStrictEqual([2, 3]);
    expect(t.lookup('login', 2)[1]).toStrictEqual({ id: 3, login: 2 });
    t.delete(1);
    expect(t.lookup('login', 1)).toStrictEqual([]);
    t.put({ id: 2 });
    expect(ids(t.lookup('login', 2))).toStrictEqual([3]);
    expect(t.lookup('login', 99)).toStrictEqual([]);
  });

  it('indexes the rows already there when declared late, and refuses an index never declared', () => {
    const t = filled([]);
    t.put({ id: 2, login: 7 });
    t.put({ id: 1, login: 7 });
    t.addIndex('login', (r) => r.login);
    expect(ids(t.lookup('login', 7))).toStrictEqual([1, 2]);
    expect(() => t.lookup('symbol', 7)).toThrow('no index symbol');
  });

  it('files no row under an undefined value, and empties a value when its last row leaves', () => {
    const t = table().addIndex('login', (r) => r.login);
    t.put({ id: 1 });
    t.put({ id: 2, login: 5 });
    expect(t.lookup('login', undefined as unknown as CacheKey)).toStrictEqual([]);
    expect(t.lookup('login', 5)).toStrictEqual([{ id: 2, login: 5 }]);
    t.put({ id: 2, login: 6 });
    expect(t.lookup('login', 5)).toStrictEqual([]);
    expect(t.delete(2)).toBe(true);
    expect(t.lookup('login', 6)).toStrictEqual([]);
    t.put({ id: 3, login: 6 });
    expect(t.lookup('login', 6)).toStrictEqual([{ id: 3, login: 6 }]);
    expect(t.delete(1)).toBe(true);
    expect(t.lookup('login', undefined as unknown as CacheKey)).toStrictEqual([]);
  });

  it('deletes or replaces a row whose indexed field was changed in place without throwing', () => {
    const t = table().addIndex('login', (r) => r.login);
    const row: Row = { id: 1, login: 1 };
    t.put(row);
    row.login = 2;
    t.put(row);
    expect(t.lookup('login', 2)).toStrictEqual([{ id: 1, login: 2 }]);
    row.login = 3;
    expect(t.delete(1)).toBe(true);
    expect(t.size).toBe(0);
    expect(t.get(1)).toBeUndefined();
  });
});

describe('a bounded table', () => {
  it('keeps the newest rows by arrival, a replaced row counting as new, in its order and its indexes', () => {
    const t = table(3).addIndex('login', (r) => r.login);
    for (const id of [10, 30, 20]) t.put({ id, login: 1 });
    expect(ids(t.page(undefined, undefined).items)).toStrictEqual([10, 20, 30]);
    t.put({ id: 10, login: 1, v: 'again' });
    t.put({ id: 40, login: 1 });
    expect(t.size).toBe(3);
    expect(t.get(30)).toBeUndefined();
    expect(ids([...t.values()])).toStrictEqual([20, 10, 40]);
    expect(ids(t.page(undefined, undefined).items)).toStrictEqual([10, 20, 40]);
    expect(ids(t.lookup('login', 1))).toStrictEqual([10, 20, 40]);
    t.put({ id: 5, login: 1 });
    expect(ids(t.page(undefined, undefined).items)).toStrictEqual([5, 10, 40]);
  });

  it('drops nothing exactly at its capacity and the oldest by arrival one row above it', () => {
    const t = table(2);
    t.put({ id: 20 });
    t.put({ id: 10 });
    expect(t.page(undefined, undefined)).toStrictEqual({
      items: [{ id: 10 }, { id: 20 }],
      hasMore: false,
      lastKey: 20,
    });
    t.put({ id: 30 });
    expect(t.size).toBe(2);
    expect(t.get(20)).toBeUndefined();
    expect(t.page(undefined, undefined)).toStrictEqual({
      items: [{ id: 10 }, { id: 30 }],
      hasMore: false,
      lastKey: 30,
    });
    t.put({ id: 10, v: 'again' });
    t.put({ id: 5 });
    expect(ids([...t.values()])).toStrictEqual([10, 5]);
    expect(t.page(undefined, undefined)).toStrictEqual({
      items: [{ id: 5 }, { id: 10, v: 'again' }],
      hasMore: false,
      lastKey: 10,
    });
  });
});

describe('a packed table', () => {
  interface Trade {
    order?: CacheKey;
    login?: CacheKey;
    symbol?: string;
    cmd?: string;
    profit?: number;
    note?: string;
  }
  const packed = (capacity?: number) =>
    new KeyedTable<Trade>((r) => r.order, capacity, ['order', 'login', 'symbol', 'cmd']).addIndex(
      'login',
      (r) => r.login,
    );
  const rows: Trade[] = [
    { order: 30, login: 2n ** 60n, symbol: 'EURUSD', cmd: 'Buy', profit: -1.5, note: 'a "quoted" ü' },
    { order: 10, login: 7, symbol: 'GBPUSD', cmd: 'Sell', profit: 0, note: '' },
    { order: 2n ** 63n - 1n, login: 7, symbol: 'EURUSD', cmd: 'BuyLimit', profit: 12.25, note: 'x' },
  ];
  const filledPacked = (capacity?: number) => {
    const t = packed(capacity);
    for (const row of rows) t.put(row);
    return t;
  };

  it('keeps each row as its JSON text, exact for ids beyond 2^53 − 1, and gives back the same record', () => {
    const t = filledPacked();
    for (const row of rows) {
      expect(t.json(row.order!)).toBe(stringifyJson(row));
      expect(t.get(row.order!)).toStrictEqual(row);
    }
    expect(t.json(99)).toBeUndefined();
    expect(t.get(99)).toBeUndefined();
    expect(t.has(10)).toBe(true);
    expect(t.has(99)).toBe(false);
  });

  it('a row rebuilt from its text answers that text; a replaced row answers its new text', () => {
    const t = filledPacked();
    const row = t.get(30)!;
    expect(recordJson(row)).toBe(stringifyJson(rows[0]));
    t.put({ ...rows[0], profit: 4 });
    expect(t.json(30)).toBe(stringifyJson({ ...rows[0], profit: 4 }));
    expect(t.get(30)!.profit).toBe(4);
  });

  it('views hold the kept fields only; pages and lookups of views answer the same text as the rows', () => {
    const t = filledPacked();
    expect(Object.fromEntries(Object.entries(t.view(10)!))).toStrictEqual({
      order: 10,
      login: 7,
      symbol: 'GBPUSD',
      cmd: 'Sell',
    });
    const views = t.pageViews(undefined, 2);
    expect(views.hasMore).toBe(true);
    expect(views.lastKey).toBe(30);
    expect(`[${t.rowTexts(views.items).join(',')}]`).toBe(recordsJson([rows[1], rows[0]]));
    expect(t.page(undefined, 2)).toStrictEqual({ items: [rows[1], rows[0]], hasMore: true, lastKey: 30 });
    expect(`[${t.rowTexts(t.lookupViews('login', 7)).join(',')}]`).toBe(recordsJson([rows[1], rows[2]]));
    expect(t.lookup('login', 7)).toStrictEqual([rows[1], rows[2]]);
    expect(t.rowTexts([])).toStrictEqual([]);
    expect([...t.values()]).toStrictEqual(rows);
    expect([...t.keys()]).toStrictEqual(rows.map((r) => r.order));
    expect([...t.entries()].map(([key, view]) => [key, t.jsonOf(view)])).toStrictEqual(
      rows.map((r) => [r.order, stringifyJson(r)]),
    );
  });

  it('indexes follow puts, replacements and deletes through the kept fields', () => {
    const t = filledPacked();
    t.put({ ...rows[1], login: 8 });
    expect(t.lookup('login', 7).map((r) => r.order)).toStrictEqual([2n ** 63n - 1n]);
    expect(t.lookup('login', 8).map((r) => r.order)).toStrictEqual([10]);
    expect(t.delete(2n ** 63n - 1n)).toBe(true);
    expect(t.lookup('login', 7)).toStrictEqual([]);
    expect(t.page(undefined, undefined).items.map((r) => r.order)).toStrictEqual([10, 30]);
  });

  it('keeps its capacity as an unpacked table does', () => {
    const t = filledPacked(2);
    expect(t.size).toBe(2);
    expect(t.has(30)).toBe(false);
    expect(t.at(0)).toStrictEqual(rows[1]);
  });
});
