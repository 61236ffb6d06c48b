/**
 * The batch reads' handlers (pf4BatchReads.ts) against a scripted session: what they ask the server, the rows they
 * answer shaped as the contract has them, the size bound of one answer (with a small bound standing in for 16 MiB),
 * the rows a sync read holds back and answers first next time, and what a start or a new login does to them.
 */
import { describe, expect, it } from 'vitest';
import { trades, users } from '../../../shared/catalog/v2/pf4/index.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { ANSWER_MAX_BYTES, type HandlerResult } from '../handler.js';
import { batchReadBindings, pf4BatchReadsBindings, SYNC_ROWS_PER_COMMAND } from './pf4BatchReads.js';
import { OperationError } from '../../../shared/errors.js';
import {
  call,
  expectOperationError,
  platformOf,
  rowsOf,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

type Row = Record<string, unknown>;

/** An account as the server answers it, a secret included (the answer must leave it out). */
const account = (login: number, name = `Name ${login}`): Row => ({
  login,
  group: 'demo\\forex',
  name,
  password: 'hash',
  leverage: 100,
  balance: 10,
});
const trade = (order: number): Row => ({
  order,
  login: 7,
  symbol: 'EURUSD',
  volume: 10,
  tradeCommand: 'Buy',
  openPrice: 1.1,
});
const asUser = shapeRecord('PF4User');
const asTrade = shapeRecord('PF4Trade');
/** The JSON size of one shaped account row, to set bounds in whole rows. */
const size = (row: Row, shape = asUser) => JSON.stringify(shape(row)).length;

/** The bytes of an answer of `rows` rows of `account(1000)`'s size: brackets, rows and the commas between them. */
const bytesOf = (rows: number) => 2 + rows * (size(account(1000)) + 1) - 1;
/** Bindings whose answers take at most `rows` rows of `account(1000)`'s size. */
const boundTo = (rows: number) => batchReadBindings(bytesOf(rows));

const logins = (result: HandlerResult) => rowsOf(result).map((r) => r.login);

describe('UsersSnapshot and TradesSnapshot', () => {
  it('asks the server for `limit` rows and answers them shaped as the contract has them, secrets left out', async () => {
    const session = new ScriptedSession()
      .answers('UsersSnapshot', [account(1), account(2)])
      .answers('TradesSnapshot', [trade(9)]);
    const platform = platformOf('PF4', { session });
    const result = await call(pf4BatchReadsBindings, users.UsersSnapshot, platform, { limit: 5, tradePlatform: 'x' });
    expect(rowsOf(result)).toEqual([asUser(account(1)), asUser(account(2))]);
    expect(rowsOf(result)[0]).not.toHaveProperty('password');
    expect(rowsOf(await call(pf4BatchReadsBindings, trades.TradesSnapshot, platform, { limit: 100000 }))).toEqual([
      asTrade(trade(9)),
    ]);
    expect(session.sent).toEqual([sent('UsersSnapshot', { limit: 5 }), sent('TradesSnapshot', { limit: 100000 })]);
  });

  it('answers at most `limit` rows whatever the server sends, and [] for no answer', async () => {
    const session = new ScriptedSession()
      .answers('UsersSnapshot', [account(1), account(2), account(3)])
      .answers('UsersSnapshot', null);
    const platform = platformOf('PF4', { session });
    expect(logins(await call(pf4BatchReadsBindings, users.UsersSnapshot, platform, { limit: 2 }))).toEqual([1, 2]);
    expect(await call(pf4BatchReadsBindings, users.UsersSnapshot, platform, { limit: 2 })).toEqual({ json: '[]' });
  });

  it('refuses a limit whose rows pass the bound, naming limit and how many fit; rows that fit exactly are answered', async () => {
    const bindings = boundTo(3);
    const rows = [1001, 1002, 1003, 1004].map((l) => account(l));
    const session = new ScriptedSession().answers('UsersSnapshot', rows).answers('UsersSnapshot', rows.slice(0, 3));
    const platform = platformOf('PF4', { session });
    await expectOperationError(() => call(bindings, users.UsersSnapshot, platform, { limit: 4 }), {
      code: 'Validation',
      message: `limit: the 4 accounts asked for take more than the ${bytesOf(3)} bytes one answer may carry; the first 3 fit: ask for at most 3`,
    });
    expect(logins(await call(bindings, users.UsersSnapshot, platform, { limit: 3 }))).toEqual([1001, 1002, 1003]);
  });

  it('counts a text beyond Latin-1 two bytes per character, as the edge carries it', async () => {
    // Three rows of plain text fit. A short name in another script takes fewer UTF-8 bytes than the plain one, yet
    // makes the whole answer a two-byte string: twice its length, past the bound.
    const bindings = boundTo(3);
    const wide = account(1003, 'N\u4e00');
    expect(Buffer.byteLength(JSON.stringify(asUser(wide)))).toBeLessThan(size(account(1000)));
    const session = new ScriptedSession()
      .answers('UsersSnapshot', [account(1001), account(1002), wide])
      .answers('UsersSnapshot', [wide]);
    const platform = platformOf('PF4', { session });
    await expectOperationError(() => call(bindings, users.UsersSnapshot, platform, { limit: 3 }), {
      code: 'Validation',
      message: `limit: the 3 accounts asked for take more than the ${bytesOf(3)} bytes one answer may carry; the first 2 fit: ask for at most 2`,
    });
    // Alone, twice its length is within the bound: answered.
    expect(logins(await call(bindings, users.UsersSnapshot, platform, { limit: 3 }))).toEqual([1003]);
  });

  it('bounds an answer to half the 32 MiB the edge takes in one message, so that its copies there fit in memory', () => {
    expect(ANSWER_MAX_BYTES).toBe(16 * 1024 * 1024);
  });

  it('answers within the bound the broker gives the call (BROKER_ANSWER_MAX_BYTES), when no bound was bound in', async () => {
    const session = new ScriptedSession().answers('UsersSnapshot', [account(1001), account(1002), account(1003)]);
    const platform = platformOf('PF4', { session });
    const [, run] = pf4BatchReadsBindings.find(([op]) => op === users.UsersSnapshot.op)!;
    await expectOperationError(
      () => run({ platform, args: { limit: 3 }, deadline: Date.now() + 10_000, answerMaxBytes: bytesOf(2) }),
      {
        code: 'Validation',
        message: `limit: the 3 accounts asked for take more than the ${bytesOf(2)} bytes one answer may carry; the first 2 fit: ask for at most 2`,
      },
    );
  });
});

/** A session whose script begins with a users sync start, and the platform of it with the start made. */
async function startedUsers(bindings: ReturnType<typeof batchReadBindings>, session: ScriptedSession) {
  const platform = platformOf('PF4', { session });
  expect(await call(bindings, users.UsersSyncStart, platform, {})).toEqual({ data: true });
  return platform;
}
const scripted = () => new ScriptedSession().answers('UsersSyncStart', true);
const setLogins = (session: ScriptedSession, logins: number) => {
  (session as unknown as { logins: number }).logins = logins;
};
const lostAfterReconnect = (start: string, rows: string) => ({
  code: 'NotFound' as const,
  message: `the ${rows} sync snapshot is lost: the broker's manager session has reconnected since ${start}, and the trading server drops a sync snapshot with its connection; start again with ${start}`,
});
const lostNeverStarted = (start: string, rows: string) => ({
  code: 'NotFound' as const,
  message: `the ${rows} sync snapshot is lost: this broker's manager session has answered no ${start} (never started here, or started on another broker); start again with ${start}`,
});

describe('UsersSyncStart, UsersSyncRead, TradesSyncStart and TradesSyncRead', () => {
  it("starts with the timestamp given, 0 (every record) when none is, and answers the server's answer", async () => {
    const session = new ScriptedSession()
      .answers('UsersSyncStart', true)
      .answers('UsersSyncStart', true)
      .answers('TradesSyncStart', true);
    const platform = platformOf('PF4', { session });
    expect(await call(pf4BatchReadsBindings, users.UsersSyncStart, platform, {})).toEqual({ data: true });
    expect(await call(pf4BatchReadsBindings, users.UsersSyncStart, platform, { timestamp: 1700000000 })).toEqual({
      data: true,
    });
    expect(await call(pf4BatchReadsBindings, trades.TradesSyncStart, platform, { timestamp: 5 })).toEqual({
      data: true,
    });
    expect(session.sent).toEqual([
      sent('UsersSyncStart', { timestamp: 0 }),
      sent('UsersSyncStart', { timestamp: 1700000000 }),
      sent('TradesSyncStart', { timestamp: 5 }),
    ]);
  });

  it('asks the server SYNC_ROWS_PER_COMMAND rows at a time up to the limit, and stops once it answers fewer', async () => {
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => account(from + i));
    const session = scripted()
      .answers('UsersSyncRead', rows(1, SYNC_ROWS_PER_COMMAND))
      .answers('UsersSyncRead', rows(1 + SYNC_ROWS_PER_COMMAND, SYNC_ROWS_PER_COMMAND))
      .answers('UsersSyncRead', rows(1 + 2 * SYNC_ROWS_PER_COMMAND, 1000))
      .answers('UsersSyncRead', rows(20_001, 3))
      .answers('UsersSyncRead', []);
    const platform = await startedUsers(pf4BatchReadsBindings, session);
    const first = logins(
      await call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 2 * SYNC_ROWS_PER_COMMAND + 1000 }),
    );
    expect(first).toEqual(rows(1, 2 * SYNC_ROWS_PER_COMMAND + 1000).map((r) => r.login));
    // Fewer than asked: the server has no more, and is not asked again in this read.
    expect(logins(await call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 100_000 }))).toEqual([
      20_001, 20_002, 20_003,
    ]);
    expect(session.sent.slice(1).map((s) => s.args)).toEqual([
      { limit: SYNC_ROWS_PER_COMMAND },
      { limit: SYNC_ROWS_PER_COMMAND },
      { limit: 1000 },
      { limit: SYNC_ROWS_PER_COMMAND },
    ]);
    expect(session.unused).toBe(1);
  });

  it("answers what a read's earlier commands took when a later one fails", async () => {
    const session = scripted()
      .answers(
        'UsersSyncRead',
        Array.from({ length: SYNC_ROWS_PER_COMMAND }, (_, i) => account(i + 1)),
      )
      .fails('UsersSyncRead', new OperationError('NoConnect', 'lost'));
    const platform = await startedUsers(pf4BatchReadsBindings, session);
    const got = logins(
      await call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 2 * SYNC_ROWS_PER_COMMAND }),
    );
    expect(got).toHaveLength(SYNC_ROWS_PER_COMMAND);
  });

  it('reads `limit` rows from the server, shaped, after a start; [] once the server has none left', async () => {
    const session = scripted()
      .answers('UsersSyncRead', [account(1), account(2)])
      .answers('UsersSyncRead', [])
      .answers('TradesSyncStart', true)
      .answers('TradesSyncRead', [trade(4)]);
    const platform = await startedUsers(pf4BatchReadsBindings, session);
    expect(rowsOf(await call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 2 }))).toEqual([
      asUser(account(1)),
      asUser(account(2)),
    ]);
    expect(await call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 2 })).toEqual({ json: '[]' });
    await call(pf4BatchReadsBindings, trades.TradesSyncStart, platform, {});
    expect(rowsOf(await call(pf4BatchReadsBindings, trades.TradesSyncRead, platform, { limit: 9 }))).toEqual([
      asTrade(trade(4)),
    ]);
    expect(session.sent.map((s) => s.command)).toEqual([
      'UsersSyncStart',
      'UsersSyncRead',
      'UsersSyncRead',
      'TradesSyncStart',
      'TradesSyncRead',
    ]);
    expect(session.sent[1]).toEqual(sent('UsersSyncRead', { limit: 2 }));
    expect(session.sent[4]).toEqual(sent('TradesSyncRead', { limit: 9 }));
  });

  it('refuses a read of a kind this session never started, asking the server nothing: not [] as if drained', async () => {
    const session = scripted();
    const platform = await startedUsers(pf4BatchReadsBindings, session);
    // A users start says nothing of trades; a fresh session (another broker's, a restarted one's) has neither.
    await expectOperationError(
      () => call(pf4BatchReadsBindings, trades.TradesSyncRead, platform, { limit: 5 }),
      lostNeverStarted('TradesSyncStart', 'trades'),
    );
    await expectOperationError(
      () => call(pf4BatchReadsBindings, users.UsersSyncRead, platformOf('PF4'), { limit: 5 }),
      lostNeverStarted('UsersSyncStart', 'accounts'),
    );
    expect(session.sent.map((s) => s.command)).toEqual(['UsersSyncStart']);
  });

  it('refuses every read after the session logged in again since the start, held rows dropped, until a new start', async () => {
    const bindings = boundTo(1);
    const session = scripted()
      .answers('UsersSyncRead', [account(1001), account(1002)])
      .answers('UsersSyncStart', true)
      .answers('UsersSyncRead', [account(1010)]);
    const platform = await startedUsers(bindings, session);
    const read = () => call(bindings, users.UsersSyncRead, platform, { limit: 10 });
    expect(logins(await read())).toEqual([1001]);
    setLogins(session, 1);
    // 1002 is held here, but the rest of the snapshot went with the old connection: nothing of it is answered.
    await expectOperationError(read, lostAfterReconnect('UsersSyncStart', 'accounts'));
    await expectOperationError(read, lostAfterReconnect('UsersSyncStart', 'accounts'));
    await call(bindings, users.UsersSyncStart, platform, {});
    expect(logins(await read())).toEqual([1010]);
    expect(session.unused).toBe(0);
  });

  it("refuses a read whose request logged the session in again (it was down): the new connection's [] is not the snapshot", async () => {
    let release!: (rows: Row[]) => void;
    const answered = new Promise<Row[]>((resolve) => {
      release = resolve;
    });
    const session = new ScriptedSession().answers('TradesSyncStart', true).answers('TradesSyncRead', answered);
    const platform = platformOf('PF4', { session });
    await call(pf4BatchReadsBindings, trades.TradesSyncStart, platform, {});
    const reading = call(pf4BatchReadsBindings, trades.TradesSyncRead, platform, { limit: 5 });
    // The session reconnects to send the read; the server has no snapshot on that connection.
    setLogins(session, 1);
    release([]);
    await expectOperationError(() => reading, lostAfterReconnect('TradesSyncStart', 'trades'));
  });

  it('counts a start as made on the login it was answered on (a start that logs the session in is good)', async () => {
    let release!: (answer: boolean) => void;
    const answered = new Promise<boolean>((resolve) => {
      release = resolve;
    });
    const session = new ScriptedSession().answers('UsersSyncStart', answered).answers('UsersSyncRead', [account(7)]);
    const platform = platformOf('PF4', { session });
    const starting = call(pf4BatchReadsBindings, users.UsersSyncStart, platform, {});
    setLogins(session, 3);
    release(true);
    await starting;
    expect(logins(await call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 5 }))).toEqual([7]);
  });

  it('refuses reads after a start that failed: whether the server replaced its snapshot is not known', async () => {
    const session = scripted().fails('UsersSyncStart', new Error('connection lost'));
    const platform = await startedUsers(pf4BatchReadsBindings, session);
    await expect(call(pf4BatchReadsBindings, users.UsersSyncStart, platform, {})).rejects.toThrow('connection lost');
    await expectOperationError(
      () => call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 5 }),
      lostNeverStarted('UsersSyncStart', 'accounts'),
    );
  });

  it('holds back the rows past the bound and answers them first, asking the server again only once they are gone', async () => {
    const bindings = boundTo(2);
    const session = scripted()
      .answers(
        'UsersSyncRead',
        [1001, 1002, 1003, 1004, 1005].map((l) => account(l)),
      )
      .answers('UsersSyncRead', [account(1006)])
      .answers('UsersSyncRead', []);
    const platform = await startedUsers(bindings, session);
    const read = (limit: number) => call(bindings, users.UsersSyncRead, platform, { limit });
    expect(logins(await read(5))).toEqual([1001, 1002]);
    expect(logins(await read(5))).toEqual([1003, 1004]);
    // One held row left: it comes first, and the server is asked for what the limit leaves.
    expect(logins(await read(5))).toEqual([1005, 1006]);
    expect(logins(await read(5))).toEqual([]);
    expect(session.sent.slice(1)).toEqual([
      sent('UsersSyncRead', { limit: 5 }),
      sent('UsersSyncRead', { limit: 4 }),
      sent('UsersSyncRead', { limit: 5 }),
    ]);
    expect(session.unused).toBe(0);
  });

  it('answers rows of mixed sizes in key order, each once: a big row held back keeps every later one behind it', async () => {
    // The bound takes three rows of account(1000)'s size. A big row takes about two and a half: after one row it does
    // not fit, while the small rows after it would. They must wait for it, or they would come before it: among the
    // rows the server answers (1002 after 1001) and among the rows held back here (1007 after 1006).
    const bindings = boundTo(3);
    const small = (login: number) => account(login);
    const big = (login: number) => account(login, 'B'.repeat(Math.round(1.5 * size(account(1000)))));
    expect(size(big(1002)) + size(small(1001)) + 3).toBeGreaterThan(bytesOf(3));
    expect(size(big(1002)) + 2).toBeLessThanOrEqual(bytesOf(3));
    const server = [
      small(1001),
      big(1002),
      small(1003),
      small(1004),
      small(1005),
      small(1006),
      big(1007),
      small(1008),
      small(1009),
    ];
    const session = scripted()
      .answers('UsersSyncRead', server)
      .answers('UsersSyncRead', [])
      .answers('UsersSyncRead', []);
    const platform = await startedUsers(bindings, session);
    const reads: number[][] = [];
    for (
      let rows = logins(await call(bindings, users.UsersSyncRead, platform, { limit: 100 }));
      rows.length > 0;
      rows = logins(await call(bindings, users.UsersSyncRead, platform, { limit: 100 }))
    ) {
      reads.push(rows as number[]);
      expect(reads.length).toBeLessThanOrEqual(server.length);
    }
    expect(reads).toEqual([[1001], [1002], [1003, 1004, 1005], [1006], [1007], [1008, 1009]]);
    expect(reads.flat()).toEqual(server.map((r) => r.login));
    expect(session.unused).toBe(0);
  });

  it('answers held rows within the limit of the read, keeping the rest held, without asking the server', async () => {
    const bindings = boundTo(2);
    const session = scripted().answers(
      'UsersSyncRead',
      [1001, 1002, 1003, 1004, 1005].map((l) => account(l)),
    );
    const platform = await startedUsers(bindings, session);
    const read = (limit: number) => call(bindings, users.UsersSyncRead, platform, { limit });
    expect(logins(await read(5))).toEqual([1001, 1002]);
    expect(logins(await read(1))).toEqual([1003]);
    expect(logins(await read(1))).toEqual([1004]);
    expect(session.sent).toHaveLength(2);
  });

  it('drops held rows at a new start of the same kind only: they belonged to the snapshot it replaced', async () => {
    const bindings = boundTo(1);
    const session = scripted()
      .answers('UsersSyncRead', [account(1001), account(1002)])
      .answers('TradesSyncStart', true)
      .answers('UsersSyncStart', true)
      .answers('UsersSyncRead', [account(1010), account(1011)]);
    const platform = await startedUsers(bindings, session);
    const read = () => call(bindings, users.UsersSyncRead, platform, { limit: 1 });
    expect(logins(await read())).toEqual([1001]);
    await call(bindings, trades.TradesSyncStart, platform, { timestamp: 0 });
    expect(logins(await read())).toEqual([1002]);
    await call(bindings, users.UsersSyncStart, platform, {});
    expect(logins(await read())).toEqual([1010]);
    expect(session.unused).toBe(0);
  });

  it('runs the reads of one session one after another, so held rows are never overtaken nor lost', async () => {
    const bindings = boundTo(1);
    let release!: (rows: Row[]) => void;
    const first = new Promise<Row[]>((resolve) => {
      release = resolve;
    });
    const session = scripted().answers('UsersSyncRead', first).answers('UsersSyncRead', []);
    const platform = await startedUsers(bindings, session);
    const a = call(bindings, users.UsersSyncRead, platform, { limit: 10 });
    const b = call(bindings, users.UsersSyncRead, platform, { limit: 10 });
    release([account(1001), account(1002)]);
    // b waits for a, takes the row a held back, and asks the server for what its limit leaves.
    expect([logins(await a), logins(await b)]).toEqual([[1001], [1002]]);
    expect(session.sent.slice(1)).toEqual([sent('UsersSyncRead', { limit: 10 }), sent('UsersSyncRead', { limit: 9 })]);
  });

  it('keeps the sessions of two platforms apart', async () => {
    const bindings = boundTo(1);
    const one = await startedUsers(bindings, scripted().answers('UsersSyncRead', [account(1001), account(1002)]));
    const two = await startedUsers(bindings, scripted().answers('UsersSyncRead', [account(2001)]));
    expect(logins(await call(bindings, users.UsersSyncRead, one, { limit: 5 }))).toEqual([1001]);
    expect(logins(await call(bindings, users.UsersSyncRead, two, { limit: 5 }))).toEqual([2001]);
  });

  it('keeps the held rows a read took when its request to the server fails, answering them next time', async () => {
    const bindings = boundTo(2);
    const session = scripted()
      .answers('UsersSyncRead', [account(1001), account(1002), account(1003)])
      .fails('UsersSyncRead', new Error('connection lost'))
      .answers('UsersSyncRead', []);
    const platform = await startedUsers(bindings, session);
    const read = () => call(bindings, users.UsersSyncRead, platform, { limit: 5 });
    expect(logins(await read())).toEqual([1001, 1002]);
    await expect(read()).rejects.toThrow('connection lost');
    expect(logins(await read())).toEqual([1003]);
    expect(session.sent.slice(1)).toEqual([
      sent('UsersSyncRead', { limit: 5 }),
      sent('UsersSyncRead', { limit: 4 }),
      sent('UsersSyncRead', { limit: 4 }),
    ]);
  });

  it('passes a failed read on and runs the next one', async () => {
    const session = scripted()
      .fails('UsersSyncRead', new Error('connection lost'))
      .answers('UsersSyncRead', [account(1)]);
    const platform = await startedUsers(pf4BatchReadsBindings, session);
    await expect(call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 5 })).rejects.toThrow(
      'connection lost',
    );
    expect(logins(await call(pf4BatchReadsBindings, users.UsersSyncRead, platform, { limit: 5 }))).toEqual([1]);
  });
});
