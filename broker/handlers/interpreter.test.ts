/**
 * The generic interpreter in-process, answer kind by answer kind, on real catalog entries (and a few made-up ones where
 * no entry has the combination): a pumping cache filled by resync events and a scripted trading server that records
 * every command it is sent. Checked: the exact command, arguments, deadline and failure context sent; the exact answer
 * (cached JSON, shaped live records, paging meta); not-found and cursor refusals by code, message and manager code;
 * cached reads that wait for the first snapshot; and the declarations refused when a handler is built.
 *
 * The helpers live here rather than in a support module: every non-test file under broker/handlers is mutated by the
 * mutation runs.
 */
import { describe, expect, it } from 'vitest';
import { findOperation, type Operation } from '../../shared/catalog/index.js';
import type { Answer, Live } from '../../shared/catalog/answer.js';
import { OperationError, type WebApiErrorCode } from '../../shared/errors.js';
import type { EventKind, Family } from '../../shared/protocol.js';
import { shapeRecord } from '../../shared/records/shape.js';
import { NOT_FOUND_CODE } from '../../shared/resultCodes.js';
import { PumpCache } from '../cache/pumpCache.js';
import type { TradePlatform } from '../platforms/tradePlatform.js';
import type { FailureContext } from '../session/managerErrors.js';
import type { CallDeadline } from '../session/managerSession.js';
import { asJson } from '../../test/support/broker/handlers.js';
import { CACHE_CLOSED, fromCache, type HandlerResult, resultJson } from './handler.js';
import { commandArgs, interpret, responseShaper } from './interpreter.js';
import { BAD_CURSOR, encodeCursor } from './paging.js';

type Row = Record<string, unknown>;
type Args = Record<string, unknown>;

// ---- a scripted trading server, a platform, a call ---------------------------------------------------------------

interface Sent {
  command: string;
  args: Args | undefined;
  deadline: CallDeadline;
  context: FailureContext | undefined;
}

/** Records every request; `reply` answers it (a throw rejects the request). */
class ScriptedSession {
  readonly sent: Sent[] = [];
  reply: (command: string, args: Args | undefined) => unknown = (command) => {
    throw new Error(`unexpected command ${command}`);
  };

  request(command: string, args: Args | undefined, deadline: CallDeadline, context?: FailureContext): Promise<unknown> {
    this.sent.push({ command, args, deadline, context });
    return new Promise((resolve) => resolve(this.reply(command, args)));
  }

  /** Answers the commands in turn with these values. */
  answers(...values: unknown[]): void {
    const queue = [...values];
    this.reply = () => queue.shift();
  }
}

const DEADLINE = 1_800_000_005_000;

function snapshot(cache: PumpCache, tables: Partial<Record<EventKind, Row[]>>): void {
  cache.apply({ event: 'resync', op: 'begin', record: { server: 'test', family: cache.family } });
  for (const [kind, items] of Object.entries(tables))
    cache.apply({ event: 'resync', op: 'chunk', record: { kind, items } });
  cache.apply({ event: 'resync', op: 'end', record: {} });
}

/** A platform whose cache holds `tables` as one snapshot (none: not ready yet). */
function platformOf(family: Family, tables?: Partial<Record<EventKind, Row[]>>) {
  const cache = new PumpCache(family, { clock: () => 0 });
  if (tables) snapshot(cache, tables);
  const session = new ScriptedSession();
  const platform = { id: `${family.toLowerCase()}-test`, family, cache, session } as unknown as TradePlatform;
  return { platform, cache, session };
}

function op(id: string): Operation {
  const entry = findOperation(id);
  if (!entry) throw new Error(`no catalog entry ${id}`);
  return entry;
}

/** A made-up entry: a real one with another answer (and paging), for combinations no catalog entry has. */
function variant(id: string, answer: Answer<Args>, extra: Partial<Operation> = {}): Operation {
  return { ...op(id), id: `test.${id}`, answer, ...extra };
}

function call(entry: Operation, platform: TradePlatform, args: Args = {}, deadline: CallDeadline = DEADLINE) {
  const run = interpret(entry);
  if (!run) throw new Error(`${entry.id} has no generic handler`);
  return asJson(run({ platform, args, deadline }));
}

