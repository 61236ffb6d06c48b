/**
 * The manager protocol as a broker sees it: login outcomes, the refusal of commands before login, the resync
 * snapshot and the answers of the common and family commands, over a real WebSocket to an in-process simulator.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PF4_RESULT, PF5_RESULT } from '../shared/resultCodes.js';
import { RESYNC_CHUNK } from '../shared/protocol.js';
import * as records from '../shared/records/contract.js';
import { startSim, type RunningSim } from './index.js';
import { ManagerClient } from '../test/support/sim/managerClient.js';
import { withoutServerOnly } from './pf4/serverOnlyFields.js';

const PASSWORD = 'test-password';
let sim: RunningSim;
const clients: ManagerClient[] = [];

async function connect(server: string): Promise<ManagerClient> {
  const client = await ManagerClient.connect(sim.port, server);
  clients.push(client);
  return client;
}

async function loggedIn(server: string, pump = false): Promise<ManagerClient> {
  const client = await connect(server);
  await client.ok('login', { login: 1000, password: PASSWORD, pump });
  return client;
}

beforeAll(async () => {
  sim = await startSim({
    managerPassword: PASSWORD,
    config: {
      servers: [
        {
          name: 'demo-pf4',
          family: 'PF4',
          ticksPerSecond: 0,
          managers: [
            { login: 1000, password: PASSWORD },
            { login: 1001, password: 'other', disabled: true },
          ],
        },
        {
          name: 'demo-pf5',
          family: 'PF5',
          ticksPerSecond: 0,
          managers: [
            { login: 1000, password: PASSWORD },
            { login: 1001, password: 'other', disabled: true },
          ],
        },
        {
          name: 'big-pf4',
          family: 'PF4',
          accounts: 12_000,
          trades: 7_000,
          symbols: 30,
          ticksPerSecond: 0,
          managers: [{ login: 1000, password: PASSWORD }],
        },
      ],
    },
  });
});

afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

afterAll(async () => {
  await sim.close();
});

describe('login', () => {
  it('answers the login result with the family, build and rights', async () => {
    const client = await connect('demo-pf4');
    const result = await client.ok<{ server: string; family: string; build: number; rights: string[] }>('login', {
      login: 1000,
      password: PASSWORD,
      pump: false,
    });
    expect(result.server).toBe('demo-pf4');
    expect(result.family).toBe('PF4');
    expect(result.build).toBeGreaterThan(0);
    expect(result.rights).toContain('admin');
  });

  it('refuses a wrong password and an unknown login with PF4 InvalidData', async () => {
    const client = await connect('demo-pf4');
    expect((await client.fails('login', { login: 1000, password: 'wrong' })).code).toBe(PF4_RESULT.InvalidData);
    expect((await client.fails('login', { login: 4242, password: PASSWORD })).code).toBe(PF4_RESULT.InvalidData);
  });

  it('refuses a disabled manager with PF4 AccountDisabled and PF5 AuthAccountDisabled', async () => {
    const pf4 = await connect('demo-pf4');
    expect((await pf4.fails('login', { login: 1001, password: 'other' })).code).toBe(PF4_RESULT.AccountDisabled);
    const pf5 = await connect('demo-pf5');
    expect((await pf5.fails('login', { login: 1001, password: 'other' })).code).toBe(PF5_RESULT.AuthAccountDisabled);
  });

  it('refuses bad PF5 credentials with AuthAccountInvalid', async () => {
    const client = await connect('demo-pf5');
    const error = await client.fails('login', { login: 1000, password: 'nope' });
    expect(error.code).toBe(PF5_RESULT.AuthAccountInvalid);
    expect(error.message).not.toContain('nope');
  });

  it('names the field of a malformed login', async () => {
    const client = await connect('demo-pf4');
    const error = await client.fails('login', { login: 'x', password: PASSWORD });
    expect(error.code).toBe(PF4_RESULT.InvalidData);
    expect(error.message).toContain('login');
  });

  it('refuses commands before login: NotEnoughRights on PF4, ErrPermissions on PF5', async () => {
    const pf4 = await connect('demo-pf4');
    expect((await pf4.fails('UsersRequest', {})).code).toBe(PF4_RESULT.NotEnoughRights);
    expect((await pf4.fails('Ping')).code).toBe(PF4_RESULT.NotEnoughRights);
    const pf5 = await connect('demo-pf5');
    expect((await pf5.fails('UserRequest', { login: 500000 })).code).toBe(PF5_RESULT.ErrPermissions);
  });

  it('answers 404 to an upgrade for an unknown server', async () => {
    await expect(ManagerClient.connect(sim.port, 'no-such-server')).rejects.toThrow(/404/);
  });
});

describe('resync', () => {
  it('streams begin, chunks of every PF4 kind and end with counts equal to the world', async () => {
    const client = await connect('demo-pf4');
    await client.ok('login', { login: 1000, password: PASSWORD });
    const end = await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
    expect(client.events[0]).toEqual({ event: 'resync', op: 'begin', record: { server: 'demo-pf4', family: 'PF4' } });
    const counts = (end.record as { counts: Record<string, number> }).counts;
    expect(counts).toMatchObject({
      users: 200,
      trades: 300,
      ticks: 12,
      symbols: 12,
      groups: 5,
      news: 20,
      symbolGroups: 32,
    });
    expect(Object.keys(counts)).toEqual([
      'users',
      'trades',
      'ticks',
      'symbols',
      'groups',
      'margin',
      'online',
      'news',
      'symbolGroups',
      'symbolSessions',
      'symbolInfo',
    ]);
    expect(counts).toMatchObject({ symbolSessions: 12, symbolInfo: 12 });
    expect(counts.margin).toBeGreaterThan(0);
    const items = new Map<string, unknown[]>();
    for (const e of client.events) {
      if (e.op !== 'chunk') continue;
      const { kind, items: chunk } = e.record as { kind: string; items: unknown[] };
      items.set(kind, [...(items.get(kind) ?? []), ...chunk]);
    }
    for (const [kind, count] of Object.entries(counts)) expect(items.get(kind)?.length, kind).toBe(count);
    // Every record travels in its contract shape, with the server-only fields of accounts and groups beside it.
    for (const user of items.get('users')!)
      records.PF4User.parse(withoutServerOnly('user', user as Record<string, unknown>));
    for (const trade of items.get('trades')!) records.PF4Trade.parse(trade);
    for (const tick of items.get('ticks')!) records.PF4TickInfo.parse(tick);
    for (const symbol of items.get('symbols')!) records.PF4SymbolConfig.parse(symbol);
    // Groups carry their nested security arrays beside the PF4Group fields.
    for (const { secGroups, secMargins, ...group } of items.get('groups') as Array<Record<string, unknown[]>>) {
      records.PF4Group.parse(withoutServerOnly('group', group));
      expect(secGroups).toHaveLength(32);
      for (const entry of secGroups) records.PF4GroupSec.parse(entry);
      for (const entry of secMargins) records.PF4GroupMargin.parse(entry);
    }
    for (const level of items.get('margin')!) records.PF4MarginLevel.parse(level);
    for (const online of items.get('online') ?? []) records.PF4Online.parse(online);
    for (const topic of items.get('news')!) records.PF4NewsTopic.parse(topic);
    for (const { symbol, days } of items.get('symbolSessions') as Array<{ symbol: string; days: unknown[] }>) {
      expect(symbol).toEqual(expect.any(String));
      expect(days).toHaveLength(7);
      for (const day of days) records.PF4SymbolDaySessions.parse(day);
    }
    for (const info of items.get('symbolInfo')!) records.PF4SymbolInfo.parse(info);
    for (const { pos, ...entry } of items.get('symbolGroups') as Array<Record<string, unknown>>) {
      expect(pos).toEqual(expect.any(Number));
      records.PF4SymbolGroup.parse(entry);
    }
    const logins = (items.get('users') as Array<{ login: number }>).map((u) => u.login);
    expect(logins).toEqual([...logins].sort((a, b) => a - b));
  });

  it('streams PF5 users, positions, orders, deals, ticks, symbols and groups in contract shape', async () => {
    const client = await connect('demo-pf5');
    await client.ok('login', { login: 1000, password: PASSWORD });
    const end = await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
    const counts = (end.record as { counts: Record<string, number> }).counts;
    expect(counts.users).toBe(200);
    expect(counts.positions).toBe(300);
    expect(counts.orders).toBe(60);
    expect(counts.deals).toBe(500);
    const schemas: Record<string, { parse: (v: unknown) => unknown }> = {
      users: records.PF5User,
      positions: records.PF5Position,
      orders: records.PF5Order,
      deals: records.PF5Deal,
      ticks: records.PF4TickInfo,
      symbols: records.PF5Symbol,
      groups: records.PF5ConGroup,
    };
    const seen: Record<string, number> = {};
    for (const e of client.events) {
      if (e.op !== 'chunk') continue;
      const { kind, items } = e.record as { kind: string; items: unknown[] };
      seen[kind] = (seen[kind] ?? 0) + items.length;
      for (const item of items) schemas[kind].parse(item);
    }
    expect(seen).toEqual(counts);
  });

  it('splits a large snapshot into chunks of RESYNC_CHUNK items', async () => {
    const client = await connect('big-pf4');
    await client.ok('login', { login: 1000, password: PASSWORD });
    await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end', 15_000);
    const userChunks = client.events
      .filter((e) => e.op === 'chunk' && (e.record as { kind: string }).kind === 'users')
      .map((e) => (e.record as { items: unknown[] }).items.length);
    expect(userChunks).toEqual([RESYNC_CHUNK, RESYNC_CHUNK, 12_000 - 2 * RESYNC_CHUNK]);
  });

  it('sends no events to a session that logged in with pump false', async () => {
    const client = await loggedIn('demo-pf4', false);
    await client.ok('Ping');
    expect(client.events).toEqual([]);
  });
});

describe('commands', () => {
  it('answers Ping and ServerTime', async () => {
    const client = await loggedIn('demo-pf5');
    const ping = await client.ok<{ time: string }>('Ping');
    expect(Number.isNaN(Date.parse(ping.time))).toBe(false);
    const time = await client.ok<string>('ServerTime');
    expect(Math.abs(Date.parse(time) - Date.now())).toBeLessThan(5000);
  });

  it('refuses an unknown command with the family code and names it', async () => {
    const pf4 = await loggedIn('demo-pf4');
    const error = await pf4.fails('NoSuchThing');
    expect(error).toEqual({ code: PF4_RESULT.InvalidData, message: 'unknown command NoSuchThing' });
    const pf5 = await loggedIn('demo-pf5');
    expect((await pf5.fails('NoSuchThing')).code).toBe(PF5_RESULT.ErrParams);
  });

  it('names the bad field of a command', async () => {
    const client = await loggedIn('demo-pf4');
    const error = await client.fails('UsersRequest', { limit: -1 });
    expect(error.code).toBe(PF4_RESULT.InvalidData);
    expect(error.message).toMatch(/^limit /);
  });

  it('pages PF4 accounts by login with UsersRequest', async () => {
    const client = await loggedIn('demo-pf4');
    const first = await client.ok<{ items: Array<{ login: number }>; hasMore: boolean }>('UsersRequest', { limit: 50 });
    expect(first.items).toHaveLength(50);
    expect(first.hasMore).toBe(true);
    expect(first.items[0].login).toBe(100000);
    const last = first.items[49].login;
    const second = await client.ok<{ items: Array<{ login: number }>; hasMore: boolean }>('UsersRequest', {
      after: last,
      limit: 1000,
    });
    expect(second.items[0].login).toBeGreaterThan(last);
    expect(second.hasMore).toBe(false);
    const all = [...first.items, ...second.items].map((u) => u.login);
    expect(all).toHaveLength(200);
    expect(all).toEqual([...all].sort((a, b) => a - b));
  });

  it('reads accounts and trades by key, omitting missing ones', async () => {
    const client = await loggedIn('demo-pf4');
    const users = await client.ok<Array<{ login: number }>>('UserRecordsRequest', { logins: [100001, 999, 100003] });
    expect(users.map((u) => u.login).sort()).toEqual([100001, 100003]);
    const page = await client.ok<{ items: Array<{ order: number; profit: number }> }>('TradesRequest', { limit: 3 });
    expect(page.items).toHaveLength(3);
    const orders = page.items.map((t) => t.order);
    const trades = await client.ok<Array<{ order: number }>>('TradeRecordsRequest', { orders: [...orders, 1] });
    expect(trades.map((t) => t.order)).toEqual(orders);
    const missing = await client.fails('TradeRecordRequest', { order: 1 });
    expect(missing).toEqual({ code: PF4_RESULT.InvalidData, message: 'order 1 not found' });
  });

  it('creates an account on the next free login and pushes a users add event', async () => {
    const watcher = await connect('demo-pf4');
    await watcher.ok('login', { login: 1000, password: PASSWORD });
    await watcher.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
    const client = await loggedIn('demo-pf4');
    const before = await client.ok<{ items: Array<{ login: number }> }>('UsersRequest', {});
    const highest = Math.max(...before.items.map((u) => u.login));
    const created = await client.ok<{ login: number; group: string; name: string; leverage: number }>('UserRecordNew', {
      record: { login: 0, group: 'demo\\forex', name: 'New Trader' },
    });
    expect(created.login).toBe(highest + 1);
    expect(created.leverage).toBe(100);
    records.PF4User.parse(withoutServerOnly('user', created));
    const event = await watcher.waitForEvent((e) => e.event === 'users' && e.op === 'add');
    expect(event.record).toEqual(created);
    const read = await client.ok<Array<{ login: number }>>('UserRecordsRequest', { logins: [created.login] });
    expect(read).toEqual([created]);
  });

  it('refuses a login that already exists and a group that does not', async () => {
    const client = await loggedIn('demo-pf4');
    expect(
      await client.fails('UserRecordNew', { record: { login: 100005, group: 'demo\\forex', name: 'Dup' } }),
    ).toEqual({ code: PF4_RESULT.InvalidData, message: 'login 100005 already exists' });
    const noGroup = await client.fails('UserRecordNew', { record: { group: 'no\\such', name: 'X' } });
    expect(noGroup.code).toBe(PF4_RESULT.InvalidData);
    expect(noGroup.message).toContain('group');
    const noRecord = await client.fails('UserRecordNew', {});
    expect(noRecord.message).toContain('record');
  });

  it('takes a requested free login as asked', async () => {
    const client = await loggedIn('demo-pf4');
    const created = await client.ok<{ login: number }>('UserRecordNew', {
      record: { login: 777777, group: 'real\\vip', name: 'Chosen' },
    });
    expect(created.login).toBe(777777);
  });

  it('answers PF5 UserRequest, UserGetByLogins and TimeGet', async () => {
    const client = await loggedIn('demo-pf5');
    const user = await client.ok<{ login: number }>('UserRequest', { login: 500000 });
    expect(user.login).toBe(500000);
    records.PF5User.parse(user);
    expect(await client.fails('UserRequest', { login: 42 })).toEqual({
      code: PF5_RESULT.ErrNotfound,
      message: 'login 42 not found',
    });
    expect((await client.fails('UserRequest', {})).code).toBe(PF5_RESULT.ErrParams);
    const some = await client.ok<Array<{ login: number }>>('UserGetByLogins', { logins: [500001, 1, 500002] });
    expect(some.map((u) => u.login)).toEqual([500001, 500002]);
    records.PF5Time.parse(await client.ok('TimeGet'));
  });

  it('opens and closes a PF4 market trade with TradeTransaction, pushing trade events', async () => {
    const watcher = await connect('demo-pf4');
    await watcher.ok('login', { login: 1000, password: PASSWORD });
    await watcher.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
    const client = await loggedIn('demo-pf4');
    const opened = await client.ok<{ order: number; openPrice: number; tradeCommand: string }>('TradeTransaction', {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: 100010,
      tradeCommand: 'Buy',
      symbol: 'EURUSD',
      volume: 10,
    });
    records.PF4Trade.parse(opened);
    const tick = await client.ok<{ ask: number }>('TickInfoLast', { symbol: 'EURUSD' });
    expect(opened.openPrice).toBe(tick.ask);
    await watcher.waitForEvent(
      (e) => e.event === 'trades' && e.op === 'add' && (e.record as { order: number }).order === opened.order,
    );
    const closed = await client.ok<{ tradeRecordState: string }>('TradeTransaction', {
      tradeTransactionType: 'BrOrderClose',
      order: opened.order,
    });
    expect(closed.tradeRecordState).toBe('ClosedNormal');
    const gone = await watcher.waitForEvent((e) => e.event === 'trades' && e.op === 'delete');
    // The delete carries the final record: the one the close answered.
    expect(gone.record).toEqual(closed);
    await watcher.waitForEvent(
      (e) => e.event === 'users' && e.op === 'update' && (e.record as { login: number }).login === 100010,
    );
    expect(await client.ok('TradeRecordsRequest', { orders: [opened.order] })).toEqual([]);
  });
});
