/**
 * The seeded worlds: the same seed builds the same accounts and trades, another seed builds different ones, and
 * the quote feed moves with bid below ask.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSim, type RunningSim } from './index.js';
import { ManagerClient } from '../test/support/sim/managerClient.js';
import { KeyedRecords } from './world/keyedRecords.js';

const running: RunningSim[] = [];
const clients: ManagerClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(running.splice(0).map((sim) => sim.close()));
});

async function firstRecords(seed: number, server: string) {
  const sim = await startSim({ seed, managerPassword: 'pw' });
  running.push(sim);
  const client = await ManagerClient.connect(sim.port, server);
  clients.push(client);
  await client.ok('login', { login: 1000, password: 'pw', pump: false });
  if (server === 'demo-pf4') {
    const users = await client.ok<{ items: Array<Record<string, unknown>> }>('UsersRequest', { limit: 5 });
    const trades = await client.ok<{ items: Array<Record<string, unknown>> }>('TradesRequest', { limit: 5 });
    // Profit and close price follow the live quote, which moves with wall-clock ticks; compare the stored part.
    return { users: users.items, trades: trades.items.map(({ profit: _p, closePrice: _c, ...rest }) => rest) };
  }
  const users = await client.ok<{ items: Array<Record<string, unknown>> }>('UsersRequest', { limit: 5 });
  const positions = await client.ok<{ items: Array<Record<string, unknown>> }>('PositionsRequest', { limit: 5 });
  return { users: users.items, trades: positions.items.map(({ profit: _p, priceCurrent: _c, ...rest }) => rest) };
}

describe('determinism', () => {
  it('builds identical PF4 accounts and trades from the same seed', async () => {
    const a = await firstRecords(7, 'demo-pf4');
    const b = await firstRecords(7, 'demo-pf4');
    expect(a).toEqual(b);
    expect(a.users).toHaveLength(5);
    expect(a.trades).toHaveLength(5);
  });

  it('builds different PF4 accounts and trades from another seed', async () => {
    const a = await firstRecords(7, 'demo-pf4');
    const b = await firstRecords(8, 'demo-pf4');
    expect(a.users.map((u) => u.login)).toEqual(b.users.map((u) => u.login));
    expect(a.users).not.toEqual(b.users);
    expect(a.trades).not.toEqual(b.trades);
  });

  it('builds identical PF5 worlds from the same seed and different ones from another', async () => {
    const a = await firstRecords(11, 'demo-pf5');
    const b = await firstRecords(11, 'demo-pf5');
    const c = await firstRecords(12, 'demo-pf5');
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });
});

describe('quote feed', () => {
  it('pushes ticks with bid below ask and moving prices', async () => {
    const sim = await startSim({
      managerPassword: 'pw',
      config: {
        servers: [
          { name: 'fast', family: 'PF4', symbols: 3, ticksPerSecond: 200, managers: [{ login: 1000, password: 'pw' }] },
        ],
      },
    });
    running.push(sim);
    const client = await ManagerClient.connect(sim.port, 'fast');
    clients.push(client);
    await client.ok('login', { login: 1000, password: 'pw' });
    const ticks = () =>
      client.events
        .filter((e) => e.event === 'ticks' && e.op === 'update')
        .map((e) => e.record as { symbol: string; time: string; bid: number; ask: number });
    await client.waitFor(() => ticks().length >= 30, 5000, '30 ticks');
    for (const tick of ticks()) {
      expect(tick.bid).toBeLessThan(tick.ask);
      expect(Number.isNaN(Date.parse(tick.time))).toBe(false);
    }
    const eurusd = ticks()
      .filter((t) => t.symbol === 'EURUSD')
      .map((t) => t.bid);
    expect(new Set(eurusd).size).toBeGreaterThan(1);
  });
});

describe('keyed records', () => {
  it('pages in key order after out-of-order inserts and deletes', () => {
    const table = new KeyedRecords<string>();
    for (const key of [5, 1, 9, 3, 7]) table.set(key, `v${key}`);
    table.delete(3);
    expect(table.keys()).toEqual([1, 5, 7, 9]);
    expect(table.page(1, 2)).toEqual({ items: ['v5', 'v7'], hasMore: true });
    expect(table.page(7, 10)).toEqual({ items: ['v9'], hasMore: false });
    expect(table.maxKey()).toBe(9);
  });
});
