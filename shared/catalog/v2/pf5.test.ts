/**
 * The input rules of the v2 PF5 operations (shared/catalog/v2/pf5.ts), as the edge applies them (validateInputs):
 * group, login and symbol keys, the members each merge patch refuses (identity, server-derived and read-only fields,
 * members without a setter), group masks with paging, and what each entry declares (native patches and pages).
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../index.js';
import { pf5V2 } from './pf5.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../test/support/catalog/calls.js';

const op = (n: string): Operation => entryOf('v2.PF5.', n);
const call = callerOf('v2.PF5.');

/** What an entry declares besides its schemas, functions marked as such. */
const declared = (entry: Operation) =>
  JSON.parse(
    JSON.stringify(
      {
        tag: entry.tag,
        timeout: entry.timeout,
        read: entry.read,
        mutating: entry.mutating,
        destructive: entry.destructive,
        scope: entry.scope,
        paged: entry.paged,
        bodyLimitBytes: entry.bodyLimitBytes,
        controlCharacters: entry.controlCharacters,
        answer: entry.answer,
      },
      (_key, value) => (typeof value === 'function' ? 'function' : value),
    ),
  );

const USER_IMMUTABLE = [
  'login',
  'balance',
  'credit',
  'registration',
  'lastAccess',
  'lastPassChange',
  'lastIP',
  'balancePrevDay',
  'balancePrevMonth',
  'equityPrevDay',
  'equityPrevMonth',
  'commissionDaily',
  'commissionMonthly',
  'commissionAgentDaily',
  'commissionAgentMonthly',
];
const GROUP_IMMUTABLE = ['group', 'newsLang', 'commissions'];
const SYMBOL_IMMUTABLE = [
  'symbol',
  'currencyBaseDigits',
  'currencyProfitDigits',
  'currencyMarginDigits',
  'multiply',
  'sessionQuote',
  'sessionTrade',
];
const BY_GROUP: Array<[string, string, string]> = [
  ['PositionByGroup', 'position', 'read'],
  ['OrderByGroup', 'order', 'read'],
  ['DealByGroup', 'deal', 'history'],
];

const read = { timeout: 'read', mutating: false, destructive: false, scope: 'webapi' };
const change = { timeout: 'change', read: 'live', mutating: true, destructive: false, scope: 'webapi.write' };

describe('v2 PF5: the entries', () => {
  it('declares the PF5 operations', () => {
    expect(Object.keys(pf5V2).sort()).toStrictEqual([
      'DealByGroup',
      'GroupGet',
      'GroupRecord',
      'ManagerCurrent',
      'OrderByGroup',
      'PositionByGroup',
      'SymbolGet',
      'SymbolRecord',
      'TimeGet',
      'UserGet',
      'UserRecord',
    ]);
  });

  it('reads the time and the manager live and groups, users and symbols from the cache', () => {
    expect(declared(op('TimeGet'))).toStrictEqual({
      ...read,
      tag: 'Common',
      read: 'live',
      answer: { kind: 'live', command: 'TimeGet' },
    });
    expect(declared(op('ManagerCurrent'))).toStrictEqual({
      ...read,
      tag: 'Managers',
      read: 'live',
      answer: { kind: 'live', command: 'ManagerCurrent' },
    });
    expect(declared(op('GroupGet'))).toStrictEqual({
      ...read,
      tag: 'Groups',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'groups', key: 'group', what: 'group' },
    });
    expect(declared(op('UserGet'))).toStrictEqual({
      ...read,
      tag: 'Users',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' },
    });
    expect(declared(op('SymbolGet'))).toStrictEqual({
      ...read,
      tag: 'Symbols',
      read: 'cached',
      answer: { kind: 'cachedRecord', table: 'symbols', key: 'symbol', what: 'symbol' },
    });
  });

  it('patches natively with the server command of the same name', () => {
    expect(declared(op('GroupRecord'))).toStrictEqual({
      ...change,
      tag: 'Groups',
      answer: { kind: 'patch', native: { command: 'GroupRecord', args: 'function' } },
    });
    expect(declared(op('UserRecord'))).toStrictEqual({
      ...change,
      tag: 'Users',
      answer: { kind: 'patch', native: { command: 'UserRecord', args: 'function' } },
    });
    expect(declared(op('SymbolRecord'))).toStrictEqual({
      ...change,
      tag: 'Symbols',
      answer: { kind: 'patch', native: { command: 'SymbolRecord', args: 'function' } },
    });
  });

  it('sends the key and the validated patch to the native patch commands', () => {
    const args = (name: string) =>
      (op(name).answer as { native: { args: (a: Record<string, unknown>) => unknown } }).native.args;
    expect(args('GroupRecord')({ group: 'demo', body: { company: 'C' } })).toStrictEqual({
      group: 'demo',
      patch: { company: 'C' },
    });
    expect(args('UserRecord')({ login: 9007199254740993n, body: { name: null } })).toStrictEqual({
      login: 9007199254740993n,
      patch: { name: null },
    });
    expect(args('SymbolRecord')({ symbol: 'EURUSD', body: { point: 0.01 } })).toStrictEqual({
      symbol: 'EURUSD',
      patch: { point: 0.01 },
    });
  });

  it('reads positions, orders and deals by group mask live, paged natively by ticket', () => {
    for (const [name, key, timeout] of BY_GROUP) {
      expect(declared(op(name)), name).toStrictEqual({
        ...read,
        tag: 'Trades',
        timeout,
        read: 'live',
        paged: { key },
        answer: { kind: 'livePage', command: name, native: true },
      });
    }
  });

  it('gives every entry a summary: a sentence without gaps where a name was left out', () => {
    for (const entry of Object.values(pf5V2)) {
      expect(entry.summary.length, entry.id).toBeGreaterThan(20);
      expect(entry.summary, entry.id).not.toMatch(/ {2}| \.$|\( /);
      expect(entry.summary.endsWith('.'), entry.id).toBe(true);
    }
  });
});

