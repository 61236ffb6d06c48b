/**
 * The batch reads end to end, on a PF4 server of 32 000 accounts (quotes off, so trades keep their values): the
 * snapshots of every account and every open trade compared with the server's own, a contract-default snapshot whose
 * rows pass the 16 MiB one answer may carry refused naming how many fit, and the users and trades sync sessions read
 * through the gateway until drained, the rows past that bound answered by the next read, nothing lost nor repeated.
 * A sync snapshot belongs to the broker's manager session: the test's own session on the server sees none.
 */
import { randomBytes } from 'node:crypto';
import { Agent, setGlobalDispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeRecord } from '../../../shared/records/shape.js';
import { ManagerClient } from '../../../sim/testing/managerClient.js';
import { stackForFile } from '../support.js';
import { call, ok, refuses, type Answer } from './api.js';

const ACCOUNTS = 32_000;
// Checking a 16 MB answer keeps this process busy for seconds, past the edge's 5 s idle bound on a kept-alive
// connection before the client's own idle timer has run: the next request would go out on a closed connection. One
// connection per request (this file runs in a process of its own).
setGlobalDispatcher(new Agent({ pipelining: 0 }));
const password = randomBytes(18).toString('base64url');
// The file runs in its own process, so the stack's processes take the manager's password from here.
process.env.SIM_MANAGER_PASSWORD = password;
const managers = [{ login: 1000, password }];
const stack = stackForFile({
  simConfig: { servers: [
    { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, accounts: ACCOUNTS, trades: 400, managers },
    { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
  ] },
});
/** The stack's client, and a manager session of the test's own on the PF4 server (no change stream). */
const setup = {} as { client: typeof stack.client; manager: ManagerClient };
beforeAll(async () => {
  setup.client = stack.client;
  setup.manager = await ManagerClient.connect(stack.client.stack.sim.port, 'demo-pf4');
  await setup.manager.ok('login', { login: 1000, password, pump: false });
});
afterAll(() => setup.manager?.close());

type Row = Record<string, unknown>;
const asUser = shapeRecord('PF4User');
const asTrade = shapeRecord('PF4Trade');
const logins = (rows: Row[]) => rows.map((r) => r.login as number);
const SLOW = { 'x-request-timeout': '120' };

/**
 * Calls until the answer is not `NoConnect`, three times at most. On a loaded machine the simulator (or the broker)
 * producing a 20 MB answer can stall past the manager session's 5 s keep-alive; the broker then logs in again and
 * the call answers `NoConnect`, as a real server's dropped connection would: a client asks again (and a sync client
 * starts again, the server's snapshot having gone with the connection).
 */
async function untilConnected<T>(run: () => Promise<Answer<T>>): Promise<Answer<T>> {
  for (let attempt = 1; ; attempt++) {
    const answer = await run();
    if (answer.body.error?.code !== 'NoConnect' || attempt === 3) return answer;
  }
}
const orders = (rows: Row[]) => rows.map((r) => r.order as number);

describe('v2.PF4.UsersSnapshot and v2.PF4.TradesSnapshot', () => {
  it('answer the first `limit` accounts and open trades as the server holds them, secrets stripped', { timeout: 120_000 }, async () => {
    const { client: c, manager } = setup;
    const users = await ok<Row[]>(c, 'v2.PF4.UsersSnapshot', { query: { limit: 500 } });
    expect(users).toEqual((await manager.ok<Row[]>('UsersSnapshot', { limit: 500 })).map(asUser));
    expect(users[0]).not.toHaveProperty('password');
    // Every open trade: fewer than the contract default.
    const trades = await ok<Row[]>(c, 'v2.PF4.TradesSnapshot');
    const server = await manager.ok<Row[]>('TradesSnapshot');
    expect(server).toHaveLength(400);
    expect(trades).toEqual(server.map(asTrade));
    expect(orders(trades)).toEqual([...orders(trades)].sort((a, b) => a - b));
    expect(orders(await ok<Row[]>(c, 'v2.PF4.TradesSnapshot', { query: { limit: 3 } }))).toEqual(orders(server).slice(0, 3));
  });

  it('refuse a limit whose accounts pass what one answer carries, naming how many fit; that many are answered', { timeout: 180_000 }, async () => {
    const { client: c, manager } = setup;
    const error = (await untilConnected(() => call(c, 'v2.PF4.UsersSnapshot', { headers: SLOW }))).body.error!;
    expect(error.code).toBe('Validation');
    const fit = Number(/; the first (\d+) fit: ask for at most \1$/.exec(error.message ?? '')?.[1]);
    expect(error.message).toBe(`limit: the 32000 accounts asked for take more than the 16777216 bytes one answer may carry; the first ${fit} fit: ask for at most ${fit}`);
    expect(fit).toBeGreaterThan(10_000);
    expect(fit).toBeLessThan(ACCOUNTS);
    const answer = await untilConnected(() => call<Row[]>(c, 'v2.PF4.UsersSnapshot', { query: { limit: fit }, headers: SLOW }));
    expect(answer.body.error).toBeNull();
    const users = answer.body.data!;
    expect(logins(users)).toEqual(logins(await manager.ok<Row[]>('UsersSnapshot', { limit: fit })));
    // The link carried it and is still up: the next call is answered.
    expect(await ok<Row[]>(c, 'v2.PF4.UsersSnapshot', { query: { limit: 1 } })).toHaveLength(1);
  });

  it('refuse limits of 0, above 100000 and not integers, naming limit', async () => {
    const { client: c } = setup;
    for (const id of ['v2.PF4.UsersSnapshot', 'v2.PF4.TradesSnapshot', 'v2.PF4.UsersSyncRead', 'v2.PF4.TradesSyncRead']) {
      expect(await refuses(c, id, 'limit', { query: { limit: 0 } })).toBe('limit: limit must be at least 1');
      expect(await refuses(c, id, 'limit', { query: { limit: 100_001 } })).toBe('limit: limit must be at most 100000');
      expect(await refuses(c, id, 'limit', { query: { limit: '2.5' } })).toBe('limit: limit must be an integer');
    }
  });
});

describe('v2.PF4.UsersSyncRead and v2.PF4.TradesSyncRead', () => {
  it('read every reserved account once, in login order, across reads the answer bound splits, then []', { timeout: 240_000 }, async () => {
    const { client: c, manager } = setup;
    const all = logins(await manager.ok<Row[]>('UsersSnapshot', { limit: ACCOUNTS }));
    let first: Row[] = [];
    let second: Row[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await ok(c, 'v2.PF4.UsersSyncStart', { query: { timestamp: 0 } })).toBe(true);
      // The snapshot is the broker's session's: the test's own session on the server holds none.
      expect(await manager.ok('UsersSyncRead')).toEqual([]);
      const one = await call<Row[]>(c, 'v2.PF4.UsersSyncRead', { headers: SLOW });
      const two = one.body.error ? one : await call<Row[]>(c, 'v2.PF4.UsersSyncRead', { headers: SLOW });
      // A manager session lost under a read took its snapshot with it (see untilConnected): start again.
      if (two.body.error?.code === 'NoConnect' && attempt < 3) continue;
      expect([one.body.error, two.body.error]).toEqual([null, null]);
      [first, second] = [one.body.data!, two.body.data!];
      break;
    }
    expect(first.length).toBeGreaterThan(10_000);
    expect(first.length).toBeLessThan(ACCOUNTS);
    expect([...logins(first), ...logins(second)]).toEqual(all);
    expect(second[0]).toEqual(asUser(await manager.ok('UserRecordRequest', { login: second[0].login })));
    expect(await ok(c, 'v2.PF4.UsersSyncRead')).toEqual([]);
  });

  it('take `limit` trades at a time, a repeated Idempotency-Key replaying its answer without draining more', { timeout: 120_000 }, async () => {
    const { client: c, manager } = setup;
    const server = await manager.ok<Row[]>('TradesSnapshot');
    // No trades sync was started on the broker's session yet: nothing is reserved.
    expect(await ok(c, 'v2.PF4.TradesSyncRead')).toEqual([]);
    expect(await ok(c, 'v2.PF4.TradesSyncStart', { query: { timestamp: 0 } })).toBe(true);
    const keyed = { query: { limit: 150 }, headers: { 'Idempotency-Key': `batch-reads-${Date.now()}` } };
    const first = await call<Row[]>(c, 'v2.PF4.TradesSyncRead', keyed);
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
});
