/**
 * The batch reads end to end, on a PF4 server of 300 accounts (quotes off, so trades keep their values) behind a
 * broker whose answers may carry 64 KiB (BROKER_ANSWER_MAX_BYTES; 16 MiB by default): the snapshots of accounts and
 * of every open trade compared with the server's own, a contract-default snapshot whose rows pass the bound refused
 * naming how many fit (and that many answered), and the users and trades sync sessions read through the gateway until
 * drained, the rows past the bound answered by the next reads, nothing lost nor repeated. A sync snapshot belongs to
 * the broker's manager session: the test's own session on the server sees none, a read the broker's session never
 * started is refused, and so is a read after the simulator dropped the session's connection (the broker logs in
 * again on a connection without the snapshot): `NotFound`, start again, never `[]` as if drained.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeRecord } from '../../../shared/records/shape.js';
import { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackForFile } from '../support.js';
import { call, fails, ok, refuses } from './api.js';

const ACCOUNTS = 300;
const TRADES = 40;
/** What one answer may carry here: tens of accounts, every open trade. */
const ANSWER_MAX_BYTES = 64 * 1024;
const password = randomBytes(18).toString('base64url');
// The file runs in its own process, so the stack's processes take the manager's password from here.
process.env.SIM_MANAGER_PASSWORD = password;
const managers = [{ login: 1000, password }];
const stack = stackForFile({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, accounts: ACCOUNTS, trades: TRADES, managers },
      { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
    ],
  },
  brokerEnv: { BROKER_ANSWER_MAX_BYTES: String(ANSWER_MAX_BYTES) },
});
/** The stack's client, and a manager session of the test's own on the PF4 server (no change stream). */
const setup = {} as { client: typeof stack.client; manager: ManagerClient };
const connectManager = async () => {
  setup.manager?.close();
  setup.manager = await ManagerClient.connect(stack.client.stack.sim.port, 'demo-pf4');
  await setup.manager.ok('login', { login: 1000, password, pump: false });
};
beforeAll(async () => {
  setup.client = stack.client;
  await connectManager();
});
afterAll(() => setup.manager?.close());

