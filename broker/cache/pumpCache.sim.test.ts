/**
 * The PF4 pumping cache fed by the simulator through the broker's manager session, checked table by table against
 * the simulator's live answers: after the resync, after changes made with live commands (ticks, trades, news bodies,
 * symbol groups), and after a dropped connection and a fresh resync. The simulator's feed is idle so quotes move
 * only by the ticks the test sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeRecord } from '../../shared/records/shape.js';
import { startSim, type RunningSim } from '../../sim/index.js';
import { ManagerClient, postControl } from '../../test/support/sim/managerClient.js';
import { startBroker, type RunningBroker } from '../index.js';
import { eventually } from '../../test/support/broker/linkClient.js';
import type { PumpCache, Row } from './pumpCache.js';

const PASSWORD = 'cache-sim-password';
const ID = '6a0c3d1e-2f4b-4c5d-8e6f-7a8b9c0d0e04';
type Rec = Record<string, any>;

let sim: RunningSim;
let broker: RunningBroker;
let live: ManagerClient;

/** A non-pumping manager session for live reads and changes. */
async function connectLive(): Promise<ManagerClient> {
  const client = await ManagerClient.connect(sim.port, 'cache-pf4');
  await client.ok('login', { login: 1000, password: PASSWORD, pump: false });
  return client;
}
const cache = (): PumpCache => broker.platforms.get(ID)!.cache;
const rows = (table: string): Row[] => cache().table(table)!.page(undefined, undefined).items;
const shaped = (schema: string, value: unknown) => shapeRecord(schema)(value);
/**
 * A margin level without the figures that follow the quotes: a level is announced when the account's trades, money or
 * level type change, not on every tick, so its equity, free margin and level are those of its last announcement.
 */
const level = ({ updated: _u, equity: _e, free: _f, level: _l, ...rest }: Rec) => rest;

beforeAll(async () => {
  sim = await startSim({
    config: {
      servers: [
        {
          name: 'cache-pf4',
          family: 'PF4',
          accounts: 60,
          trades: 80,
          symbols: 6,
          ticksPerSecond: 0,
          managers: [{ login: 1000, password: PASSWORD }],
        },
      ],
    },
  });
  broker = await startBroker({
    secret: 'cache-sim-secret',
    platforms: [
      { id: ID, family: 'PF4', server: `ws://127.0.0.1:${sim.port}/cache-pf4`, login: 1000, password: PASSWORD },
    ],
    session: { backoff: { baseMs: 50, capMs: 300 } },
  });
  live = await connectLive();
  await eventually(() => cache().ready, 10_000);
});
afterAll(async () => {
  live?.close();
  await broker?.close();
  await sim?.close();
});

/** Every cached PF4 table the Get operations read equals what the simulator answers live now. */
async function agrees(): Promise<true | string> {
  const groups = await live.ok<Rec[]>('GroupsRequest');
  if (
    JSON.stringify(rows('groups')) !==
    JSON.stringify(groups.map((g) => shaped('PF4Group', g)).sort((a: any, b: any) => (a.group < b.group ? -1 : 1)))
  )
    return 'groups';
  for (const { group } of groups) {
    const securities = cache().get('groupSecurities', group);
    if (
      JSON.stringify(securities?.secGroups) !==
      JSON.stringify(shaped('PF4GroupSec[]', await live.ok('GroupSecGroupsGet', { group })))
    )
      return `secGroups of ${group}`;
    if (
      JSON.stringify(securities?.secMargins) !==
      JSON.stringify(shaped('PF4GroupMargin[]', await live.ok('GroupSecMarginsGet', { group })))
    )
      return `secMargins of ${group}`;
  }
  const margins = (await live.ok<Rec[]>('MarginsRequest')).map((l) => level(shaped('PF4MarginLevel', l) as Rec));
  if (JSON.stringify(rows('margins').map(level)) !== JSON.stringify(margins)) return 'margins';
  const online = (await live.ok<{ items: Rec[] }>('OnlineRequest')).items;
  if (JSON.stringify(rows('online')) !== JSON.stringify(online)) return 'online';
  if (
    JSON.stringify(rows('news')) !==
    JSON.stringify((await live.ok<Rec[]>('NewsRequest')).map((t) => shaped('PF4NewsTopic', t)))
  )
    return 'news';
  const slots = (await live.ok<Rec[]>('CfgRequestSymbolGroup')).map((s, pos) => ({
    pos,
    ...(shaped('PF4SymbolGroup', s) as Rec),
  }));
  if (JSON.stringify(rows('symbolGroups')) !== JSON.stringify(slots)) return 'symbolGroups';
  const symbols = (await live.ok<Rec[]>('SymbolsRequest')).map((s) => s.symbol as string);
  if (JSON.stringify(rows('symbolInfo').map((r) => r.symbol)) !== JSON.stringify([...symbols].sort()))
    return 'symbolInfo set';
  for (const symbol of symbols) {
    const info = shaped('PF4SymbolInfo', await live.ok('SymbolInfoRequest', { symbol }));
    if (JSON.stringify(cache().get('symbolInfo', symbol)) !== JSON.stringify(info)) return `symbolInfo of ${symbol}`;
    const days = shaped('PF4SymbolDaySessions[]', await live.ok('SymbolSessionsGet', { symbol }));
    if (JSON.stringify(cache().get('symbolSessions', symbol)?.days) !== JSON.stringify(days))
      return `sessions of ${symbol}`;
  }
  return true;
}