/** The error `run` throws or rejects with. */
async function failure(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

/** The error `run` throws synchronously. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a synchronous throw');
}

function expectError(error: unknown, code: WebApiErrorCode, message: string, managerCode: number | null = null): void {
  expect(error).toBeInstanceOf(OperationError);
  const e = error as OperationError;
  expect({ code: e.code, message: e.message, managerCode: e.managerCode }).toStrictEqual({
    code,
    message,
    managerCode,
  });
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const parsed = (result: HandlerResult) => JSON.parse(resultJson(result)!) as Row[];
const keysOf = (result: HandlerResult, key: string) => parsed(result).map((row) => row[key]);

const PF4_NOT_FOUND = NOT_FOUND_CODE.PF4;
const PF5_NOT_FOUND = NOT_FOUND_CODE.PF5;

// ---- fixtures ------------------------------------------------------------------------------------------------------

const user = (login: number, extra: Row = {}): Row => ({
  login,
  group: 'demo',
  name: `User ${login}`,
  leverage: 100,
  ...extra,
});
const trade = (order: number, extra: Row = {}): Row => ({
  order,
  login: 1000 + (order % 3),
  symbol: order % 2 ? 'EURUSD' : 'GBPUSD',
  tradeCommand: 'Buy',
  volume: 10,
  ...extra,
});

// ---- building handlers -----------------------------------------------------------------------------------------------

describe('building handlers from declarations', () => {
  it('builds none for custom answers and for entries without an answer', () => {
    expect(interpret(op('v2.PF4.TradesGetByLogin'))).toBeUndefined();
    expect(interpret(op('registry.Registry.TradePlatforms'))).toBeUndefined();
  });

  it('builds one handler for each declared kind', () => {
    for (const id of [
      'v2.PF4.UserRecordGet',
      'v2.PF4.TradesGet',
      'v2.PF4.UserRecordRequest',
      'v2.PF4.UsersRequest',
      'v2.PF4.UserRecordUpdate',
      'v2.PF4.UserRecord',
      'v2.PF5.UserRecord',
    ]) {
      expect(typeof interpret(op(id)), id).toBe('function');
    }
  });

  it('refuses a cached answer without a family, or on a table the family does not cache', () => {
    const noFamily = (answer: Answer<Args>) => variant('v2.PF4.UserRecordGet', answer, { family: null });
    expect(() => interpret(noFamily({ kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' }))).toThrow(
      new Error('test.v2.PF4.UserRecordGet: a cached answer needs a family'),
    );
    expect(() => interpret(noFamily({ kind: 'cachedList', table: 'users' }))).toThrow(
      new Error('test.v2.PF4.UserRecordGet: a cached answer needs a family'),
    );
    expect(() =>
      interpret(
        variant('v2.PF4.UserRecordGet', { kind: 'cachedRecord', table: 'positions', key: 'login', what: 'login' }),
      ),
    ).toThrow(new Error('test.v2.PF4.UserRecordGet: no cached table positions on PF4'));
    expect(() =>
      interpret(
        variant('v2.PF4.TradeRecordGet', {
          kind: 'cachedRecord',
          table: 'trades',
          orIn: ['closedDeals'],
          key: 'order',
          what: 'order',
        }),
      ),
    ).toThrow(new Error('test.v2.PF4.TradeRecordGet: no cached table closedDeals on PF4'));
    expect(() => interpret(variant('v2.PF5.UserGet', { kind: 'cachedList', table: 'margins' }))).toThrow(
      new Error('test.v2.PF5.UserGet: no cached table margins on PF5'),
    );
  });

  it("refuses a paged cached list whose paging key is not the table's key", () => {
    expect(() =>
      interpret(variant('v2.PF4.TradesGet', { kind: 'cachedList', table: 'trades' }, { paged: { key: 'login' } })),
    ).toThrow(new Error('test.v2.PF4.TradesGet: pages by login but the trades table is keyed by order'));
    expect(() =>
      interpret(
        variant('v2.PF4.TradesGet', { kind: 'cachedList', table: 'trades' }, { paged: { key: ['order', 'login'] } }),
      ),
    ).toThrow(new Error('test.v2.PF4.TradesGet: pages by order,login but the trades table is keyed by order'));
    // Its own key, even as a one-field tuple, is not a tuple the table pages by.
    expect(() =>
      interpret(variant('v2.PF4.TradesGet', { kind: 'cachedList', table: 'trades' }, { paged: { key: ['order'] } })),
    ).toThrow(new Error('test.v2.PF4.TradesGet: pages by order but the trades table is keyed by order'));
  });

  it("refuses a live page without the entry's paging key, and a native one keyed by several fields", () => {
    expect(() =>
      interpret(variant('v2.PF4.UsersRequest', { kind: 'livePage', command: 'UsersRequest' }, { paged: undefined })),
    ).toThrow(new Error("test.v2.PF4.UsersRequest: a live page needs the entry's paging key"));
    expect(() =>
      interpret(variant('v2.PF4.CfgRequestAccess', { kind: 'livePage', command: 'CfgRequestAccess', native: true })),
    ).toThrow(new Error('test.v2.PF4.CfgRequestAccess: a native page is keyed by one field'));
  });

  it('refuses a replace or patch whose DTO is not a contract record', () => {
    const replace = (dto: string) =>
      variant('v2.PF4.UserRecordUpdate', {
        kind: 'replace',
        dto,
        read: { command: 'UserRecordRequest' },
        write: { command: 'UserRecordUpdate' },
      });
    expect(() => interpret(replace('PF4Nothing'))).toThrow(new Error('no contract record PF4Nothing'));
    // An enum is a contract schema without fields.
    expect(() => interpret(replace('TradeCommand'))).toThrow(new Error('no contract record TradeCommand'));
    expect(() =>
      interpret(
        variant('v2.PF4.UserRecord', {
          kind: 'patch',
          dto: 'PF4Nothing',
          read: { command: 'UserRecordRequest' },
          write: { command: 'UserRecordUpdate' },
        }),
      ),
    ).toThrow(new Error('no contract record PF4Nothing'));
  });

  it('refuses a read-merge-write patch that lacks its read, its write or its DTO', () => {
    const read = { command: 'UserRecordRequest' };
    const write = { command: 'UserRecordUpdate' };
    for (const answer of [
      { write, dto: 'PF4UserUpdate' },
      { read, dto: 'PF4UserUpdate' },
      { read, write },
    ]) {
      expect(() => interpret(variant('v2.PF4.UserRecord', { kind: 'patch', ...answer }))).toThrow(
        new Error('test.v2.PF4.UserRecord: a read-merge-write patch needs read, write and dto'),
      );
    }
  });
});

// ---- argument mapping and shaping ------------------------------------------------------------------------------------

describe('manager arguments and response shaping', () => {
  it("uses the declared arguments, built from the call's", () => {
    const answer = op('v2.PF4.BackupRestoreUsers').answer as Live<Args>;
    expect(commandArgs(answer, { body: [{ login: 7 }] })).toStrictEqual({ records: [{ login: 7 }] });
    expect(commandArgs(answer, { body: [] })).toStrictEqual({ records: [] });
    expect(commandArgs(op('v2.PF4.EnsureGroupNameExist').answer as Live<Args>, { group: 'demo' })).toBeUndefined();
  });

  it("otherwise passes a copy of the call's arguments, the body under record", () => {
    const args = { login: 7, limit: 2 };
    const sent = commandArgs({ command: 'X' }, args);
    expect(sent).toStrictEqual({ login: 7, limit: 2 });
    expect(sent).not.toBe(args);
    expect(commandArgs({ command: 'X' }, { login: 7, body: { name: 'A' } })).toStrictEqual({
      login: 7,
      record: { name: 'A' },
    });
    expect(commandArgs({ command: 'X' }, { body: null })).toStrictEqual({ record: null });
    expect(commandArgs({ command: 'X' }, { login: 7, body: undefined })).toStrictEqual({ login: 7 });
  });

  it("shapes answers as the entry's contract record, and passes inline schemas through", () => {
    const online = responseShaper(op('v2.PF4.OnlineGet'));
    expect(online([{ login: 5, extra: 'x' }])).toStrictEqual([{ login: 5, group: null }]);
    const boolean = responseShaper(op('v2.PF4.LicenseCheck'));
    const value = { any: ['thing'] };
    expect(boolean(value)).toBe(value);
  });
});

// ---- cached records --------------------------------------------------------------------------------------------------

describe('cached records', () => {
  it("answers the cached row's JSON at once", () => {
    const { platform, cache } = platformOf('PF4', { users: [user(1), user(2, { name: 'Bob', extra: 'dropped' })] });
    const result = call(op('v2.PF4.UserRecordGet'), platform, { login: 2 });
    expect(result).toStrictEqual({ json: JSON.stringify(cache.get('users', 2)) });
    const row = JSON.parse(resultJson(result as HandlerResult)!) as Row;
    expect(row).toMatchObject({ login: 2, name: 'Bob', group: 'demo', leverage: 100, balance: 0 });
    expect(row).not.toHaveProperty('extra');
  });

  it("answers a key the cache lacks as not found, naming it, with the family's code", () => {
    const { platform } = platformOf('PF4', { users: [user(1)] });
    expectError(
      thrown(() => call(op('v2.PF4.UserRecordGet'), platform, { login: 9 })),
      'NotFound',
      'login 9 not found',
      PF4_NOT_FOUND,
    );
    const ticks = platformOf('PF4', { ticks: [{ symbol: 'EURUSD', bid: 1.1, ask: 1.2 }] });
    expectError(
      thrown(() => call(op('v2.PF4.TickInfoLastSymbol'), ticks.platform, { symbol: 'XAUUSD' })),
      'NotFound',
      'no quote for symbol XAUUSD not found',
      PF4_NOT_FOUND,
    );
    const pf5 = platformOf('PF5', { users: [{ login: 1 }] });
    expectError(
      thrown(() => call(op('v2.PF5.UserGet'), pf5.platform, { login: 5 })),
      'NotFound',
      'login 5 not found',
      PF5_NOT_FOUND,
    );
  });

  it('reads an id beyond 2^53 − 1 exactly', () => {
    const big = 9007199254740993n;
    const { platform } = platformOf('PF5', { users: [{ login: big, name: 'Big' }, { login: 9007199254740992 }] });
    const result = call(op('v2.PF5.UserGet'), platform, { login: big }) as HandlerResult;
    expect(resultJson(result)).toMatch(/^\{"login":9007199254740993,"group":null,"name":"Big",/);
  });

  it('looks in the further tables in order: an open trade first, then a recently closed one', () => {
    const { platform, cache } = platformOf('PF4', {
      trades: [trade(1), trade(2), trade(3, { tradeRecordState: 'Closed' })],
    });
    // The same ticket open and closed cannot come from the server; put directly, it shows which table is read first.
    cache.table('closedTrades')!.put({ ...cache.get('trades', 2)!, comment: 'closed copy' });
    const entry = op('v2.PF4.TradeRecordGet');
    expect(JSON.parse(resultJson(call(entry, platform, { order: 2 }) as HandlerResult)!)).toMatchObject({
      order: 2,
      comment: null,
    });
    expect(call(entry, platform, { order: 3 })).toStrictEqual({ json: JSON.stringify(cache.get('closedTrades', 3)) });
    expect(JSON.parse(resultJson(call(entry, platform, { order: 3 }) as HandlerResult)!)).toMatchObject({
      order: 3,
      tradeRecordState: 'Closed',
    });
    expectError(
      thrown(() => call(entry, platform, { order: 4 })),
      'NotFound',
      'order 4 not found',
      PF4_NOT_FOUND,
    );
    // The open-trades lookup alone does not find a closed one.
    expectError(
      thrown(() => call(op('v2.PF4.TradesGetTicket'), platform, { ticket: 3 })),
      'NotFound',
      'open trade 3 not found',
      PF4_NOT_FOUND,
    );
  });

  it('answers a member of the row when the answer names one: an array as JSON', () => {
    const secGroups = Array.from({ length: 32 }, (_, i) => ({ show: i % 2, trade: 1, spreadDiff: i }));
    const { platform, cache } = platformOf('PF4', {
      groups: [
        {
          group: 'demo',
          currency: 'USD',
          secGroups,
          secMargins: [{ symbol: 'EURUSD', swapLong: 1 }, { symbol: 'X' }],
          secMarginsTotal: 1,
        },
      ],
    });
    const row = cache.get('groupSecurities', 'demo')!;
    expect(call(op('v2.PF4.GroupSecGroupsGet'), platform, { group: 'demo' })).toStrictEqual({
      json: JSON.stringify(row.secGroups),
    });
    const margins = call(op('v2.PF4.GroupSecMarginsGet'), platform, { group: 'demo' }) as HandlerResult;
    expect(margins).toStrictEqual({ json: JSON.stringify(row.secMargins) });
    expect(parsed(margins)).toStrictEqual([{ symbol: 'EURUSD', swapLong: 1, swapShort: 0, marginDivider: 0 }]);
    expectError(
      thrown(() => call(op('v2.PF4.GroupSecGroupsGet'), platform, { group: 'Demo' })),
      'NotFound',
      'group Demo not found',
      PF4_NOT_FOUND,
    );
  });

  it('answers a member that is not an object as data, and a missing or null one as null', () => {
    const { platform } = platformOf('PF4', { users: [user(1, { name: 'Ann', leverage: 0, group: null })] });
    const member = (field: string) =>
      call(
        variant('v2.PF4.UserRecordGet', { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login', field }),
        platform,
        { login: 1 },
      );
    expect(member('name')).toStrictEqual({ data: 'Ann' });
    expect(member('leverage')).toStrictEqual({ data: 0 });
    expect(member('group')).toStrictEqual({ data: null });
    expect(member('nothing')).toStrictEqual({ data: null });
  });
});

// ---- waiting for the first snapshot ----------------------------------------------------------------------------------

describe('cached reads before the first snapshot', () => {
  it('waits for the snapshot, then answers from it', async () => {
    const { platform, cache } = platformOf('PF4');
    const pending = call(op('v2.PF4.UserRecordGet'), platform, { login: 2 });
    expect(pending).toBeInstanceOf(Promise);
    let answered: HandlerResult | undefined;
    void (pending as Promise<HandlerResult>).then((r) => {
      answered = r;
    });
    await settle();
    expect(answered).toBeUndefined();
    snapshot(cache, { users: [user(1), user(2)] });
    await settle();
    expect(answered).toStrictEqual({ json: JSON.stringify(cache.get('users', 2)) });
  });

  it('answers not-found only once the snapshot lacks the key', async () => {
    const { platform, cache } = platformOf('PF4');
    let error: unknown;
    void (call(op('v2.PF4.UserRecordGet'), platform, { login: 3 }) as Promise<HandlerResult>).catch((e) => {
      error = e;
    });
    await settle();
    expect(error).toBeUndefined();
    snapshot(cache, { users: [user(1)] });
    await settle();
    expectError(error, 'NotFound', 'login 3 not found', PF4_NOT_FOUND);
  });

  it('waits for a list too, and pages it once the snapshot lands', async () => {
    const { platform, cache } = platformOf('PF4');
    const pending = call(op('v2.PF4.OnlineGet'), platform, { limit: 2 });
    expect(pending).toBeInstanceOf(Promise);
    snapshot(cache, { online: [{ login: 3 }, { login: 1 }, { login: 2 }] });
    const page = await pending;
    expect(keysOf(page, 'login')).toStrictEqual([1, 2]);
    expect(page.paging).toStrictEqual({ nextCursor: encodeCursor(2), hasMore: true });
  });

  it('answers NoConnect, not a false not-found or an empty list, when the platform closes before its snapshot', async () => {
    const { platform, cache } = platformOf('PF4');
    const record = call(op('v2.PF4.UserRecordGet'), platform, { login: 1 });
    const list = call(op('v2.PF4.GroupsGet'), platform);
    cache.dispose();
    expectError(await failure(() => record), 'NoConnect', CACHE_CLOSED);
    expectError(await failure(() => list), 'NoConnect', CACHE_CLOSED);
  });
});

describe('fromCache', () => {
  it('runs the read at once on a ready cache and answers its result as is', () => {
    const { platform } = platformOf('PF4', {});
    const result = { data: 1 };
    expect(fromCache({ platform, args: {}, deadline: DEADLINE }, () => result)).toBe(result);
    expect(
      thrown(() =>
        fromCache({ platform, args: {}, deadline: DEADLINE }, () => {
          throw new Error('read failed');
        }),
      ),
    ).toStrictEqual(new Error('read failed'));
  });

  it('runs the read once, after the snapshot, on a cache not ready yet', async () => {
    const { platform, cache } = platformOf('PF4');
    let reads = 0;
    const pending = fromCache({ platform, args: {}, deadline: DEADLINE }, () => ({ data: ++reads }));
    await settle();
    expect(reads).toBe(0);
    snapshot(cache, {});
    expect(await pending).toStrictEqual({ data: 1 });
    snapshot(cache, {});
    await settle();
    expect(reads).toBe(1);
  });
});

// ---- cached lists ----------------------------------------------------------------------------------------------------

describe('cached lists', () => {
  it('answers a whole table in key order, without paging meta when the entry does not page', () => {
    const { platform, cache } = platformOf('PF4', { groups: [{ group: 'b' }, { group: 'B' }, { group: 'a' }] });
    const rows = ['B', 'a', 'b'].map((g) => cache.get('groups', g));
    expect(call(op('v2.PF4.GroupsGet'), platform)).toStrictEqual({ json: JSON.stringify(rows) });
    // Paging arguments mean nothing to a list that does not page.
    expect(call(op('v2.PF4.GroupsGet'), platform, { limit: 1, cursor: '!!' })).toStrictEqual({
      json: JSON.stringify(rows),
    });
    expect(call(op('v2.PF4.GroupsGet'), platformOf('PF4', {}).platform)).toStrictEqual({ json: '[]' });
  });

  describe("paged by the table's key", () => {
    const setup = () => platformOf('PF4', { trades: [5, 1, 9, 3, 7].map((o) => trade(o)) });
    const entry = op('v2.PF4.TradesGet');

    it('answers the first, a middle and the last page, each with its cursor', () => {
      const { platform, cache } = setup();
      const first = call(entry, platform, { limit: 2 }) as HandlerResult;
      expect(first).toStrictEqual({
        json: JSON.stringify([cache.get('trades', 1), cache.get('trades', 3)]),
        paging: { nextCursor: encodeCursor(3), hasMore: true },
      });
      const middle = call(entry, platform, { limit: 2, cursor: first.paging!.nextCursor }) as HandlerResult;
      expect(keysOf(middle, 'order')).toStrictEqual([5, 7]);
      expect(middle.paging).toStrictEqual({ nextCursor: encodeCursor(7), hasMore: true });
      const last = call(entry, platform, { limit: 2, cursor: middle.paging!.nextCursor }) as HandlerResult;
      expect(keysOf(last, 'order')).toStrictEqual([9]);
      expect(last.paging).toStrictEqual({ nextCursor: null, hasMore: false });
    });

    it('answers the whole list as one page without a limit, and nothing after the last key', () => {
      const { platform } = setup();
      const all = call(entry, platform) as HandlerResult;
      expect(keysOf(all, 'order')).toStrictEqual([1, 3, 5, 7, 9]);
      expect(all.paging).toStrictEqual({ nextCursor: null, hasMore: false });
      expect(call(entry, platform, { limit: 3, cursor: encodeCursor(9) })).toStrictEqual({
        json: '[]',
        paging: { nextCursor: null, hasMore: false },
      });
      expect(keysOf(call(entry, platform, { cursor: encodeCursor(4) }) as HandlerResult, 'order')).toStrictEqual([
        5, 7, 9,
      ]);
    });

    it("refuses a cursor that is not one, or holds a key of another type than the table's", () => {
      const { platform } = setup();
      for (const cursor of [
        'not a cursor',
        encodeCursor(-1),
        encodeCursor(2.5),
        encodeCursor([1]),
        encodeCursor('7'),
      ]) {
        expectError(
          thrown(() => call(entry, platform, { limit: 2, cursor })),
          'Validation',
          BAD_CURSOR,
        );
      }
      // An empty table has no key type to hold a text cursor to: nothing follows it.
      const empty = platformOf('PF4', {}).platform;
      expect(call(entry, empty, { limit: 2, cursor: encodeCursor('7') })).toStrictEqual({
        json: '[]',
        paging: { nextCursor: null, hasMore: false },
      });
    });

    it('refuses a malformed cursor at once, even before the first snapshot', () => {
      const { platform } = platformOf('PF4');
      expectError(
        thrown(() => call(entry, platform, { limit: 2, cursor: '%%' })),
        'Validation',
        BAD_CURSOR,
      );
    });
  });

  it("reads through an index: the rows of the argument's value, in key order", () => {
    const { platform, cache } = platformOf('PF4', { trades: [6, 1, 4, 3, 2].map((o) => trade(o)) });
    const entry = op('v2.PF4.TradesGetBySymbol');
    expect(call(entry, platform, { symbol: 'GBPUSD' })).toStrictEqual({
      json: JSON.stringify([2, 4, 6].map((o) => cache.get('trades', o))),
    });
    expect(call(entry, platform, { symbol: 'XAUUSD' })).toStrictEqual({ json: '[]' });
    // v1 PF5: a login's positions.
    const pf5 = platformOf('PF5', {
      positions: [
        { position: 9, login: 1 },
        { position: 3, login: 2 },
        { position: 5, login: 1 },
      ],
    });
    expect(
      keysOf(call(op('v1.PF5.PositionGet'), pf5.platform, { login: 1 }) as HandlerResult, 'position'),
    ).toStrictEqual([5, 9]);
  });

  it("pages an index bucket by the table's key", () => {
    const { platform } = platformOf('PF4', { trades: [1, 2, 3, 4, 5, 6, 7, 8].map((o) => trade(o)) });
    const entry = variant('v2.PF4.TradesGet', {
      kind: 'cachedList',
      table: 'trades',
      index: { name: 'symbol', arg: 'symbol' },
    });
    const first = call(entry, platform, { symbol: 'EURUSD', limit: 3 }) as HandlerResult;
    expect(keysOf(first, 'order')).toStrictEqual([1, 3, 5]);
    expect(first.paging).toStrictEqual({ nextCursor: encodeCursor(5), hasMore: true });
    const last = call(entry, platform, {
      symbol: 'EURUSD',
      limit: 3,
      cursor: first.paging!.nextCursor,
    }) as HandlerResult;
    expect(keysOf(last, 'order')).toStrictEqual([7]);
    expect(last.paging).toStrictEqual({ nextCursor: null, hasMore: false });
    expect(call(entry, platform, { symbol: 'EURUSD', cursor: encodeCursor(7) })).toStrictEqual({
      json: '[]',
      paging: { nextCursor: null, hasMore: false },
    });
  });

  it("filters an index bucket by the answer's condition, which sees the call's arguments", () => {
    const { platform } = platformOf('PF4', {
      trades: [1, 2, 3, 4, 5, 6].map((o) => trade(o, { tradeCommand: o > 3 ? 'Sell' : 'Buy' })),
    });
    const entry = variant('v2.PF4.TradesGetBySymbol', {
      kind: 'cachedList',
      table: 'trades',
      index: { name: 'symbol', arg: 'symbol' },
      where: (row, a) => row.tradeCommand === a.side,
    });
    expect(keysOf(call(entry, platform, { symbol: 'EURUSD', side: 'Buy' }) as HandlerResult, 'order')).toStrictEqual([
      1, 3,
    ]);
    expect(keysOf(call(entry, platform, { symbol: 'EURUSD', side: 'Sell' }) as HandlerResult, 'order')).toStrictEqual([
      5,
    ]);
  });

  it("filters the whole table by the answer's condition, in key order", () => {
    const commands = ['Buy', 'BuyLimit', 'Sell', 'SellStop', 'Buy'];
    const { platform, cache } = platformOf('PF4', {
      trades: commands.map((c, i) => trade(10 - i, { tradeCommand: c })),
    });
    expect(call(op('v2.PF4.TradesGetByMarket'), platform)).toStrictEqual({
      json: JSON.stringify([6, 8, 10].map((o) => cache.get('trades', o))),
    });
    // v1 PF5: accounts by group mask, the mask taken from the call.
    const pf5 = platformOf('PF5', {
      users: [
        { login: 1, group: 'real\\a' },
        { login: 2, group: 'demo\\a' },
        { login: 3, group: 'real\\vip' },
        { login: 4 },
      ],
    });
    const byGroup = op('v1.PF5.UserGetByGroup');
    expect(keysOf(call(byGroup, pf5.platform, { mask: 'real\\*' }) as HandlerResult, 'login')).toStrictEqual([1, 3]);
    expect(keysOf(call(byGroup, pf5.platform, { mask: 'real\\*,!real\\vip' }) as HandlerResult, 'login')).toStrictEqual(
      [1],
    );
    expect(call(byGroup, pf5.platform, { mask: 'none' })).toStrictEqual({ json: '[]' });
  });

  describe('filtered and paged, walking the table from the cursor', () => {
    // 1100 trades (the walk reads the table 512 rows at a time); every hundredth is a Sell.
    const setup = () =>
      platformOf('PF4', {
        trades: Array.from({ length: 1100 }, (_, i) =>
          trade(i + 1, { tradeCommand: (i + 1) % 100 === 0 ? 'Sell' : 'BuyLimit' }),
        ),
      });
    const entry = variant('v2.PF4.TradesGet', {
      kind: 'cachedList',
      table: 'trades',
      where: (row) => row.tradeCommand === 'Sell',
    });

    it("answers full pages across the walk's chunks, and a last page without a cursor", () => {
      const { platform } = setup();
      const first = call(entry, platform, { limit: 4 }) as HandlerResult;
      expect(keysOf(first, 'order')).toStrictEqual([100, 200, 300, 400]);
      expect(first.paging).toStrictEqual({ nextCursor: encodeCursor(400), hasMore: true });
      const middle = call(entry, platform, { limit: 4, cursor: first.paging!.nextCursor }) as HandlerResult;
      expect(keysOf(middle, 'order')).toStrictEqual([500, 600, 700, 800]);
      expect(middle.paging).toStrictEqual({ nextCursor: encodeCursor(800), hasMore: true });
      const last = call(entry, platform, { limit: 4, cursor: middle.paging!.nextCursor }) as HandlerResult;
      expect(keysOf(last, 'order')).toStrictEqual([900, 1000, 1100]);
      expect(last.paging).toStrictEqual({ nextCursor: null, hasMore: false });
    });

    it('says nothing more follows a page that the last match fills exactly', () => {
      const { platform } = setup();
      const exact = call(entry, platform, { limit: 3, cursor: encodeCursor(800) }) as HandlerResult;
      expect(keysOf(exact, 'order')).toStrictEqual([900, 1000, 1100]);
      expect(exact.paging).toStrictEqual({ nextCursor: null, hasMore: false });
      const all = call(entry, platform, { limit: 11 }) as HandlerResult;
      expect(all.paging).toStrictEqual({ nextCursor: null, hasMore: false });
      const oneShort = call(entry, platform, { limit: 10 }) as HandlerResult;
      expect(oneShort.paging).toStrictEqual({ nextCursor: encodeCursor(1000), hasMore: true });
    });

    it('answers every match as one page without a limit, and nothing past the last', () => {
      const { platform } = setup();
      const all = call(entry, platform) as HandlerResult;
      expect(keysOf(all, 'order')).toStrictEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100]);
      expect(all.paging).toStrictEqual({ nextCursor: null, hasMore: false });
      expect(call(entry, platform, { limit: 2, cursor: encodeCursor(1100) })).toStrictEqual({
        json: '[]',
        paging: { nextCursor: null, hasMore: false },
      });
      expectError(
        thrown(() => call(entry, platform, { limit: 2, cursor: encodeCursor('x') })),
        'Validation',
        BAD_CURSOR,
      );
    });
  });
});

// ---- live commands ---------------------------------------------------------------------------------------------------

describe('live commands', () => {
  it("sends the command with the call's arguments and deadline, a keyed read as such, and shapes the answer", async () => {
    const { platform, session } = platformOf('PF4', {});
    const raw = { login: 7, name: 'Ann', group: 'demo', extra: 'dropped' };
    session.answers(raw);
    const result = await call(op('v2.PF4.UserRecordRequest'), platform, { login: 7 });
    expect(session.sent).toStrictEqual([
      { command: 'UserRecordRequest', args: { login: 7 }, deadline: DEADLINE, context: { keyedRead: true } },
    ]);
    expect(result).toStrictEqual({ data: shapeRecord('PF4User')(raw) });
    expect(result.data).toMatchObject({ login: 7, name: 'Ann', group: 'demo', balance: 0, email: null });
    expect(result.data).not.toHaveProperty('extra');
  });

  it("hands the call's deadline on as it is, split or not", async () => {
    const { platform, session } = platformOf('PF4', {});
    const split = { sendBy: DEADLINE, answerBy: DEADLINE + 60_000 };
    session.answers(true);
    await call(op('v2.PF4.UserRecordNew'), platform, { body: { group: 'demo', name: 'N' } }, split);
    expect(session.sent[0].deadline).toBe(split);
  });

  it('sends a command that is not a keyed read without saying it is one', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers([{ order: 2, extra: 1 }], { not: 'a list' });
    const entry = op('v2.PF4.TradeRecordsRequest');
    const first = await call(entry, platform, { orders: [2, 5] });
    expect(session.sent[0].command).toBe('TradeRecordsRequest');
    expect(session.sent[0].args).toStrictEqual({ orders: [2, 5] });
    expect(session.sent[0].context?.keyedRead).toBeUndefined();
    expect(first).toStrictEqual({ data: [shapeRecord('PF4Trade')({ order: 2 })] });
    // A list answer that is not a list is an empty list.
    expect(await call(entry, platform, { orders: [2] })).toStrictEqual({ data: [] });
  });

  it('sends the body under record by default, and the declared arguments otherwise', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = () => true;
    await call(op('v2.PF4.UserRecordNew'), platform, { body: { group: 'demo', name: 'N' } });
    await call(op('v2.PF4.UserPasswordSet'), platform, { login: 5, body: 'secret1', cleanPubkey: true });
    await call(op('v2.PF4.EnsureGroupNameExist'), platform, { group: 'demo' });
    expect(session.sent.map(({ command, args }) => ({ command, args }))).toStrictEqual([
      { command: 'UserRecordNew', args: { record: { group: 'demo', name: 'N' } } },
      { command: 'UserPasswordSet', args: { login: 5, password: 'secret1', changeInvestor: false, cleanPubkey: true } },
      { command: 'GroupsRequest', args: undefined },
    ]);
  });

  it("answers what the entry makes of the server's answer, with the call's arguments", async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers([
      { login: 1, diff: 0 },
      { login: 2, diff: 5.5 },
      null,
      { login: 3, diff: -1 },
      { login: 9, diff: 4 },
      { login: 1, diff: 'x' },
    ]);
    expect(await call(op('v2.PF4.AdmBalanceCheck'), platform, { logins: [1, 2, 3] })).toStrictEqual({
      data: [
        { login: 2, diff: 5.5 },
        { login: 3, diff: -1 },
      ],
    });
    expect(session.sent[0].args).toStrictEqual({ logins: [1, 2, 3] });

    const groups = [{ group: 'demo' }, { group: 'Real\\Vip' }];
    session.reply = () => groups;
    const exists = op('v2.PF4.EnsureGroupNameExist');
    expect(await call(exists, platform, { group: 'Real\\Vip' })).toStrictEqual({ data: true });
    expect(await call(exists, platform, { group: 'real\\vip' })).toStrictEqual({ data: false });
  });

  it('passes inline-schema answers through unshaped', async () => {
    const { platform, session } = platformOf('PF5', {});
    session.answers('2030-01-01T00:00:00Z');
    const serverTime = findOperation('v2.PF5.ServerTime')!;
    expect(await call(serverTime, platform)).toStrictEqual({ data: '2030-01-01T00:00:00Z' });
    expect(session.sent).toStrictEqual([
      { command: 'ServerTime', args: {}, deadline: DEADLINE, context: { keyedRead: undefined } },
    ]);
  });

  it("passes the server's refusal on as it is", async () => {
    const { platform, session } = platformOf('PF4', {});
    const refusal = new OperationError('NotFound', 'login 7 not found', PF4_NOT_FOUND);
    session.reply = () => {
      throw refusal;
    };
    expect(await failure(() => call(op('v2.PF4.UserRecordRequest'), platform, { login: 7 }))).toBe(refusal);
  });
});

// ---- live pages ------------------------------------------------------------------------------------------------------

describe('live pages the server pages itself', () => {
  const entry = op('v2.PF4.UsersRequest');
  const users = (...logins: number[]) => logins.map((login) => ({ login, name: `U${login}`, secret: 'x' }));
  const shaped = (...logins: number[]) => users(...logins).map(shapeRecord('PF4User'));

  it("asks one more than the limit, after the cursor's key, and answers the page with its cursor", async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers({ items: users(1, 2, 3), hasMore: true });
    const first = await call(entry, platform, { limit: 2 });
    expect(session.sent).toStrictEqual([
      { command: 'UsersRequest', args: { limit: 3 }, deadline: DEADLINE, context: undefined },
    ]);
    expect(first).toStrictEqual({ data: shaped(1, 2), paging: { nextCursor: encodeCursor(2), hasMore: true } });

    session.answers({ items: users(3, 4, 5), hasMore: false });
    const args = { limit: 2, cursor: first.paging!.nextCursor };
    const middle = await call(entry, platform, args);
    expect(session.sent[1].args).toStrictEqual({ after: 2, limit: 3 });
    expect(middle).toStrictEqual({ data: shaped(3, 4), paging: { nextCursor: encodeCursor(4), hasMore: true } });
    // The call's own arguments are left as they were.
    expect(args).toStrictEqual({ limit: 2, cursor: encodeCursor(2) });

    session.answers({ items: users(5), hasMore: false });
    const last = await call(entry, platform, { limit: 2, cursor: middle.paging!.nextCursor });
    expect(last).toStrictEqual({ data: shaped(5), paging: { nextCursor: null, hasMore: false } });
  });

  it('trusts the server that more follow a page it did not fill, and that none follow a full one', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers(
      { items: users(1), hasMore: true },
      { items: users(1, 2), hasMore: false },
      { items: [], hasMore: true },
    );
    expect((await call(entry, platform, { limit: 2 })).paging).toStrictEqual({
      nextCursor: encodeCursor(1),
      hasMore: true,
    });
    expect((await call(entry, platform, { limit: 2 })).paging).toStrictEqual({ nextCursor: null, hasMore: false });
    // Nothing to make a cursor of.
    expect(await call(entry, platform, { limit: 2 })).toStrictEqual({
      data: [],
      paging: { nextCursor: null, hasMore: true },
    });
  });

  it('asks for everything without a limit, and reads a missing answer as an empty page', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers({ items: users(1, 2, 3), hasMore: 'yes' }, null, {});
    expect(await call(entry, platform, {})).toStrictEqual({
      data: shaped(1, 2, 3),
      paging: { nextCursor: null, hasMore: false },
    });
    expect(session.sent[0].args).toStrictEqual({});
    expect(await call(entry, platform, {})).toStrictEqual({ data: [], paging: { nextCursor: null, hasMore: false } });
    expect(await call(entry, platform, { limit: 5 })).toStrictEqual({
      data: [],
      paging: { nextCursor: null, hasMore: false },
    });
  });

  it('refuses a cursor that is not a key before sending anything', async () => {
    const { platform, session } = platformOf('PF4', {});
    for (const cursor of ['garbage!', encodeCursor('2'), encodeCursor(-2), encodeCursor([2])]) {
      expectError(await failure(() => call(entry, platform, { limit: 2, cursor })), 'Validation', BAD_CURSOR);
    }
    expect(session.sent).toStrictEqual([]);
  });

  it("keeps the path's arguments and carries ids beyond 2^53 − 1 exactly (PF5)", async () => {
    const { platform, session } = platformOf('PF5', {});
    const after = 9007199254740993n;
    session.answers({
      items: [
        { position: 9007199254740995n, login: 1 },
        { position: 9007199254740997n, login: 2 },
      ],
      hasMore: false,
    });
    const page = await call(op('v2.PF5.PositionByGroup'), platform, {
      mask: 'real\\*',
      limit: 1,
      cursor: encodeCursor(after),
    });
    expect(session.sent[0]).toStrictEqual({
      command: 'PositionByGroup',
      args: { mask: 'real\\*', after, limit: 2 },
      deadline: DEADLINE,
      context: undefined,
    });
    expect((page.data as Row[]).map((p) => p.position)).toStrictEqual([9007199254740995n]);
    expect(page.paging).toStrictEqual({ nextCursor: encodeCursor(9007199254740995n), hasMore: true });
    expect(Buffer.from(page.paging!.nextCursor!, 'base64url').toString()).toBe('9007199254740995');
  });
});

describe('live pages read whole and paged here', () => {
  it('sends the command without the paging arguments, sorts by the key and pages with the key as cursor', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = () => [{ group: 'b' }, { group: 'B', extra: 1 }, { group: 'a' }];
    const entry = op('v2.PF4.GroupsRequest');
    const first = await call(entry, platform, { limit: 2 });
    expect(session.sent).toStrictEqual([
      { command: 'GroupsRequest', args: {}, deadline: DEADLINE, context: undefined },
    ]);
    expect(first).toStrictEqual({
      data: [{ group: 'B' }, { group: 'a' }].map(shapeRecord('PF4Group')),
      paging: { nextCursor: encodeCursor('a'), hasMore: true },
    });
    const last = await call(entry, platform, { limit: 2, cursor: first.paging!.nextCursor });
    expect((last.data as Row[]).map((g) => g.group)).toStrictEqual(['b']);
    expect(last.paging).toStrictEqual({ nextCursor: null, hasMore: false });
    expect(session.sent[1].args).toStrictEqual({});
    const all = await call(entry, platform, {});
    expect((all.data as Row[]).map((g) => g.group)).toStrictEqual(['B', 'a', 'b']);
    expect(all.paging).toStrictEqual({ nextCursor: null, hasMore: false });
  });

  it('reads an answer that is not a list as an empty one', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers({ items: [{ group: 'a' }] });
    expect(await call(op('v2.PF4.GroupsRequest'), platform, { limit: 2, cursor: encodeCursor('a') })).toStrictEqual({
      data: [],
      paging: { nextCursor: null, hasMore: false },
    });
  });

  it('orders numeric keys as numbers', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = () => [{ login: 10 }, { login: 9 }, { login: 100 }];
    const page = await call(op('v2.PF4.CfgRequestManager'), platform, { limit: 2 });
    expect((page.data as Row[]).map((m) => m.login)).toStrictEqual([9, 10]);
    expect(page.paging).toStrictEqual({ nextCursor: encodeCursor(10), hasMore: true });
  });

  it('pages a tuple key by its fields in turn, the cursor holding them all', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = () => [
      { ipFrom: 20, ipTo: 30 },
      { ipFrom: 10, ipTo: 50 },
      { ipFrom: 10, ipTo: 20 },
      { ipFrom: 5, ipTo: 90 },
    ];
    const entry = op('v2.PF4.CfgRequestAccess');
    const first = await call(entry, platform, { limit: 2 });
    expect(first).toStrictEqual({
      data: [
        { action: 0, ipFrom: 5, ipTo: 90, comment: null },
        { action: 0, ipFrom: 10, ipTo: 20, comment: null },
      ],
      paging: { nextCursor: encodeCursor([10, 20]), hasMore: true },
    });
    const last = await call(entry, platform, { limit: 2, cursor: first.paging!.nextCursor });
    expect((last.data as Row[]).map((r) => [r.ipFrom, r.ipTo])).toStrictEqual([
      [10, 50],
      [20, 30],
    ]);
    expect(last.paging).toStrictEqual({ nextCursor: null, hasMore: false });
  });

  it('adds the server position to the cursor when keys repeat, so a page boundary skips and repeats nothing', async () => {
    const { platform, session } = platformOf('PF4', {});
    // Server positions 0..4; the two (10, 20) rules and the two "A" feeders are told apart by their comment / file.
    session.reply = (command) =>
      command === 'CfgRequestAccess'
        ? [
            { ipFrom: 10, ipTo: 20, comment: 'second' },
            { ipFrom: 5, ipTo: 6 },
            { ipFrom: 10, ipTo: 20, comment: 'first?' },
            { ipFrom: 1, ipTo: 2 },
          ]
        : [
            { name: 'B', file: 'b' },
            { name: 'A', file: 'a0' },
            { name: 'A', file: 'a1' },
          ];
    const access = op('v2.PF4.CfgRequestAccess');
    const first = await call(access, platform, { limit: 3 });
    expect((first.data as Row[]).map((r) => r.comment)).toStrictEqual([null, null, 'second']);
    expect(first.paging).toStrictEqual({ nextCursor: encodeCursor([10, 20, 0]), hasMore: true });
    const last = await call(access, platform, { limit: 3, cursor: first.paging!.nextCursor });
    expect((last.data as Row[]).map((r) => r.comment)).toStrictEqual(['first?']);
    expect(last.paging).toStrictEqual({ nextCursor: null, hasMore: false });

    const feeders = op('v2.PF4.SrvFeeders');
    const seen: unknown[] = [];
    const cursors: unknown[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 5; pages++) {
      const page = await call(feeders, platform, { limit: 1, cursor });
      seen.push(...(page.data as Row[]).map((f) => f.file));
      if (!page.paging!.hasMore) break;
      cursor = page.paging!.nextCursor!;
      cursors.push(cursor);
    }
    expect(seen).toStrictEqual(['a0', 'a1', 'b']);
    expect(cursors).toStrictEqual([encodeCursor(['A', 1]), encodeCursor(['A', 2])]);
  });

  it('sorts a missing key field first and then treats the key as not unique', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = () => [{ name: 'B', file: 'b' }, { file: 'unnamed' }, { name: 'A', file: 'a' }];
    const page = await call(op('v2.PF4.SrvFeeders'), platform, { limit: 2 });
    expect((page.data as Row[]).map((f) => [f.name, f.file])).toStrictEqual([
      [null, 'unnamed'],
      ['A', 'a'],
    ]);
    expect(page.paging).toStrictEqual({ nextCursor: encodeCursor(['A', 2]), hasMore: true });
    // A text cursor is fine although the first row's name is null.
    const rest = await call(op('v2.PF4.SrvFeeders'), platform, { limit: 2, cursor: encodeCursor('A') });
    expect((rest.data as Row[]).map((f) => f.file)).toStrictEqual(['b']);
  });

  it('pages holidays by their five key fields, a holiday without a symbol before one with', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = () => [
      { year: 2030, month: 1, day: 1, from: 0, symbol: 'EURUSD' },
      { year: 2030, month: 1, day: 1, from: 0 },
      { year: 2029, month: 12, day: 25, from: 60, symbol: 'All' },
    ];
    const page = await call(op('v2.PF4.CfgRequestHoliday'), platform, { limit: 2 });
    expect((page.data as Row[]).map((h) => [h.year, h.symbol])).toStrictEqual([
      [2029, 'All'],
      [2030, null],
    ]);
    // A null symbol makes the key incomplete: the cursor carries the row's server position.
    expect(page.paging).toStrictEqual({ nextCursor: encodeCursor([2030, 1, 1, 0, null, 1]), hasMore: true });
    const rest = await call(op('v2.PF4.CfgRequestHoliday'), platform, { limit: 2, cursor: page.paging!.nextCursor });
    expect((rest.data as Row[]).map((h) => h.symbol)).toStrictEqual(['EURUSD']);
  });

  it("skips every row of a key-only cursor's key, and reads a positioned cursor on a unique list by its key", async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = (command) =>
      command === 'SrvFeeders'
        ? [
            { name: 'A', file: 'a0' },
            { name: 'A', file: 'a1' },
            { name: 'B', file: 'b' },
          ]
        : [{ group: 'b' }, { group: 'B' }, { group: 'a' }];
    const feeders = await call(op('v2.PF4.SrvFeeders'), platform, { cursor: encodeCursor('A') });
    expect((feeders.data as Row[]).map((f) => f.file)).toStrictEqual(['b']);
    const groups = await call(op('v2.PF4.GroupsRequest'), platform, { cursor: encodeCursor(['a', 7]) });
    expect((groups.data as Row[]).map((g) => g.group)).toStrictEqual(['b']);
    const oneField = await call(op('v2.PF4.GroupsRequest'), platform, { cursor: encodeCursor(['B']) });
    expect((oneField.data as Row[]).map((g) => g.group)).toStrictEqual(['a', 'b']);
  });

  it('refuses a cursor of the wrong shape before sending anything', async () => {
    const { platform, session } = platformOf('PF4', {});
    const access = op('v2.PF4.CfgRequestAccess');
    for (const key of [
      '10',
      10,
      [10],
      [10, 20, 1, 2],
      [10, true],
      [10, 20, -1],
      [10, 20, 1.5],
      [10, 20, '1'],
      { ipFrom: 10 },
    ]) {
      expectError(await failure(() => call(access, platform, { cursor: encodeCursor(key) })), 'Validation', BAD_CURSOR);
    }
    const groups = op('v2.PF4.GroupsRequest');
    for (const key of [['a', -1], ['a', 1, 2], [], true, null]) {
      expectError(await failure(() => call(groups, platform, { cursor: encodeCursor(key) })), 'Validation', BAD_CURSOR);
    }
    expectError(await failure(() => call(groups, platform, { cursor: 'bad cursor' })), 'Validation', BAD_CURSOR);
    expect(session.sent).toStrictEqual([]);
  });

  it("refuses a cursor whose fields have other types than the list's, once it has the list", async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = (command) => (command === 'CfgRequestManager' ? [{ login: 5 }] : [{ ipFrom: 10, ipTo: 20 }]);
    expectError(
      await failure(() => call(op('v2.PF4.CfgRequestManager'), platform, { cursor: encodeCursor('5') })),
      'Validation',
      BAD_CURSOR,
    );
    expectError(
      await failure(() => call(op('v2.PF4.CfgRequestAccess'), platform, { cursor: encodeCursor([10, '20']) })),
      'Validation',
      BAD_CURSOR,
    );
    expect(session.sent.map((s) => s.command)).toStrictEqual(['CfgRequestManager', 'CfgRequestAccess']);
    // A null field matches any type.
    const afterNull = await call(op('v2.PF4.CfgRequestAccess'), platform, { cursor: encodeCursor([null, 20]) });
    expect((afterNull.data as Row[]).map((r) => r.ipFrom)).toStrictEqual([10]);
    // An empty list has no types to hold the cursor to.
    session.reply = () => [];
    expect(await call(op('v2.PF4.CfgRequestManager'), platform, { cursor: encodeCursor('5') })).toStrictEqual({
      data: [],
      paging: { nextCursor: null, hasMore: false },
    });
  });
});

// ---- Type 1 replace --------------------------------------------------------------------------------------------------

describe('replace (Type 1)', () => {
  const current = {
    login: 7,
    group: 'demo',
    name: 'Ann',
    email: 'ann@example.com',
    comment: 'vip',
    leverage: 100,
    balance: 50,
    registrationDate: '2020-01-01T00:00:00Z',
    password: 'secret',
  };

  it('reads the record live, lays the DTO fields of the body over it and writes the DTO fields back', async () => {
    const { platform, session } = platformOf('PF4', {});
    const written = { ...current, name: 'Bo', comment: null };
    session.answers(current, written);
    const result = await call(op('v2.PF4.UserRecordUpdate'), platform, {
      login: 7,
      body: { name: 'Bo', comment: null, login: 99, lastIP: 1 },
    });
    expect(session.sent).toStrictEqual([
      { command: 'UserRecordRequest', args: { login: 7 }, deadline: DEADLINE, context: { keyedRead: true } },
      {
        command: 'UserRecordUpdate',
        deadline: DEADLINE,
        context: undefined,
        args: {
          login: 7,
          record: { group: 'demo', name: 'Bo', email: 'ann@example.com', comment: null, leverage: 100, balance: 50 },
        },
      },
    ]);
    expect(result).toStrictEqual({ data: shapeRecord('PF4User')(written) });
    expect(result.data).toMatchObject({ login: 7, name: 'Bo', comment: null });
  });

  it('keeps the current value of a body member that is undefined', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers(current, current);
    await call(op('v2.PF4.UserRecordUpdate'), platform, { login: 7, body: { name: undefined, leverage: 200 } });
    expect(session.sent[1].args).toStrictEqual({
      login: 7,
      record: { group: 'demo', name: 'Ann', email: 'ann@example.com', comment: 'vip', leverage: 200, balance: 50 },
    });
  });

  it('writes the current DTO fields back unchanged when the call has no body', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers(current, current);
    await call(op('v2.PF4.UserRecordUpdate'), platform, { login: 7 });
    expect(session.sent[1].args).toStrictEqual({
      login: 7,
      record: { group: 'demo', name: 'Ann', email: 'ann@example.com', comment: 'vip', leverage: 100, balance: 50 },
    });
  });

  it('reads the first record of a list answer, and writes with the default arguments', async () => {
    const { platform, session } = platformOf('PF4', {});
    const hours = Array.from({ length: 168 }, (_, i) => i % 2);
    const body = { accessHours: hours.map(() => 1) };
    session.answers([{ accessHours: hours, housekeeping: 1 }, { accessHours: 'ignored' }], {
      accessHours: body.accessHours,
    });
    const result = await call(op('v2.PF4.CfgUpdateTime'), platform, { body });
    // Without declared arguments the read gets the call's arguments but not the body: the record is the write's.
    expect(session.sent.map(({ command, args }) => ({ command, args }))).toStrictEqual([
      { command: 'CfgRequestTime', args: {} },
      { command: 'CfgUpdateTime', args: { record: { accessHours: body.accessHours } } },
    ]);
    expect(result).toStrictEqual({ data: { accessHours: body.accessHours } });
  });

  it('reads with the declared arguments', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers({ name: 'Srv', owner: 'Me', timeZone: 2, build: 1 }, { name: 'Srv2' });
    await call(op('v2.PF4.CfgUpdateCommon'), platform, { body: { name: 'Srv2' } });
    expect(session.sent[0].args).toStrictEqual({ full: true });
    expect(session.sent[1]).toStrictEqual({
      command: 'CfgUpdateCommon',
      args: { record: { name: 'Srv2', owner: 'Me', timeZone: 2 } },
      deadline: DEADLINE,
      context: undefined,
    });
  });

  it('answers not found, writing nothing, when the read finds no record', async () => {
    for (const answer of [null, undefined, [], 'text', 5]) {
      const { platform, session } = platformOf('PF4', {});
      session.answers(answer);
      expectError(
        await failure(() => call(op('v2.PF4.UserRecordUpdate'), platform, { login: 7, body: {} })),
        'NotFound',
        'record not found',
        PF4_NOT_FOUND,
      );
      expect(session.sent.map((s) => s.command)).toStrictEqual(['UserRecordRequest']);
    }
    const pf5 = platformOf('PF5', {});
    pf5.session.answers([]);
    expectError(
      await failure(() => call(op('v1.PF5.DealUpdate'), pf5.platform, { body: { deal: 3 } })),
      'NotFound',
      'record not found',
      PF5_NOT_FOUND,
    );
    expect(pf5.session.sent[0]).toStrictEqual({
      command: 'DealRequestByTicket',
      args: { ticket: 3 },
      deadline: DEADLINE,
      context: { keyedRead: true },
    });
  });

  it('passes a refused read on and writes nothing', async () => {
    const { platform, session } = platformOf('PF4', {});
    const refusal = new OperationError('PF4Error', 'no rights', 7);
    session.reply = () => {
      throw refusal;
    };
    expect(await failure(() => call(op('v2.PF4.UserRecordUpdate'), platform, { login: 7, body: {} }))).toBe(refusal);
    expect(session.sent).toHaveLength(1);
  });
});

// ---- Type 2 patch ----------------------------------------------------------------------------------------------------

describe('patch (Type 2)', () => {
  it('passes the patch to a server that patches natively (PF5)', async () => {
    const { platform, session } = platformOf('PF5', {});
    const updated = { login: 5, name: 'New', unknownField: 1 };
    session.answers(updated);
    const result = await call(op('v2.PF5.UserRecord'), platform, { login: 5, body: { name: 'New', comment: null } });
    expect(session.sent).toStrictEqual([
      {
        command: 'UserRecord',
        args: { login: 5, patch: { name: 'New', comment: null } },
        deadline: DEADLINE,
        context: undefined,
      },
    ]);
    expect(result).toStrictEqual({ data: shapeRecord('PF5User')(updated) });
    expect(result.data).not.toHaveProperty('unknownField');
  });

  it('reads, merges and writes back the DTO fields (PF4); null empties a field by its type', async () => {
    const { platform, session } = platformOf('PF4', {});
    const current = {
      login: 7,
      group: 'demo',
      name: 'Ann',
      comment: 'vip',
      leverage: 100,
      taxes: 3,
      email: null,
      balance: 50,
      password: 'x',
    };
    const written = { ...current, name: 'Bo' };
    session.answers(current, written);
    const body = { name: 'Bo', comment: null, taxes: null, email: null, agentAccount: null, city: null };
    const result = await call(op('v2.PF4.UserRecord'), platform, { login: 7, body });
    expect(session.sent).toStrictEqual([
      { command: 'UserRecordRequest', args: { login: 7 }, deadline: DEADLINE, context: { keyedRead: true } },
      {
        command: 'UserRecordUpdate',
        deadline: DEADLINE,
        context: undefined,
        args: {
          login: 7,
          // A text field empties to "", a number to 0, whether the server's record had it (null or not) or not.
          record: {
            group: 'demo',
            name: 'Bo',
            comment: '',
            leverage: 100,
            taxes: 0,
            email: '',
            balance: 50,
            agentAccount: 0,
            city: '',
          },
        },
      },
    ]);
    expect(result).toStrictEqual({ data: shapeRecord('PF4User')(written) });
  });

  it('empties a boolean field to false', async () => {
    const { platform, session } = platformOf('PF4', {});
    const entry = variant('v2.PF4.CfgUpdateHoliday', {
      kind: 'patch',
      dto: 'PF4Holiday',
      read: { command: 'CfgRequestHoliday', args: () => ({}) },
      write: { command: 'CfgUpdateHoliday', args: (_a, record) => ({ record }) },
    });
    session.answers({ year: 2030, enable: true, description: 'x' }, true, { year: 2030 }, true);
    await call(entry, platform, { body: { enable: null, description: null, year: null } });
    expect(session.sent[1].args).toStrictEqual({ record: { year: 0, enable: false, description: '' } });
    // The type of a field the server's record lacks is the DTO's.
    await call(entry, platform, { body: { enable: null, month: null } });
    expect(session.sent[3].args).toStrictEqual({ record: { year: 2030, month: 0, enable: false } });
  });

  it('writes with the default arguments when the entry declares none', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers({ symbol: 'EURUSD', description: 'Euro', digits: 5, spread: 2 }, { symbol: 'EURUSD', digits: 4 });
    const result = await call(op('v2.PF4.SymbolConfig'), platform, { symbol: 'EURUSD', body: { digits: 4 } });
    expect(session.sent.map(({ command, args }) => ({ command, args }))).toStrictEqual([
      { command: 'CfgRequestSymbol', args: { symbol: 'EURUSD' } },
      { command: 'CfgUpdateSymbol', args: { symbol: 'EURUSD', record: { description: 'Euro', digits: 4, spread: 2 } } },
    ]);
    expect(result.data).toStrictEqual(shapeRecord('PF4SymbolConfig')({ symbol: 'EURUSD', digits: 4 }));
  });

  it('refuses a member outside the DTO by name, writing nothing', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.reply = () => ({ login: 7, name: 'Ann' });
    const entry = op('v2.PF4.UserRecord');
    expectError(
      await failure(() => call(entry, platform, { login: 7, body: { name: 'Bo', lastIP: 1 } })),
      'Validation',
      'body.lastIP: cannot be changed by this patch',
    );
    // The first of several is named.
    expectError(
      await failure(() => call(entry, platform, { login: 7, body: { login: 8, name: 'Bo', lastIP: 1 } })),
      'Validation',
      'body.login: cannot be changed by this patch',
    );
    expect(session.sent.map((s) => s.command)).toStrictEqual(['UserRecordRequest', 'UserRecordRequest']);
  });

  it('answers not found, writing nothing, when the read finds no record', async () => {
    const { platform, session } = platformOf('PF4', {});
    session.answers(null);
    expectError(
      await failure(() => call(op('v2.PF4.GroupRecord'), platform, { group: 'demo', body: { company: 'X' } })),
      'NotFound',
      'record not found',
      PF4_NOT_FOUND,
    );
    expect(session.sent).toStrictEqual([
      { command: 'GroupRecordRequest', args: { group: 'demo' }, deadline: DEADLINE, context: { keyedRead: true } },
    ]);
  });
});