describe('v2 PF5: keys', () => {
  it('takes a group of 1 to 16 characters', () => {
    for (const [name, body] of [
      ['GroupGet', none],
      ['GroupRecord', json({ company: 'C' })],
    ] as const) {
      const withBody = body.kind === 'json' ? { body: body.value } : {};
      expect(call(name, { group: 'g'.repeat(16) }, '', body), name).toStrictEqual(
        accepted({ group: 'g'.repeat(16), ...withBody }),
      );
      expect(call(name, { group: 'g'.repeat(17) }, '', body), name).toStrictEqual(
        refused('group: group must be at most 16 characters'),
      );
      expect(call(name, { group: '' }, '', body), name).toStrictEqual(refused('group: group must not be empty'));
    }
  });

  it('takes a 64-bit login exactly, a bigint beyond 2^53 - 1', () => {
    for (const [name, body] of [
      ['UserGet', none],
      ['UserRecord', json({ name: 'A' })],
    ] as const) {
      const withBody = body.kind === 'json' ? { body: body.value } : {};
      expect(call(name, { login: '1' }, '', body), name).toStrictEqual(accepted({ login: 1, ...withBody }));
      expect(call(name, { login: '9223372036854775807' }, '', body), name).toStrictEqual(
        accepted({ login: 9223372036854775807n, ...withBody }),
      );
      expect(call(name, { login: '9223372036854775808' }, '', body), name).toStrictEqual(
        refused('login: login must be at most 9223372036854775807'),
      );
      expect(call(name, { login: '0' }, '', body), name).toStrictEqual(refused('login: login must be at least 1'));
      expect(call(name, { login: 'x' }, '', body), name).toStrictEqual(
        refused('login: login must be a positive integer'),
      );
    }
  });

  it('takes a symbol of 1 to 12 characters', () => {
    for (const [name, body] of [
      ['SymbolGet', none],
      ['SymbolRecord', json({ point: 0.01 })],
    ] as const) {
      const withBody = body.kind === 'json' ? { body: body.value } : {};
      expect(call(name, { symbol: 'ABCDEFGHIJKL' }, '', body), name).toStrictEqual(
        accepted({ symbol: 'ABCDEFGHIJKL', ...withBody }),
      );
      expect(call(name, { symbol: 'ABCDEFGHIJKLM' }, '', body), name).toStrictEqual(
        refused('symbol: symbol must be at most 12 characters'),
      );
      expect(call(name, { symbol: '' }, '', body), name).toStrictEqual(refused('symbol: symbol must not be empty'));
    }
  });
});

