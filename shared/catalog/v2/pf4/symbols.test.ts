/**
 * The input rules of the v2 PF4 symbol operations (shared/catalog/v2/pf4/symbols.ts), as the edge applies them
 * (validateInputs): symbol names in paths and queries, the quick symbol change, the manual tick, the symbol
 * configuration replace and merge patch, and what each entry declares.
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { symbols } from './symbols.js';
import type { RawBody } from '../../inputs.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';

const op = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');

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

const cachedRead = {
  tag: 'Symbols',
  timeout: 'read',
  read: 'cached',
  mutating: false,
  destructive: false,
  scope: 'webapi',
};
const liveRead = { ...cachedRead, read: 'live' };
const change = {
  tag: 'Symbols',
  timeout: 'change',
  read: 'live',
  mutating: true,
  destructive: false,
  scope: 'webapi.write',
};

/** Entries with the symbol in the path, and a body each accepts. */
const SYMBOL_PATH: Record<string, RawBody> = {
  CfgRequestSymbolSymbol: none,
  SymbolSessionsGet: none,
  SymbolAdd: none,
  SymbolHide: none,
  CfgUpdateSymbol: json({ description: 'Euro' }),
  SymbolConfig: json({ description: 'Euro' }),
};
const bodyArgs = (body: RawBody) => (body.kind === 'json' ? { body: body.value } : {});

