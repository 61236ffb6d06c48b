/**
 * The input rules of the v2 PF4 Online entries (shared/catalog/v2/pf4/online.ts), as the edge applies them in
 * validateInputs: the paging query with its bounds and exact messages, and what each entry declares about itself.
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { accepted, callerOf, entryOf, refused } from '../../../../test/support/catalog/calls.js';

const entry = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');

const declared = (e: Operation) => ({
  method: e.method,
  path: e.path,
  tag: e.tag,
  response: e.response,
  timeout: e.timeout,
  read: e.read,
  mutating: e.mutating,
  destructive: e.destructive,
  scope: e.scope,
  paged: e.paged,
  answer: JSON.parse(JSON.stringify(e.answer)) as unknown,
});
const reading = {
  method: 'GET',
  tag: 'Online',
  response: 'PF4Online[]',
  timeout: 'read',
  mutating: false,
  destructive: false,
  scope: 'webapi',
  paged: { key: 'login' },
};

describe('v2 PF4 online: what each entry declares', () => {
  it('declares the cached and the live list, both paged by login', () => {
    expect(declared(entry('OnlineGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/OnlineGet',
      read: 'cached',
      answer: { kind: 'cachedList', table: 'online' },
    });
    expect(declared(entry('OnlineRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/OnlineRequest',
      read: 'live',
      answer: { kind: 'livePage', command: 'OnlineRequest', native: true },
    });
  });

  it('gives both entries a summary sentence', () => {
    for (const name of ['OnlineGet', 'OnlineRequest']) expect(entry(name).summary, name).toMatch(/^[A-Z].{20,}[.)]$/);
  });
});

describe('v2 PF4 online: paging query', () => {
  for (const name of ['OnlineGet', 'OnlineRequest']) {
    it(`${name} passes no paging values when none are given, and ignores undeclared ones`, () => {
      expect(call(name, {}, '?login=5')).toStrictEqual(accepted({}));
    });

    it(`${name} passes limit 1 to 5000 as a number and a cursor of up to 512 characters`, () => {
      expect(call(name, {}, `?limit=1&cursor=${'c'.repeat(512)}`)).toStrictEqual(
        accepted({ limit: 1, cursor: 'c'.repeat(512) }),
      );
      expect(call(name, {}, '?limit=5000&cursor=')).toStrictEqual(accepted({ limit: 5000, cursor: '' }));
    });

    it(`${name} refuses limit 0, limit 5001, a limit that is not digits and a 513-character cursor`, () => {
      expect(call(name, {}, '?limit=0')).toStrictEqual(refused('limit: limit must be at least 1'));
      expect(call(name, {}, '?limit=5001')).toStrictEqual(refused('limit: limit must be at most 5000'));
      expect(call(name, {}, '?limit=ten')).toStrictEqual(refused('limit: limit must be a positive integer'));
      expect(call(name, {}, `?cursor=${'c'.repeat(513)}`)).toStrictEqual(
        refused('cursor: cursor must be at most 512 characters'),
      );
    });
  }
});
