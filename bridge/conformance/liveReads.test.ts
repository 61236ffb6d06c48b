/**
 * The comparison of a cache with live records: a record lost, one stale, a field that differs, named with its key;
 * the family's volatile fields (a trade's profit) never compared; int64 keys matched by their digits.
 */
import { describe, expect, it } from 'vitest';
import { deepEqual, differences } from './liveReads.js';

describe('differences', () => {
  it('names lost, stale and differing records, and ignores the volatile fields', () => {
    const cached = new Map([
      ['1', { order: 1, volume: 100, profit: 5 }],
      ['2', { order: 2, volume: 100 }],
      ['3', { order: 3, volume: 100 }],
    ]);
    const live = [
      { order: 1, volume: 100, profit: 9 },
      { order: 2, volume: 200 },
      { order: 4, volume: 1 },
    ];
    expect(differences('PF4', 'trades', cached, live)).toEqual([
      'trades order 2: volume is 200 on the server, 100 in the cache',
      'trades order 4: on the server, not in the cache (lost)',
      'trades order 3: in the cache, not on the server (stale)',
    ]);
  });

  it('agrees on equal records, int64 keys included, and compares only the fields the live read has', () => {
    const login = 9007199254740993n;
    const cached = new Map([[String(login), { login, group: 'g', extra: [1] }]]);
    expect(differences('PF5', 'users', cached, [{ login, group: 'g' }])).toEqual([]);
    expect(differences('PF5', 'users', cached, [{ login: 9007199254740992, group: 'g' }])).toEqual([
      'users login 9007199254740992: on the server, not in the cache (lost)',
      'users login 9007199254740993: in the cache, not on the server (stale)',
    ]);
  });

  it('cuts a long list of differences', () => {
    const cached = new Map(Array.from({ length: 8 }, (_, i) => [String(i), { login: i }]));
    expect(differences('PF4', 'users', cached, [], 3)).toEqual([
      'users login 0: in the cache, not on the server (stale)',
      'users login 1: in the cache, not on the server (stale)',
      'users login 2: in the cache, not on the server (stale)',
      '… 5 more',
    ]);
  });
});

describe('deepEqual', () => {
  it('compares nested values, member order aside', () => {
    expect(deepEqual({ a: [1, { b: 2n }], c: null }, { c: null, a: [1, { b: 2n }] })).toBe(true);
    expect(deepEqual({ a: [1] }, { a: [1, 2] })).toBe(false);
    expect(deepEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(deepEqual(1n, 1)).toBe(false);
  });
});
