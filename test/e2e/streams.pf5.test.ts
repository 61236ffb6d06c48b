/**
 * The PF5 live streams end to end (simulator, broker, edge in workerd): the stock @microsoft/signalr client on
 * /hubs/pf5/v2 gets OnConnectionStatus, OnTick and StreamTicks from the simulator's feed, and StreamPositions,
 * StreamOrders, StreamDeals, StreamUserUpdates and StreamMarginCallUpdates carry the changes that v1 PF5 API calls
 * (UserAdd, UserUpdate, DealUpdate, PositionDeleteBatch, OrderDeleteBatch) and the trading server's own dealing cause,
 * each payload checked against the simulator's record; a leverage change through the API moves an account into margin
 * call and back, announced as `{login, type, direction}`. No password or other secret appears in any payload. The
 * PF5 Server-Sent Events route serves the same topics, margin included, and refuses a PF4 topic.
 */
import { HubConnectionBuilder, HttpTransportType, LogLevel, type HubConnection } from '@microsoft/signalr';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PF5_SERVER } from '../../launcher/demo.js';
import type { ManagerClient } from '../support/sim/managerClient.js';
import { SseReader } from '../support/sse.js';
import { ok } from './v1/api.js';
import { connectManager, eventually, managerPassword as managerPasswordOf, stackForFile } from './support.js';

type Row = Record<string, any>;

const setup = stackForFile();
let sim: ManagerClient;
let managerPassword: string;
const open: HubConnection[] = [];
/** Passwords of the accounts the tests create: they must never appear on a stream. */
const PASSWORD = 'StreamMain12ab';
const INVESTOR = 'StreamView12ab';

beforeAll(async () => {
  const c = setup.client;
  sim = await connectManager(c.stack, DEMO_PF5_SERVER);
  managerPassword = managerPasswordOf(c.stack);
});
afterAll(() => sim?.close());
afterEach(async () => {
  await Promise.all(open.splice(0).map((h) => h.stop().catch(() => {})));
});

function hub(): HubConnection {
  const c = setup.client;
  const connection = new HubConnectionBuilder()
    .withUrl(`${c.stack.edgeUrl}/hubs/pf5/v2?tradePlatform=${c.stack.platforms.pf5}`, {
      accessTokenFactory: () => c.token,
      transport: HttpTransportType.WebSockets,
    })
    .configureLogging(LogLevel.None)
    .build();
  open.push(connection);
  return connection;
}

/** Collects the items of a hub server stream. */
function collect(connection: HubConnection, name: string, ...args: unknown[]): Row[] {
  const items: Row[] = [];
  connection.stream(name, ...args).subscribe({ next: (item) => items.push(item), error: () => {}, complete: () => {} });
  return items;
}

/**
 * Every field of a stream payload (but `kind` and `skip`) has the server record's value, and the payload carries at
 * least `min` of them: the stream sends the server's state, not a copy of the request.
 */
function expectFromServer(payload: Row, server: Row, min: number, skip: string[] = []) {
  const fields = Object.keys(payload).filter((k) => k !== 'kind' && !skip.includes(k));
  expect(fields.length, `fields of ${JSON.stringify(payload)}`).toBeGreaterThanOrEqual(min);
  for (const f of fields) expect(payload[f], f).toEqual(server[f]);
}

/** No secret anywhere in what the streams delivered: no secret-like field, no password the tests know. */
function expectNoSecrets(payloads: unknown[]) {
  const text = JSON.stringify(payloads);
  for (const secret of [PASSWORD, INVESTOR, managerPassword]) expect(text).not.toContain(secret);
  const keys = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        keys.add(k);
        walk(x);
      }
  };
  walk(payloads);
  expect([...keys].filter((k) => /pass|secret|hash|otp|apidata|token|cert/i.test(k))).toEqual([]);
}

/**
 * A new account (v1.PF5.UserAdd, with passwords) holding one lot of EURUSD, funded so that its margin level is about
 * 150%: in the clear at leverage 100, in margin call (about 75%, above the 50% stop-out) at leverage 50.
 */
