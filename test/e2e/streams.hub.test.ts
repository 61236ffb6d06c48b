/**
 * The SignalR hub end to end with the stock @microsoft/signalr client (simulator, broker, edge in workerd):
 * negotiate and connect with an access token, OnConnectionStatus after the handshake, OnTick after SubscribeToTicks,
 * a server stream of ticks cancelled by the client, a trade opened through the API arriving on StreamTrades, and a
 * bad token or another organization's platform refused.
 */
import { randomUUID } from 'node:crypto';
import {
  HubConnectionBuilder,
  HttpTransportType,
  LogLevel,
  type HubConnection,
  type ISubscription,
} from '@microsoft/signalr';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { openTrade } from './v2/api.js';
import { eventually, stackForFile } from './support.js';

/** Quotes of one symbol come about four times a second (a tenth of that by default): the waits for ticks are short. */
const setup = stackForFile({ ticksPerSecond: 50 });
const open: HubConnection[] = [];

function hub(platform = setup.client.stack.platforms.pf4, token = setup.client.token, family = 'pf4'): HubConnection {
  const connection = new HubConnectionBuilder()
    .withUrl(`${setup.client.stack.edgeUrl}/hubs/${family}/v2?tradePlatform=${platform}`, {
      accessTokenFactory: () => token,
      transport: HttpTransportType.WebSockets,
    })
    .configureLogging(LogLevel.None)
    .build();
  open.push(connection);
  return connection;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.stop().catch(() => {})));
});

describe('SignalR hub /hubs/pf4/v2', () => {
  it('connects, gets OnConnectionStatus, and pushes OnTick for a subscribed symbol only', async () => {
    const connection = hub();
    const statuses: Array<{ connected: boolean }> = [];
    const ticks: Array<{ symbol: string; bid: number; ask: number; lastTime: string }> = [];
    connection.on('OnConnectionStatus', (s) => statuses.push(s));
    connection.on('OnTick', (t) => ticks.push(t));
    await connection.start();
    await eventually(() => Promise.resolve(statuses.at(-1)?.connected === true), 10_000);
    await connection.invoke('SubscribeToTicks', 'EURUSD');
    await eventually(() => Promise.resolve(ticks.length >= 2), 15_000);
    expect(ticks.every((t) => t.symbol === 'EURUSD')).toBe(true);
    expect(Object.keys(ticks[0]).sort()).toEqual(['ask', 'bid', 'lastTime', 'symbol']);
    await connection.invoke('UnsubscribeFromTicks', 'EURUSD');
    await expect(connection.invoke('NoSuchMethod')).rejects.toThrow(/Unknown hub method/);
  });

  it('streams ticks until the client cancels, and a trade opened through the API on StreamTrades', async () => {
    const connection = hub();
    await connection.start();
    const ticks: Array<{ symbol: string }> = [];
    const sub: ISubscription<{ symbol: string }> = connection
      .stream('StreamTicks')
      .subscribe({ next: (t) => ticks.push(t), error: () => {}, complete: () => {} });
    await eventually(() => Promise.resolve(ticks.length >= 3), 15_000);
    sub.dispose();
    // After the cancel the hub sends no more items of that stream; a second stream proves the connection still flows.
    const countAtCancel = ticks.length;
    const trades: Array<Record<string, unknown>> = [];
    connection.stream('StreamTrades').subscribe({ next: (t) => trades.push(t), error: () => {}, complete: () => {} });
    const { order, login } = await openTrade(setup.client, 'via hub');
    await eventually(() => Promise.resolve(trades.some((t) => t.order === order)), 10_000);
    expect(trades.find((t) => t.order === order)).toMatchObject({
      kind: 'Added',
      order,
      login,
      symbol: 'EURUSD',
      cmd: 'Buy',
      comment: 'via hub',
    });
    expect(countAtCancel).toBeGreaterThanOrEqual(3);
  });

  it('sends no item of a cancelled stream once the cancel is read (raw protocol, messages in order)', async () => {
    const c = setup.client;
    const negotiate = await fetch(
      `${c.stack.edgeUrl}/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=${c.stack.platforms.pf4}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${c.token}` },
      },
    );
    const offer = (await negotiate.json()) as {
      negotiateVersion: number;
      connectionToken: string;
      availableTransports: Array<{ transport: string }>;
    };
    expect(offer.negotiateVersion).toBe(1);
    expect(offer.availableTransports.map((t) => t.transport)).toEqual(['WebSockets']);
    const url = `${c.stack.edgeUrl.replace('http', 'ws')}/hubs/pf4/v2?tradePlatform=${c.stack.platforms.pf4}&id=${offer.connectionToken}&access_token=${c.token}`;
    const ws = new WebSocket(url);
    const received: Array<Record<string, any>> = [];
    ws.on('message', (d) => {
      for (const r of (d as Buffer).toString().split('\u001e').filter(Boolean)) {
        const m = JSON.parse(r);
        received.push(m);
        // A server invocation with an id asks for a completion (the hub's flow probe): answer it as SignalR clients do.
        if (m.type === 1 && m.invocationId)
          ws.send(JSON.stringify({ type: 3, invocationId: m.invocationId, error: 'no result' }) + '\u001e');
      }
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const send = (m: object) => ws.send(JSON.stringify(m) + '\u001e');
    try {
      send({ protocol: 'json', version: 1 });
      send({ type: 4, invocationId: 's1', target: 'StreamTicks', arguments: [] });
      await eventually(
        () => Promise.resolve(received.filter((m) => m.type === 2 && m.invocationId === 's1').length >= 2),
        15_000,
      );
      send({ type: 5, invocationId: 's1' });
      send({ type: 1, invocationId: 'after', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
      await eventually(() => Promise.resolve(received.some((m) => m.type === 3 && m.invocationId === 'after')), 10_000);
      const mark = received.findIndex((m) => m.type === 3 && m.invocationId === 'after');
      await eventually(
        () => Promise.resolve(received.slice(mark).filter((m) => m.target === 'OnTick').length >= 2),
        15_000,
      );
      expect(received[0]).toEqual({});
      expect(received.slice(mark).filter((m) => m.type === 2 && m.invocationId === 's1')).toEqual([]);
      send({ type: 7 });
      await new Promise((resolve) => ws.once('close', resolve));
    } finally {
      ws.terminate();
    }
  });

  it("refuses a bad token and another organization's platform", async () => {
    await expect(hub(undefined, 'not-a-token').start()).rejects.toThrow(/401/);
    const c = setup.client;
    const badQuery = new WebSocket(
      `${c.stack.edgeUrl.replace('http', 'ws')}/hubs/pf4/v2?tradePlatform=${c.stack.platforms.pf4}&access_token=not-a-token`,
    );
    const status = await new Promise<number>((resolve) => {
      badQuery.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      badQuery.once('open', () => resolve(101));
    });
    // A refused upgrade leaves the socket unopened: terminating it then reports an error, which is expected here.
    badQuery.on('error', () => {});
    badQuery.terminate();
    expect(status).toBe(401);
    await expect(hub(randomUUID()).start()).rejects.toThrow(/404/);
    await expect(hub(setup.client.stack.platforms.pf5, undefined, 'pf4').start()).rejects.toThrow(/404/);
  });
});