/** Waits until the cache agrees with the simulator (events are in flight); fails naming the table that does not. */
async function expectAgreement(): Promise<void> {
  let last: true | string = 'not checked';
  try {
    await eventually(async () => ((last = await agrees()) === true ? true : null), 5000, 50);
  } catch {
    expect(last, 'the first cached table that differs from the simulator').toBe(true);
  }
}

describe('the PF4 cache against the simulator', () => {
  it('holds what the live commands answer after the resync', async () => {
    expect(cache().sizes()).toMatchObject({
      groups: 5,
      groupSecurities: 5,
      news: 20,
      symbolGroups: 32,
      symbolSessions: 6,
      symbolInfo: 6,
      closedTrades: 0,
      newsBodies: 0,
    });
    expect(cache().sizes().margins).toBeGreaterThan(10);
    await expectAgreement();
  });

  it('follows ticks, trades, news bodies and symbol group changes', async () => {
    cache().takeUpdatedSymbols();
    const eur = (await live.ok<Rec>('SymbolInfoRequest', { symbol: 'EURUSD' })).bid as number;
    for (const bid of [eur + 0.002, eur - 0.001, eur + 0.0005]) {
      expect(await live.ok('SymbolSendTick', { symbol: 'EURUSD', bid, ask: bid + 0.0002 })).toBe(true);
    }
    await eventually(() => cache().get('symbolInfo', 'EURUSD')?.bid === eur + 0.0005);
    expect(cache().get('symbolInfo', 'EURUSD')).toMatchObject({ direction: 'Up', high: eur + 0.002, spread: 20 });
    expect(cache().takeUpdatedSymbols()).toEqual(['EURUSD']);

    // A new account's first trade brings its margin level; closing it moves the trade to the closed and takes the level out.
    const login = (await live.ok<Rec>('UserRecordNew', { record: { group: 'demo\\forex', name: 'Cache Test' } })).login;
    await live.ok('TradeTransaction', {
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 10_000,
    });
    const opened = await live.ok<Rec>('TradeTransaction', {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: login,
      tradeCommand: 'Buy',
      symbol: 'EURUSD',
      volume: 10,
    });
    await eventually(() => cache().get('margins', login));
    expect(cache().get('trades', opened.order)).toMatchObject({ order: opened.order, login });
    const closed = await live.ok<Rec>('TradeTransaction', {
      tradeTransactionType: 'BrOrderClose',
      order: opened.order,
    });
    await eventually(() => cache().get('closedTrades', opened.order));
    expect(cache().get('trades', opened.order)).toBeUndefined();
    expect(cache().get('closedTrades', opened.order)).toEqual(shaped('PF4Trade', closed));
    const history = (await live.ok<Rec[]>('TradesUserHistory', { login })).find((r) => r.order === opened.order);
    expect(cache().get('closedTrades', opened.order)).toEqual(shaped('PF4Trade', history));
    await eventually(() => cache().get('margins', login) === undefined);

    expect(await live.ok('NewsBodyRequest', { key: 4 })).toBe(true);
    await eventually(() => cache().get('newsBodies', 4));
    expect(cache().get('newsBodies', 4)).toEqual({ key: 4, body: await live.ok('NewsBodyGet', { key: 4 }) });

    await live.ok('CfgUpdateSymbolGroup', { pos: 9, record: { name: 'Exotics', description: 'Exotic pairs' } });
    await live.ok('GroupRecordUpdate', { group: 'real\\vip', record: { company: 'VIP desk' } });
    await live.ok('SymbolHide', { symbol: 'USDJPY' });
    await eventually(() => cache().get('symbolInfo', 'USDJPY') === undefined);
    await live.ok('SymbolSendTick', { symbol: 'GBPUSD', bid: 1.2601, ask: 1.2603 });
    await live.ok('SymbolAdd', { symbol: 'USDJPY' });
    await expectAgreement();
    expect(cache().get('symbolGroups', 9)).toEqual({ pos: 9, name: 'Exotics', description: 'Exotic pairs' });
    expect(cache().takeUpdatedSymbols()).toEqual(['GBPUSD', 'USDJPY']);
  });

  it('keeps closed trades and news bodies through a dropped connection and agrees again after the resync', async () => {
    const closed = cache().sizes().closedTrades;
    expect(closed).toBeGreaterThan(0);
    const resyncs = cache().resyncs;
    await postControl(sim.port, 'cache-pf4/drop', {});
    await eventually(() => cache().resyncs > resyncs, 10_000);
    // The drop closed every manager connection, the test's own too.
    live = await connectLive();
    expect(cache().sizes()).toMatchObject({ closedTrades: closed, newsBodies: 1 });
    await expectAgreement();
  });
});