describe('v2 PF4 symbols: the entries', () => {
  it('declares the symbol operations', () => {
    expect(Object.keys(symbols).sort()).toStrictEqual([
      'CfgRequestSymbol',
      'CfgRequestSymbolSymbol',
      'CfgUpdateSymbol',
      'SymbolAdd',
      'SymbolChange',
      'SymbolConfig',
      'SymbolHide',
      'SymbolInfoGet',
      'SymbolInfoUpdated',
      'SymbolSendTick',
      'SymbolSessionsGet',
      'SymbolsGroupsGet',
      'SymbolsRefresh',
    ]);
  });

  it('answers the reads from the cache or live, as declared', () => {
    expect(declared(op('SymbolInfoGet'))).toStrictEqual({
      ...cachedRead,
      answer: { kind: 'cachedRecord', table: 'symbolInfo', key: 'symbol', what: 'symbol' },
    });
    expect(declared(op('SymbolInfoUpdated'))).toStrictEqual({
      ...cachedRead,
      paged: { key: 'symbol' },
      answer: { kind: 'custom' },
    });
    expect(declared(op('SymbolsGroupsGet'))).toStrictEqual({ ...cachedRead, answer: { kind: 'custom' } });
    expect(declared(op('CfgRequestSymbol'))).toStrictEqual({
      ...liveRead,
      answer: { kind: 'live', command: 'CfgRequestSymbol' },
    });
    expect(declared(op('CfgRequestSymbolSymbol'))).toStrictEqual({
      ...liveRead,
      answer: { kind: 'live', command: 'CfgRequestSymbol', keyedRead: true },
    });
    expect(declared(op('SymbolSessionsGet'))).toStrictEqual({
      ...cachedRead,
      answer: { kind: 'cachedRecord', table: 'symbolSessions', key: 'symbol', what: 'symbol', field: 'days' },
    });
  });

  it('declares the changes: replace and patch through the symbol configuration, live commands otherwise, the refresh as maintenance', () => {
    expect(declared(op('CfgUpdateSymbol'))).toStrictEqual({
      ...change,
      answer: {
        kind: 'replace',
        read: { command: 'CfgRequestSymbol', args: 'function' },
        write: { command: 'CfgUpdateSymbol' },
        dto: 'PF4SymbolConfigUpdate',
      },
    });
    expect(declared(op('SymbolConfig'))).toStrictEqual({
      ...change,
      answer: {
        kind: 'patch',
        read: { command: 'CfgRequestSymbol', args: 'function' },
        write: { command: 'CfgUpdateSymbol' },
        dto: 'PF4SymbolConfigUpdate',
      },
    });
    for (const name of ['SymbolAdd', 'SymbolHide', 'SymbolChange', 'SymbolSendTick']) {
      expect(declared(op(name)), name).toStrictEqual({ ...change, answer: { kind: 'live', command: name } });
    }
    expect(declared(op('SymbolsRefresh'))).toStrictEqual({
      ...change,
      timeout: 'maintenance',
      answer: { kind: 'live', command: 'SymbolsRefresh' },
    });
  });

  it('reads the configuration of the called symbol only, for the replace and the patch', () => {
    for (const name of ['CfgUpdateSymbol', 'SymbolConfig']) {
      const answer = op(name).answer as { read: { args: (a: unknown) => unknown } };
      expect(answer.read.args({ symbol: 'EURUSD', body: { description: 'Euro' } }), name).toStrictEqual({
        symbol: 'EURUSD',
      });
    }
  });

  it('gives every entry a summary: a sentence without gaps where a name was left out', () => {
    for (const entry of Object.values(symbols)) {
      expect(entry.summary.length, entry.id).toBeGreaterThan(20);
      expect(entry.summary, entry.id).not.toMatch(/ {2}| \.$|\( /);
      expect(entry.summary.endsWith('.'), entry.id).toBe(true);
    }
  });
});

describe('v2 PF4 symbols: the symbol name', () => {
  it('passes a symbol of 1 to 12 characters from the path', () => {
    for (const [name, body] of Object.entries(SYMBOL_PATH)) {
      expect(call(name, { symbol: 'E' }, '', body), name).toStrictEqual(accepted({ symbol: 'E', ...bodyArgs(body) }));
      expect(call(name, { symbol: 'ABCDEFGHIJKL' }, '', body), name).toStrictEqual(
        accepted({ symbol: 'ABCDEFGHIJKL', ...bodyArgs(body) }),
      );
    }
  });

  it('refuses an empty path symbol and one of 13 characters', () => {
    for (const [name, body] of Object.entries(SYMBOL_PATH)) {
      expect(call(name, { symbol: '' }, '', body), name).toStrictEqual(refused('symbol: symbol must not be empty'));
      expect(call(name, { symbol: 'ABCDEFGHIJKLM' }, '', body), name).toStrictEqual(
        refused('symbol: symbol must be at most 12 characters'),
      );
    }
  });

  it("takes SymbolInfoGet's symbol from the query, required and at most 12 characters", () => {
    expect(call('SymbolInfoGet', {}, '?symbol=EURUSD', none)).toStrictEqual(accepted({ symbol: 'EURUSD' }));
    expect(call('SymbolInfoGet', {}, '', none)).toStrictEqual(
      refused('symbol: Invalid input: expected string, received undefined'),
    );
    expect(call('SymbolInfoGet', {}, '?symbol=ABCDEFGHIJKLM', none)).toStrictEqual(
      refused('symbol: symbol must be at most 12 characters'),
    );
  });

  it('pages SymbolInfoUpdated with limit and cursor', () => {
    expect(call('SymbolInfoUpdated', {}, '?limit=1&cursor=EURUSD', none)).toStrictEqual(
      accepted({ limit: 1, cursor: 'EURUSD' }),
    );
    expect(call('SymbolInfoUpdated', {}, '?limit=0', none)).toStrictEqual(refused('limit: limit must be at least 1'));
  });
});

describe('v2 PF4 symbols: the configuration replace and merge patch', () => {
  it('takes a PF4SymbolConfigUpdate for the replace and refuses other members', () => {
    expect(call('CfgUpdateSymbol', { symbol: 'EURUSD' }, '', json({ description: 'Euro', digits: 5 }))).toStrictEqual(
      accepted({ symbol: 'EURUSD', body: { description: 'Euro', digits: 5 } }),
    );
    expect(call('CfgUpdateSymbol', { symbol: 'EURUSD' }, '', json({ point: 0.1 }))).toStrictEqual(
      refused('body: Unrecognized key: "point"'),
    );
  });

  it('takes a merge patch of PF4SymbolConfigUpdate fields, null emptying a field, and refuses an empty patch', () => {
    expect(call('SymbolConfig', { symbol: 'EURUSD' }, '', json({ description: null, digits: 3 }))).toStrictEqual(
      accepted({ symbol: 'EURUSD', body: { description: null, digits: 3 } }),
    );
    expect(call('SymbolConfig', { symbol: 'EURUSD' }, '', json({}))).toStrictEqual(
      refused('body: a merge patch must change at least one field'),
    );
    expect(call('SymbolConfig', { symbol: 'EURUSD' }, '', json({ description: 'Euro', point: 1 }))).toStrictEqual(
      refused('body: unknown field point'),
    );
  });
});

describe('v2 PF4 symbols: SymbolChange (the quick change)', () => {
  const quickChange = (body: unknown) => call('SymbolChange', {}, '', json(body));

  it('accepts a symbol of 1 and of 12 characters with spread and stops level 0; the spread balance may be negative', () => {
    expect(quickChange({ symbol: 'EURUSD', spread: 0, stopsLevel: 0, spreadBalance: -3, color: 255 })).toStrictEqual(
      accepted({ body: { symbol: 'EURUSD', spread: 0, stopsLevel: 0, spreadBalance: -3, color: 255 } }),
    );
    expect(quickChange({ symbol: 'E', spread: 4, stopsLevel: 10 })).toStrictEqual(
      accepted({ body: { symbol: 'E', spread: 4, stopsLevel: 10 } }),
    );
    expect(quickChange({ symbol: 'ABCDEFGHIJKL' })).toStrictEqual(accepted({ body: { symbol: 'ABCDEFGHIJKL' } }));
  });

  it('requires the symbol: absent, null and empty are refused alike', () => {
    for (const symbol of [undefined, null, '']) {
      expect(quickChange({ symbol, spread: 1 }), String(symbol)).toStrictEqual(
        refused('body.symbol: symbol is required'),
      );
    }
  });

  it('refuses a symbol of 13 characters', () => {
    expect(quickChange({ symbol: 'ABCDEFGHIJKLM' })).toStrictEqual(
      refused('body.symbol: symbol must be at most 12 characters'),
    );
  });

  it('refuses a negative spread and a negative stops level, each named', () => {
    expect(quickChange({ symbol: 'EURUSD', spread: -1 })).toStrictEqual(
      refused('body.spread: spread must be 0 or positive'),
    );
    expect(quickChange({ symbol: 'EURUSD', stopsLevel: -1 })).toStrictEqual(
      refused('body.stopsLevel: stopsLevel must be 0 or positive'),
    );
    expect(quickChange({ symbol: 'EURUSD', spread: -1, stopsLevel: -1 })).toStrictEqual(
      refused('body.spread: spread must be 0 or positive; body.stopsLevel: stopsLevel must be 0 or positive'),
    );
  });

  it('reports a missing symbol and a negative spread together', () => {
    expect(quickChange({ spread: -1 })).toStrictEqual(
      refused('body.symbol: symbol is required; body.spread: spread must be 0 or positive'),
    );
  });

  it('keeps the request record strict and needs a body', () => {
    expect(quickChange({ symbol: 'EURUSD', bid: 1 })).toStrictEqual(refused('body: Unrecognized key: "bid"'));
    expect(call('SymbolChange', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });
});

describe('v2 PF4 symbols: SymbolSendTick (a manual tick)', () => {
  const tick = (query: string) => call('SymbolSendTick', {}, query, none);

  it('converts bid and ask to numbers and accepts an ask equal to the bid', () => {
    expect(tick('?symbol=EURUSD&bid=1.1&ask=1.1')).toStrictEqual(accepted({ symbol: 'EURUSD', bid: 1.1, ask: 1.1 }));
    expect(tick('?symbol=EURUSD&bid=1e-5&ask=2E2')).toStrictEqual(
      accepted({ symbol: 'EURUSD', bid: 0.00001, ask: 200 }),
    );
  });

  it('refuses a bid of 0 or below', () => {
    expect(tick('?symbol=EURUSD&bid=0&ask=1')).toStrictEqual(refused('bid: bid must be positive'));
    expect(tick('?symbol=EURUSD&bid=-1&ask=1')).toStrictEqual(refused('bid: bid must be positive'));
  });

  it('refuses an ask below the bid, and reports both rules when both are broken', () => {
    expect(tick('?symbol=EURUSD&bid=2&ask=1.99')).toStrictEqual(refused('ask: ask must be at least bid'));
    expect(tick('?symbol=EURUSD&bid=-1&ask=-2')).toStrictEqual(
      refused('bid: bid must be positive; ask: ask must be at least bid'),
    );
  });

  it('names bid and ask when they are not numbers, and the symbol when it is too long', () => {
    expect(tick('?symbol=EURUSD&bid=x&ask=1')).toStrictEqual(refused('bid: bid must be a number'));
    expect(tick('?symbol=EURUSD&bid=1&ask=x')).toStrictEqual(refused('ask: ask must be a number'));
    expect(tick('?symbol=ABCDEFGHIJKLM&bid=1&ask=2')).toStrictEqual(
      refused('symbol: symbol must be at most 12 characters'),
    );
  });
});