async function accountAt150(name: string): Promise<{ login: number; position: number; deposit: number }> {
  const c = setup.client;
  const created = await ok<Row>(c, 'v1.PF5.UserAdd', {
    body: {
      group: 'demo\\retail',
      leverage: 100,
      firstName: name,
      lastName: 'Stream',
      password: PASSWORD,
      passwordInvestor: INVESTOR,
    },
  });
  const login = created.login as number;
  const deposit = (
    await sim.ok<Row>('DealerBalance', { login, type: 'Balance', amount: 5_000, comment: 'stream deposit' })
  ).deal as number;
  const position = (
    await sim.ok<Row>('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000, comment: 'stream buy' })
  ).position as number;
  const account = await sim.ok<Row>('UserAccountGet', { login });
  const adjust = Math.round(account.margin * 1.5 - account.equity);
  if (adjust !== 0) await sim.ok('DealerBalance', { login, type: 'Balance', amount: adjust, comment: 'to 150%' });
  const level = (await sim.ok<Row>('UserAccountGet', { login })).marginLevel as number;
  expect(level).toBeGreaterThan(120);
  expect(level).toBeLessThan(180);
  return { login, position, deposit };
}

describe('SignalR hub /hubs/pf5/v2', () => {
  it('connects, gets OnConnectionStatus, and ticks of the simulator feed on OnTick and StreamTicks', async () => {
    const connection = hub();
    const statuses: Row[] = [];
    const ticks: Row[] = [];
    connection.on('OnConnectionStatus', (s) => statuses.push(s));
    connection.on('OnTick', (t) => ticks.push(t));
    await connection.start();
    await eventually(() => Promise.resolve(statuses.at(-1)?.connected === true), 10_000);
    expect(statuses.at(-1)).toEqual({ connected: true });
    const streamed = collect(connection, 'StreamTicks', 'GBPUSD');
    await connection.invoke('SubscribeToTicks', 'EURUSD');
    // A tick delivered is the simulator's: some EURUSD tick received equals the server's last one when asked.
    const matched = await eventually(
      async () => {
        const last = await sim.ok<Row>('TickLast', { symbol: 'EURUSD' });
        return ticks.some((t) => t.bid === last.bid && t.ask === last.ask && t.lastTime === last.time);
      },
      20_000,
      200,
    );
    expect(matched).toBe(true);
    await eventually(() => Promise.resolve(streamed.length >= 2), 20_000);
    expect(ticks.every((t) => t.symbol === 'EURUSD')).toBe(true);
    expect(streamed.every((t) => t.symbol === 'GBPUSD')).toBe(true);
    for (const t of [...ticks, ...streamed]) {
      expect(Object.keys(t).sort()).toEqual(['ask', 'bid', 'lastTime', 'symbol']);
      expect(t.ask).toBeGreaterThanOrEqual(t.bid);
    }
    await expect(connection.invoke('NoSuchMethod')).rejects.toThrow(/Unknown hub method/);
    // A PF4 stream is not a PF5 hub's.
    const refused = await new Promise<string>((resolve) => {
      connection
        .stream('StreamTrades')
        .subscribe({ next: () => {}, error: (e) => resolve(String(e)), complete: () => resolve('completed') });
    });
    expect(refused).toContain("Unknown hub stream 'StreamTrades'");
  });

  it("streams users, deals, positions, orders and margin calls of API calls and server dealing, from the server's records", async () => {
    const c = setup.client;
    const connection = hub();
    await connection.start();
    const users = collect(connection, 'StreamUserUpdates');
    const deals = collect(connection, 'StreamDeals');
    const positions = collect(connection, 'StreamPositions');
    const orders = collect(connection, 'StreamOrders');
    const margins = collect(connection, 'StreamMarginCallUpdates');
    // The hub handles a connection's messages in order: once this answers, every stream above is open.
    await connection.invoke('SubscribeToTicks', 'EURUSD');

    const { login, position, deposit } = await accountAt150('Hub');
    const mine = (items: Row[]) => items.filter((i) => i.login === login);

    // users: Added by v1.PF5.UserAdd, Updated by the deposits.
    await eventually(() => Promise.resolve(mine(users).length >= 2), 10_000);
    const added = mine(users)[0];
    expect(added).toMatchObject({
      kind: 'Added',
      login,
      group: 'demo\\retail',
      leverage: 100,
      name: 'Hub Stream',
      balance: 0,
    });

    // deals: the deposit and the fill, as the server holds them.
    await eventually(
      () =>
        Promise.resolve(
          mine(deals).some((d) => d.deal === deposit) && mine(deals).some((d) => d.positionID === position),
        ),
      10_000,
    );
    const depositDeal = mine(deals).find((d) => d.deal === deposit)!;
    expect(depositDeal).toMatchObject({ kind: 'Added', action: 'Balance', profit: 5_000, comment: 'stream deposit' });
    expectFromServer(depositDeal, await sim.ok<Row>('DealRequestByTicket', { ticket: deposit }), 10);
    const fill = mine(deals).find((d) => d.positionID === position)!;
    expect(fill).toMatchObject({ kind: 'Added', action: 'Buy', entry: 'In', symbol: 'EURUSD', volume: 10_000 });
    expectFromServer(fill, await sim.ok<Row>('DealRequestByTicket', { ticket: fill.deal }), 12);

    // positions: the fill's position (profit and current price follow the quote).
    await eventually(() => Promise.resolve(positions.some((p) => p.position === position)), 10_000);
    const opened = positions.find((p) => p.position === position)!;
    expect(opened).toMatchObject({
      kind: 'Added',
      login,
      symbol: 'EURUSD',
      action: 'Buy',
      volume: 10_000,
      comment: 'stream buy',
    });
    const [serverPosition] = await sim.ok<Row[]>('PositionGetByTickets', { tickets: [position] });
    expectFromServer(opened, serverPosition, 12, ['profit', 'priceCurrent']);

    // margin: v1.PF5.UserUpdate halves the leverage (about 75%: margin call), then restores it.
    const halved = await ok<Row>(c, 'v1.PF5.UserUpdate', { body: { login, leverage: 50 } });
    expect(halved.leverage).toBe(50);
    await eventually(() => Promise.resolve(mine(margins).length >= 1), 10_000);
    expect(mine(margins)).toEqual([{ login, type: 'MarginCall', direction: 'Enter' }]);
    const inCall = await sim.ok<Row>('UserAccountGet', { login });
    expect(inCall.marginLevel).toBeLessThanOrEqual(100);
    expect(inCall.marginLevel).toBeGreaterThan(50);
    await eventually(() => Promise.resolve(mine(users).some((u) => u.kind === 'Updated' && u.leverage === 50)), 10_000);
    await ok(c, 'v1.PF5.UserUpdate', { body: { login, leverage: 100 } });
    await eventually(() => Promise.resolve(mine(margins).length >= 2), 10_000);
    expect(mine(margins)[1]).toEqual({ login, type: 'MarginCall', direction: 'Leave' });
    expect((await sim.ok<Row>('UserAccountGet', { login })).marginLevel).toBeGreaterThan(100);
    expectFromServer(mine(users).at(-1)!, await sim.ok<Row>('UserGet', { login }), 10);

    // deals: Updated by v1.PF5.DealUpdate.
    await ok(c, 'v1.PF5.DealUpdate', { body: { deal: deposit, comment: 'stream audited' } });
    await eventually(() => Promise.resolve(deals.some((d) => d.deal === deposit && d.kind === 'Updated')), 10_000);
    const audited = deals.find((d) => d.deal === deposit && d.kind === 'Updated')!;
    expect(audited.comment).toBe('stream audited');
    expectFromServer(audited, await sim.ok<Row>('DealRequestByTicket', { ticket: deposit }), 10);

    // orders: a pending order placed on the server, then v1.PF5.OrderDeleteBatch.
    const tick = await sim.ok<Row>('TickLast', { symbol: 'EURUSD' });
    const order = (
      await sim.ok<Row>('DealerSend', {
        login,
        symbol: 'EURUSD',
        type: 'BuyLimit',
        volume: 1_000,
        price: Number((tick.bid * 0.9).toFixed(5)),
      })
    ).order as number;
    await eventually(() => Promise.resolve(orders.some((o) => o.order === order)), 10_000);
    const placed = orders.find((o) => o.order === order)!;
    expect(placed).toMatchObject({ kind: 'Added', login, type: 'BuyLimit', state: 'Placed', volumeInitial: 1_000 });
    expectFromServer(placed, await sim.ok<Row>('OrderGet', { ticket: order }), 12, ['priceCurrent']);
    expect(await ok(c, 'v1.PF5.OrderDeleteBatch', { body: [order] })).toBe(true);
    await eventually(() => Promise.resolve(orders.some((o) => o.order === order && o.kind === 'Deleted')), 10_000);
    expect(orders.find((o) => o.order === order && o.kind === 'Deleted')).toEqual({ kind: 'Deleted', order });

    // positions: v1.PF5.PositionDeleteBatch deletes the position; with no margin left nothing is announced on margin.
    expect(await ok(c, 'v1.PF5.PositionDeleteBatch', { body: [position] })).toBe(true);
    await eventually(
      () => Promise.resolve(positions.some((p) => p.position === position && p.kind === 'Deleted')),
      10_000,
    );
    expect(positions.find((p) => p.position === position && p.kind === 'Deleted')).toEqual({
      kind: 'Deleted',
      position,
    });

    expect(mine(margins)).toHaveLength(2);
    for (const m of margins) expect(Object.keys(m).sort()).toEqual(['direction', 'login', 'type']);
    expectNoSecrets([users, deals, positions, orders, margins]);
  });
});

describe('GET /api/v2/PF5/{tradePlatform}/Stream', () => {
  const streamUrl = (query: string) => `${setup.client.stack.edgeUrl}${setup.client.v2pf5}/Stream?${query}`;

  it('sends the status, ticks of the asked symbol, users and margin events with their topics', async () => {
    const c = setup.client;
    const sse = await SseReader.open(streamUrl('ticks=EURUSD&users&margin'), c.token);
    try {
      expect(sse.status).toBe(200);
      await eventually(() => Promise.resolve(sse.of('ticks').length >= 2), 20_000);
      expect(sse.events[0].event).toBe('status');
      expect(JSON.parse(sse.of('status').at(-1)!.data)).toEqual({ connected: true });
      for (const t of sse.of('ticks').map((e) => JSON.parse(e.data))) expect(t.symbol).toBe('EURUSD');

      const { login } = await accountAt150('Sse');
      await ok(c, 'v1.PF5.UserUpdate', { body: { login, leverage: 50, comment: 'sse margin' } });
      const marginOf = () =>
        sse
          .of('margin')
          .map((e) => JSON.parse(e.data))
          .filter((m) => m.login === login);
      await eventually(() => Promise.resolve(marginOf().length >= 1), 10_000);
      expect(marginOf()).toEqual([{ login, type: 'MarginCall', direction: 'Enter' }]);
      const updates = sse
        .of('users')
        .map((e) => JSON.parse(e.data))
        .filter((u) => u.login === login);
      const updated = updates.find((u) => u.comment === 'sse margin');
      expect(updated).toMatchObject({ kind: 'Updated', login, leverage: 50 });
      // The margin event follows the change that caused it.
      const ids = sse.events.map((e) => e.id);
      const userIndex = sse.events.findIndex((e) => e.event === 'users' && JSON.parse(e.data).comment === 'sse margin');
      const marginIndex = sse.events.findIndex((e) => e.event === 'margin' && JSON.parse(e.data).login === login);
      expect(marginIndex).toBeGreaterThan(userIndex);
      expect(new Set(ids.filter((id) => id !== null)).size).toBe(ids.filter((id) => id !== null).length);
      expect(sse.events.filter((e) => !['status', 'ticks', 'users', 'margin'].includes(e.event))).toEqual([]);
      expectNoSecrets(sse.events.map((e) => JSON.parse(e.data)));
      await ok(c, 'v1.PF5.UserUpdate', { body: { login, leverage: 100 } });
      await eventually(() => Promise.resolve(marginOf().length >= 2), 10_000);
      expect(marginOf()[1]).toEqual({ login, type: 'MarginCall', direction: 'Leave' });
    } finally {
      await sse.close();
    }
  });

  it('refuses a topic PF5 streams do not have', async () => {
    const bad = await SseReader.open(streamUrl('trades'), setup.client.token);
    expect(JSON.parse(bad.body).error).toMatchObject({ code: 'Validation' });
    expect(JSON.parse(bad.body).error.message).toContain('margin');
  });
});