type Row = Record<string, unknown>;
const asUser = shapeRecord('PF4User');
const asTrade = shapeRecord('PF4Trade');
const logins = (rows: Row[]) => rows.map((r) => r.login as number);
const orders = (rows: Row[]) => rows.map((r) => r.order as number);
/** The refusal of a read whose snapshot the broker's session does not hold. */
const lost = (start: string, rows: string, reconnected: boolean) => ({
  code: 'NotFound',
  managerCode: null,
  message: `the ${rows} sync snapshot is lost: ${
    reconnected
      ? `the broker's manager session has reconnected since ${start}, and the trading server drops a sync snapshot with its connection`
      : `this broker's manager session has answered no ${start} (never started here, or started on another broker)`
  }; start again with ${start}`,
});
const simLogins = async () => ((await setup.client.stack.control('demo-pf4', 'state')) as { logins: number }).logins;

describe('v2.PF4.UsersSnapshot and v2.PF4.TradesSnapshot', () => {
  it('answer the first `limit` accounts and open trades as the server holds them, secrets stripped', async () => {
    const { client: c, manager } = setup;
    const users = await ok<Row[]>(c, 'v2.PF4.UsersSnapshot', { query: { limit: 20 } });
    expect(users).toEqual((await manager.ok<Row[]>('UsersSnapshot', { limit: 20 })).map(asUser));
    expect(users[0]).not.toHaveProperty('password');
    // Every open trade: fewer than the contract default, within what one answer carries.
    const trades = await ok<Row[]>(c, 'v2.PF4.TradesSnapshot');
    const server = await manager.ok<Row[]>('TradesSnapshot');
    expect(server).toHaveLength(TRADES);
    expect(trades).toEqual(server.map(asTrade));
    expect(orders(trades)).toEqual([...orders(trades)].sort((a, b) => a - b));
    expect(orders(await ok<Row[]>(c, 'v2.PF4.TradesSnapshot', { query: { limit: 3 } }))).toEqual(
      orders(server).slice(0, 3),
    );
  });

  it('refuse a limit whose accounts pass what one answer carries, naming how many fit; that many are answered', async () => {
    const { client: c, manager } = setup;
    const error = (await call(c, 'v2.PF4.UsersSnapshot')).body.error!;
    expect(error.code).toBe('Validation');
    const fit = Number(/; the first (\d+) fit: ask for at most \1$/.exec(error.message ?? '')?.[1]);
    expect(error.message).toBe(
      `limit: the ${ACCOUNTS} accounts asked for take more than the ${ANSWER_MAX_BYTES} bytes one answer may carry; the first ${fit} fit: ask for at most ${fit}`,
    );
    expect(fit).toBeGreaterThan(10);
    expect(fit).toBeLessThan(ACCOUNTS / 2);
    const users = await ok<Row[]>(c, 'v2.PF4.UsersSnapshot', { query: { limit: fit } });
    expect(users).toEqual((await manager.ok<Row[]>('UsersSnapshot', { limit: fit })).map(asUser));
    expect(await refuses(c, 'v2.PF4.UsersSnapshot', 'limit', { query: { limit: fit + 1 } })).toBe(
      `limit: the ${fit + 1} accounts asked for take more than the ${ANSWER_MAX_BYTES} bytes one answer may carry; the first ${fit} fit: ask for at most ${fit}`,
    );
    // The link carried it and is still up: the next call is answered.
    expect(await ok<Row[]>(c, 'v2.PF4.UsersSnapshot', { query: { limit: 1 } })).toHaveLength(1);
  });

  it('refuse limits of 0, above 100000 and not integers, naming limit', async () => {
    const { client: c } = setup;
    for (const id of [
      'v2.PF4.UsersSnapshot',
      'v2.PF4.TradesSnapshot',
      'v2.PF4.UsersSyncRead',
      'v2.PF4.TradesSyncRead',
    ]) {
      expect(await refuses(c, id, 'limit', { query: { limit: 0 } })).toBe('limit: limit must be at least 1');
      expect(await refuses(c, id, 'limit', { query: { limit: 100_001 } })).toBe('limit: limit must be at most 100000');
      expect(await refuses(c, id, 'limit', { query: { limit: '2.5' } })).toBe('limit: limit must be an integer');
    }
  });
});

describe('v2.PF4.UsersSyncRead and v2.PF4.TradesSyncRead', () => {
  it('read every reserved account once, in login order, across reads the answer bound splits, then []', async () => {
    const { client: c, manager } = setup;
    const all = await manager.ok<Row[]>('UsersSnapshot', { limit: ACCOUNTS });
    expect(all).toHaveLength(ACCOUNTS);
    expect(await ok(c, 'v2.PF4.UsersSyncStart', { query: { timestamp: 0 } })).toBe(true);
    // The snapshot is the broker's session's: the test's own session on the server holds none.
    expect(await manager.ok('UsersSyncRead')).toEqual([]);
    const reads: Row[][] = [];
    for (
      let rows = await ok<Row[]>(c, 'v2.PF4.UsersSyncRead');
      rows.length > 0;
      rows = await ok<Row[]>(c, 'v2.PF4.UsersSyncRead')
    ) {
      reads.push(rows);
      expect(reads.length).toBeLessThanOrEqual(ACCOUNTS);
    }
    // The contract default asks for every account; the bound splits them over several reads.
    expect(reads.length).toBeGreaterThan(2);
    expect(reads[0].length).toBeLessThan(ACCOUNTS / 2);
    expect(reads.flat()).toEqual(all.map(asUser));
    expect(await ok(c, 'v2.PF4.UsersSyncRead')).toEqual([]);
  });

  it('take `limit` trades at a time, a repeated Idempotency-Key replaying its answer without draining more', async () => {
    const { client: c, manager } = setup;
    const server = await manager.ok<Row[]>('TradesSnapshot');
    // No trades sync was started on the broker's session yet: refused, not [] as if drained.
    expect(await fails(c, 'v2.PF4.TradesSyncRead')).toEqual(lost('TradesSyncStart', 'trades', false));
    expect(await ok(c, 'v2.PF4.TradesSyncStart', { query: { timestamp: 0 } })).toBe(true);
    const keyed = { query: { limit: 15 }, headers: { 'Idempotency-Key': `batch-reads-${Date.now()}` } };
    const first = await call<Row[]>(c, 'v2.PF4.TradesSyncRead', keyed);
    expect(first.body.data).toEqual(server.slice(0, 15).map(asTrade));
    const again = await call<Row[]>(c, 'v2.PF4.TradesSyncRead', keyed);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    const rest = await ok<Row[]>(c, 'v2.PF4.TradesSyncRead', { query: { limit: 1000 } });
    expect([...first.body.data!, ...rest]).toEqual(server.map(asTrade));
    expect(await ok(c, 'v2.PF4.TradesSyncRead')).toEqual([]);
    // A start past every trade's last change reserves none.
    expect(await ok(c, 'v2.PF4.TradesSyncStart', { query: { timestamp: 2147483647 } })).toBe(true);
    expect(await ok(c, 'v2.PF4.TradesSyncRead')).toEqual([]);
  });

  it("refuse a read after the broker's manager session reconnected, never [] as if drained; a new start reads again", async () => {
    const { client: c } = setup;
    expect(await ok(c, 'v2.PF4.UsersSyncStart', { query: { timestamp: 0 } })).toBe(true);
    const first = await ok<Row[]>(c, 'v2.PF4.UsersSyncRead', { query: { limit: 20 } });
    expect(first).toHaveLength(20);
    // The simulator drops every manager connection (the test's own too); the broker logs in again by itself.
    const before = await simLogins();
    await c.stack.control('demo-pf4', 'drop');
    expect(await eventually(async () => (await simLogins()) > before, 15_000, 50)).toBe(true);
    await connectManager();
    // The server would answer [] on the new connection: the broker refuses instead, and keeps refusing.
    expect(await fails(c, 'v2.PF4.UsersSyncRead')).toEqual(lost('UsersSyncStart', 'accounts', true));
    expect(await fails(c, 'v2.PF4.UsersSyncRead', { query: { limit: 5 } })).toEqual(
      lost('UsersSyncStart', 'accounts', true),
    );
    // Started again, the snapshot is read from its first account.
    expect(await ok(c, 'v2.PF4.UsersSyncStart', { query: { timestamp: 0 } })).toBe(true);
    expect(logins(await ok<Row[]>(c, 'v2.PF4.UsersSyncRead', { query: { limit: 20 } }))).toEqual(logins(first));
  });
});
