/**
 * The input rules of the v2 PF4 Margins entries (shared/catalog/v2/pf4/margins.ts), as the edge applies them in
 * validateInputs: the login in the path with its bounds and exact messages, and what each entry declares about itself.
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
  tag: 'Margins',
  response: 'PF4MarginLevel',
  timeout: 'read',
  mutating: false,
  destructive: false,
  scope: 'webapi',
  paged: undefined,
};

describe('v2 PF4 margins: what each entry declares', () => {
  it('declares the cached list, the cached level by login and the live level by login', () => {
    expect(declared(entry('MarginsGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/MarginsGet',
      response: 'PF4MarginLevel[]',
      read: 'cached',
      answer: { kind: 'cachedList', table: 'margins' },
    });
    expect(declared(entry('MarginLevelGet'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/MarginLevelGet/{login}',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'margins', key: 'login', what: 'open trades of login' },
    });
    expect(declared(entry('MarginLevelRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/MarginLevelRequest/{login}',
      read: 'live',
      answer: { kind: 'live', command: 'MarginLevelRequest', keyedRead: true },
    });
  });

  it('gives every margins entry a summary sentence', () => {
    for (const name of ['MarginsGet', 'MarginLevelGet', 'MarginLevelRequest'])
      expect(entry(name).summary, name).toMatch(/^[A-Z].{20,}[.)]$/);
  });
});

describe('v2 PF4 margins: inputs', () => {
  it('MarginsGet takes nothing and ignores query parameters', () => {
    expect(call('MarginsGet', {}, '?login=5&limit=1')).toStrictEqual(accepted({}));
  });

  for (const name of ['MarginLevelGet', 'MarginLevelRequest']) {
    it(`${name} passes a login of 1 to 2147483647 as a number`, () => {
      expect(call(name, { login: '1' }, '')).toStrictEqual(accepted({ login: 1 }));
      expect(call(name, { login: '2147483647' }, '')).toStrictEqual(accepted({ login: 2147483647 }));
    });

    it(`${name} refuses a login of 0, one beyond int32 and one that is not digits`, () => {
      expect(call(name, { login: '0' }, '')).toStrictEqual(refused('login: login must be at least 1'));
      expect(call(name, { login: '2147483648' }, '')).toStrictEqual(refused('login: login must be at most 2147483647'));
      expect(call(name, { login: '1e3' }, '')).toStrictEqual(refused('login: login must be a positive integer'));
      expect(call(name, {}, '')).toStrictEqual(refused('login: Invalid input: expected string, received undefined'));
    });
  }
});