describe('v2 PF5: UserRecord (merge patch of an account)', () => {
  const patch = (body: unknown) => call('UserRecord', { login: '100' }, '', json(body));

  it('passes the writable fields, null emptying one', () => {
    expect(patch({ name: null, leverage: 100, group: 'real', interestRate: 1.5, agent: 7 })).toStrictEqual(
      accepted({ login: 100, body: { name: null, leverage: 100, group: 'real', interestRate: 1.5, agent: 7 } }),
    );
  });

  it('refuses each identity and server-derived field, whatever the value, naming it', () => {
    for (const field of USER_IMMUTABLE) {
      expect(patch({ [field]: null }), field).toStrictEqual(refused(`body.${field}: ${field} cannot be changed`));
      expect(patch({ name: 'A', [field]: 1 }), field).toStrictEqual(
        refused(`body.${field}: ${field} cannot be changed`),
      );
    }
  });

  it('refuses an empty patch and unknown members', () => {
    expect(patch({})).toStrictEqual(refused('body: a merge patch must change at least one field'));
    expect(patch({ name: 'A', password: 'p' })).toStrictEqual(refused('body: unknown field password'));
  });
});

describe('v2 PF5: GroupRecord (merge patch of a group)', () => {
  const patch = (body: unknown) => call('GroupRecord', { group: 'demo' }, '', json(body));

  it('passes the writable fields, null emptying one', () => {
    expect(patch({ company: 'C', marginCall: null, server: 2 })).toStrictEqual(
      accepted({ group: 'demo', body: { company: 'C', marginCall: null, server: 2 } }),
    );
  });

  it('refuses the name and the members without a setter, naming each', () => {
    for (const field of GROUP_IMMUTABLE) {
      expect(patch({ [field]: null }), field).toStrictEqual(refused(`body.${field}: ${field} cannot be changed`));
    }
    expect(patch({ company: 'C', newsLang: [1], commissions: {} })).toStrictEqual(
      refused('body.newsLang: newsLang cannot be changed; body.commissions: commissions cannot be changed'),
    );
  });
});

describe('v2 PF5: SymbolRecord (merge patch of a symbol)', () => {
  const patch = (body: unknown) => call('SymbolRecord', { symbol: 'EURUSD' }, '', json(body));

  it('passes the writable fields, null emptying one', () => {
    expect(patch({ point: 0.01, currencyBase: 'EUR', description: null, digits: 5 })).toStrictEqual(
      accepted({ symbol: 'EURUSD', body: { point: 0.01, currencyBase: 'EUR', description: null, digits: 5 } }),
    );
  });

  it('refuses the name, the read-only fields and the sessions, naming each', () => {
    for (const field of SYMBOL_IMMUTABLE) {
      expect(patch({ [field]: null }), field).toStrictEqual(refused(`body.${field}: ${field} cannot be changed`));
      expect(patch({ digits: 5, [field]: 2 }), field).toStrictEqual(
        refused(`body.${field}: ${field} cannot be changed`),
      );
    }
  });
});

describe('v2 PF5: lists by group mask', () => {
  it('pass the mask with limit and cursor', () => {
    for (const [name] of BY_GROUP) {
      expect(call(name, { mask: '*,!demo*' }, '?limit=5000&cursor=c1', none), name).toStrictEqual(
        accepted({ mask: '*,!demo*', limit: 5000, cursor: 'c1' }),
      );
      expect(call(name, { mask: 'm'.repeat(1024) }, '', none), name).toStrictEqual(
        accepted({ mask: 'm'.repeat(1024) }),
      );
    }
  });

  it('refuse an empty mask, one of 1025 characters, and a limit past 5000', () => {
    for (const [name] of BY_GROUP) {
      expect(call(name, { mask: '' }, '', none), name).toStrictEqual(refused('mask: mask must not be empty'));
      expect(call(name, { mask: 'm'.repeat(1025) }, '', none), name).toStrictEqual(
        refused('mask: mask must be at most 1024 characters'),
      );
      expect(call(name, { mask: '*' }, '?limit=5001', none), name).toStrictEqual(
        refused('limit: limit must be at most 5000'),
      );
    }
  });
});
