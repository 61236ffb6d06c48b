/**
 * A stream object whose platform names two brokers, through the real edge in workerd against two scripted brokers:
 * when the first broker's socket closes, when it stops answering pings but keeps its socket (a stopped process), when
 * it says it is draining, refuses the subscription or never answers the upgrade, the subscription moves to the second
 * broker, which is told why; SSE and hub clients that asked for record changes see the status drop, a resync notice
 * and the status come back, then the second broker's events; a client of ticks alone gets no resync. A platform of one
 * broker subscribes on it again after a loss, and its clients are told to resync too.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import WebSocket from 'ws';
import { FAILOVER_OP, PING_OP, SUBSCRIBE_OP, type PingReport } from '../../shared/frames.js';
import type { StreamEvent } from '../../shared/streams.js';
import { ORG_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { SseReader, type SseEvent } from '../support/sse.js';
import { until } from '../support/until.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let token: string;
let a: FakeBroker;
let b: FakeBroker;

/** Scripts a broker as a healthy one: pings answered, a subscription accepted and followed by the platform's status. */
function healthy(broker: FakeBroker, name: string): void {
  broker.script.clear();
  const report: PingReport = { broker: name, draining: false, platform: 'up' };
  broker.script.set(PING_OP, { reply: { ok: true, data: report } });
  broker.script.set(SUBSCRIBE_OP, {
    reply: () => {
      setTimeout(() => broker.push({ sub: 1, events: [{ topic: 'status', data: { connected: true } }] }), 0);
      return { ok: true, data: { sub: 1 } };
    },
  });
}

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeBroker(), startFakeBroker()]);
  // The seeded platforms and the ones each test adds name no brokers: the edge's default list serves them.
  edge = await startTestEdge({ vars: { BROKER_URL: `${a.url},${b.url}` } });
  token = await edge.token();
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await a?.close();
  await b?.close();
});
beforeEach(() => {
  healthy(a, 'a');
  healthy(b, 'b');
});

/**
 * A PF4 platform of its own for each test, so each test's stream object starts on the first broker: served by the
 * edge's default list, or by the brokers named.
 */
async function newPlatform(brokers?: Array<{ url: string }>): Promise<string> {
  const id = randomUUID();
  const db = await edge.db();
  const urls = brokers ? brokers.map((x) => x.url) : null;
  await db
    .prepare(
      'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, broker_urls, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .bind(
      id,
      `failover ${id.slice(0, 8)}`,
      'PF4',
      ORG_A,
      urls?.[0] ?? null,
      urls ? JSON.stringify(urls) : null,
      new Date().toISOString(),
    )
    .run();
  return id;
}

/** A list entry no broker answers at all: a listener that accepts connections and never says a word (a stopped process). */
async function silentListener(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const streamUrl = (platform: string, query: string) =>
  new URL(`/api/v2/PF4/${platform}/Stream?${query}`, edge.url).toString();
const trade = (order: number): StreamEvent => ({ topic: 'trades', data: { kind: 'Added', order } });
const tick = (bid: number): StreamEvent => ({
  topic: 'ticks',
  data: { symbol: 'EURUSD', bid, ask: bid + 1, lastTime: new Date(0).toISOString() },
});
const push = (broker: FakeBroker, ...events: StreamEvent[]) => broker.push({ sub: 1, events });

/** The notice clients get where events may have been missed. */
const resync = {
  message: 'events may have been missed while the stream was interrupted: read the current state again',
};
const subscribed = (broker: FakeBroker, platform: string) =>
  broker.framesFor(SUBSCRIBE_OP).some((f) => f.platform === platform);
const failovers = (broker: FakeBroker, platform: string) =>
  broker
    .framesFor(FAILOVER_OP)
    .filter((f) => f.platform === platform)
    .map((f) => f.args);

/** The SSE events after the first `from` ones, as `[event, data]`. */
const seen = (events: SseEvent[], from = 0) => events.slice(from).map((e) => [e.event, JSON.parse(e.data) as unknown]);

/** A raw SignalR hub socket: handshake, the given invocations, every record it receives; flow checks answered. */
async function hubClient(
  platform: string,
  invocations: object[],
): Promise<{ records: Array<Record<string, unknown>>; close(): void }> {
  const ws = new WebSocket(
    `${edge.url.toString().replace(/^http/, 'ws').replace(/\/$/, '')}/hubs/pf4/v2?tradePlatform=${platform}&access_token=${token}`,
  );
  const records: Array<Record<string, unknown>> = [];
  ws.on('message', (data) => {
    for (const text of (data as Buffer).toString().split('\u001e').filter(Boolean)) {
      const m = JSON.parse(text) as Record<string, unknown>;
      if (m.target === 'OnFlowCheck' && typeof m.invocationId === 'string') {
        ws.send(JSON.stringify({ type: 3, invocationId: m.invocationId, result: null }) + '\u001e');
        continue;
      }
      records.push(m);
    }
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ protocol: 'json', version: 1 }) + '\u001e');
  for (const m of invocations) ws.send(JSON.stringify(m) + '\u001e');
  // Handled in order: once the last invocation is answered, every stream asked for before it is open.
  ws.send(
    JSON.stringify({ type: 1, invocationId: 'ready', target: 'SubscribeToTicks', arguments: ['READY'] }) + '\u001e',
  );
  await until(() => records.some((r) => r.type === 3 && r.invocationId === 'ready'), 'the hub to take the invocations');
  return { records, close: () => ws.close() };
}

/** What a hub socket was sent, without the handshake answer and completions: `[target or stream, argument or item]`. */
const hubSeen = (records: Array<Record<string, unknown>>) =>
  records
    .filter((r) => r.type === 1 || r.type === 2)
    .map((r) =>
      r.type === 1 ? [r.target, (r.arguments as unknown[])[0]] : [`item ${String(r.invocationId)}`, r.item],
    );

/** Opens an SSE client of trades and ticks on a new platform and waits until the first broker's events reach it. */
async function streaming(
  query = 'ticks&trades',
  brokers?: FakeBroker[],
): Promise<{ platform: string; sse: SseReader }> {
  const platform = await newPlatform(brokers);
  const sse = await SseReader.open(streamUrl(platform, query), token);
  await until(
    () => subscribed(a, platform) && sse.of('status').some((e) => JSON.parse(e.data).connected === true),
    'the subscription on the first broker',
  );
  return { platform, sse };
}

describe('a stream whose platform names two brokers', () => {
  it("moves to the second broker when the first one's socket closes: status down, resync, status up, then its events", async () => {
    const { platform, sse } = await streaming();
    const hub = await hubClient(platform, [{ type: 4, invocationId: 'tr', target: 'StreamTrades', arguments: [] }]);
    try {
      push(a, trade(1));
      await until(
        () => sse.of('trades').length === 1 && hub.records.some((r) => r.invocationId === 'tr'),
        "the first broker's trade",
      );
      const before = sse.events.length;
      const hubBefore = hubSeen(hub.records).length;
      a.dropLinks();
      await until(
        () => sse.of('status').filter((e) => JSON.parse(e.data).connected === true).length === 2,
        'the status up again',
      );
      push(b, trade(2));
      await until(
        () => sse.of('trades').length === 2 && hubSeen(hub.records).length >= hubBefore + 4,
        "the second broker's trade",
      );
      expect(seen(sse.events, before)).toStrictEqual([
        ['status', { connected: false }],
        ['resync', resync],
        ['status', { connected: true }],
        ['trades', { kind: 'Added', order: 2 }],
      ]);
      expect(hubSeen(hub.records).slice(hubBefore)).toStrictEqual([
        ['OnConnectionStatus', { connected: false }],
        ['OnResync', resync],
        ['OnConnectionStatus', { connected: true }],
        ['item tr', { kind: 'Added', order: 2 }],
      ]);
      expect(failovers(b, platform)).toStrictEqual([{ reason: 'lost', kind: 'stream' }]);
      expect(b.framesFor(SUBSCRIBE_OP).filter((f) => f.platform === platform)).toHaveLength(1);
      // A client back with an id from before the move is replayed the move, resync included.
      const back = await SseReader.open(streamUrl(platform, 'trades'), token, sse.events[before - 1].id!);
      try {
        await until(() => back.of('trades').length === 1, 'the replay');
        expect(seen(back.events)).toStrictEqual(seen(sse.events, before));
      } finally {
        await back.close();
      }
    } finally {
      hub.close();
      await sse.close();
    }
  });

  it('moves when the first broker stops answering pings and keeps its socket open (a hung broker)', async () => {
    const { platform, sse } = await streaming();
    try {
      await until(
        () => a.framesFor(PING_OP).some((f) => f.platform === platform),
        "a heartbeat on the subscription's socket",
      );
      const before = sse.events.length;
      a.script.set(PING_OP, { hang: true });
      await until(() => subscribed(b, platform), 'the subscription on the second broker');
      await until(
        () => sse.of('status').filter((e) => JSON.parse(e.data).connected === true).length === 2,
        'the status up again',
      );
      push(b, trade(7));
      await until(() => sse.of('trades').length === 1, "the second broker's trade");
      expect(seen(sse.events, before).map(([event]) => event)).toStrictEqual(['status', 'resync', 'status', 'trades']);
      expect(seen(sse.events).at(-1)).toStrictEqual(['trades', { kind: 'Added', order: 7 }]);
      expect(failovers(b, platform)).toStrictEqual([{ reason: 'hung', kind: 'stream' }]);
      // The hung broker's socket is let go: what it sends now reaches nobody.
      push(a, trade(8));
      push(b, trade(9));
      await until(() => sse.of('trades').length === 2, 'the next trade');
      expect(seen(sse.events).at(-1)).toStrictEqual(['trades', { kind: 'Added', order: 9 }]);
    } finally {
      await sse.close();
    }
  });

  it("on a drain notice subscribes on the second broker first, the first one's events coming until then", async () => {
    const { platform, sse } = await streaming();
    try {
      // The second broker takes its time to accept: meanwhile the draining one still delivers.
      const accept = b.script.get(SUBSCRIBE_OP)!;
      b.script.set(SUBSCRIBE_OP, { ...accept, delayMs: 600 });
      const before = sse.events.length;
      a.push({ drain: { broker: 'a' } });
      await until(() => subscribed(b, platform), 'the subscription asked of the second broker');
      push(a, trade(3));
      await until(() => sse.of('trades').length === 1, "the draining broker's trade");
      await until(
        () => sse.of('status').filter((e) => JSON.parse(e.data).connected === true).length === 2,
        'the status up again',
      );
      push(b, trade(4));
      await until(() => sse.of('trades').length === 2, "the second broker's trade");
      expect(seen(sse.events, before)).toStrictEqual([
        ['trades', { kind: 'Added', order: 3 }],
        ['status', { connected: false }],
        ['resync', resync],
        ['status', { connected: true }],
        ['trades', { kind: 'Added', order: 4 }],
      ]);
      expect(failovers(b, platform)).toStrictEqual([{ reason: 'draining', kind: 'stream' }]);
    } finally {
      await sse.close();
    }
  });

  it('sends no resync to a client of ticks alone, SSE or hub', async () => {
    const { platform, sse } = await streaming('ticks=EURUSD');
    const hub = await hubClient(platform, [
      { type: 1, invocationId: 's', target: 'SubscribeToTicks', arguments: ['EURUSD'] },
      { type: 4, invocationId: 'tk', target: 'StreamTicks', arguments: [] },
    ]);
    try {
      push(a, tick(1.1));
      await until(() => sse.of('ticks').length === 1, "the first broker's tick");
      a.dropLinks();
      await until(
        () =>
          subscribed(b, platform) && sse.of('status').filter((e) => JSON.parse(e.data).connected === true).length === 2,
        'the status up again',
      );
      push(b, tick(1.2));
      await until(
        () => sse.of('ticks').length === 2 && hub.records.filter((r) => r.invocationId === 'tk').length === 2,
        "the second broker's tick",
      );
      expect(seen(sse.events).map(([event]) => event)).toStrictEqual([
        'status',
        'status',
        'ticks',
        'status',
        'status',
        'ticks',
      ]);
      expect(sse.of('ticks').map((e) => JSON.parse(e.data).bid)).toStrictEqual([1.1, 1.2]);
      const targets = hubSeen(hub.records).map(([target]) => target);
      expect(targets).not.toContain('OnResync');
      expect(hubSeen(hub.records).filter(([target]) => target === 'OnConnectionStatus')).toStrictEqual([
        ['OnConnectionStatus', { connected: true }],
        ['OnConnectionStatus', { connected: false }],
        ['OnConnectionStatus', { connected: true }],
      ]);
    } finally {
      hub.close();
      await sse.close();
    }
  });

  it("tells clients to resync when the broker's manager session drops and logs in again on the same subscription", async () => {
    const { platform, sse } = await streaming('ticks&trades');
    const hub = await hubClient(platform, [{ type: 4, invocationId: 'tr', target: 'StreamTrades', arguments: [] }]);
    try {
      push(a, trade(1));
      await until(
        () => sse.of('trades').length === 1 && hub.records.some((r) => r.invocationId === 'tr'),
        'the first trade',
      );
      const before = sse.events.length;
      const hubBefore = hubSeen(hub.records).length;
      // The session down, then up after its resync: the changes meanwhile came in the new snapshot, not as events.
      push(a, { topic: 'status', data: { connected: false } });
      push(a, { topic: 'status', data: { connected: true } }, trade(2));
      await until(
        () => sse.of('trades').length === 2 && hubSeen(hub.records).length >= hubBefore + 4,
        'the trade after the session came back',
      );
      expect(seen(sse.events, before)).toStrictEqual([
        ['status', { connected: false }],
        ['resync', resync],
        ['status', { connected: true }],
        ['trades', { kind: 'Added', order: 2 }],
      ]);
      expect(hubSeen(hub.records).slice(hubBefore)).toStrictEqual([
        ['OnConnectionStatus', { connected: false }],
        ['OnResync', resync],
        ['OnConnectionStatus', { connected: true }],
        ['item tr', { kind: 'Added', order: 2 }],
      ]);
      // No move: the subscription stayed on the first broker.
      expect(a.framesFor(SUBSCRIBE_OP).filter((f) => f.platform === platform)).toHaveLength(1);
      expect(failovers(b, platform)).toStrictEqual([]);
    } finally {
      hub.close();
      await sse.close();
    }
  });

  it('owes a second resync when the broker moved to has its session down, sent once it comes up', async () => {
    let downSent = false;
    b.script.set(SUBSCRIBE_OP, {
      reply: () => {
        setTimeout(() => {
          b.push({ sub: 1, events: [{ topic: 'status', data: { connected: false } }] });
          downSent = true;
        }, 0);
        return { ok: true, data: { sub: 1 } };
      },
    });
    const { platform, sse } = await streaming('trades');
    try {
      const before = sse.events.length;
      a.dropLinks();
      // The session comes up only after the second broker said it was down: one socket keeps the two in order.
      await until(
        () => downSent && subscribed(b, platform) && sse.of('resync').length === 1,
        'the move to the second broker',
      );
      push(b, { topic: 'status', data: { connected: true } }, trade(3));
      await until(() => sse.of('trades').length === 1, "the second broker's trade");
      expect(seen(sse.events, before)).toStrictEqual([
        ['status', { connected: false }],
        ['resync', resync],
        ['resync', resync],
        ['status', { connected: true }],
        ['trades', { kind: 'Added', order: 3 }],
      ]);
    } finally {
      await sse.close();
    }
  });

  it('with one broker, subscribes on it again after a loss, without pings or a failover notice, and still resyncs', async () => {
    const { platform, sse } = await streaming('trades', [a]);
    try {
      const before = sse.events.length;
      a.dropLinks();
      await until(
        () => a.framesFor(SUBSCRIBE_OP).filter((f) => f.platform === platform).length === 2,
        'the second subscription',
      );
      await until(
        () => sse.of('status').filter((e) => JSON.parse(e.data).connected === true).length === 2,
        'the status up again',
      );
      push(a, trade(5));
      await until(() => sse.of('trades').length === 1, 'the trade after the reconnect');
      expect(seen(sse.events, before).map(([event]) => event)).toStrictEqual(['status', 'resync', 'status', 'trades']);
      expect(a.framesFor(PING_OP).filter((f) => f.platform === platform)).toStrictEqual([]);
      expect(failovers(a, platform)).toStrictEqual([]);
      expect(b.frames.filter((f) => f.platform === platform)).toStrictEqual([]);
    } finally {
      await sse.close();
    }
  });

  it('goes to the next broker when the first refuses the subscription, or cannot be reached, and tells it why', async () => {
    a.script.set(SUBSCRIBE_OP, {
      reply: {
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message: 'the broker is draining' },
        notTaken: true,
      },
    });
    const refused = await newPlatform([a, b]);
    const silent = await silentListener();
    const unanswered = await newPlatform([silent, b]);
    const readers = await Promise.all([refused, unanswered].map((p) => SseReader.open(streamUrl(p, 'trades'), token)));
    try {
      await until(
        () => readers.every((r) => r.of('status').some((e) => JSON.parse(e.data).connected === true)),
        'both streams up on the second broker',
      );
      push(b, trade(11));
      await until(() => readers.every((r) => r.of('trades').length === 1), "the second broker's trade");
      expect(failovers(b, refused)).toStrictEqual([{ reason: 'draining', kind: 'stream' }]);
      expect(failovers(b, unanswered)).toStrictEqual([{ reason: 'unreachable', kind: 'stream' }]);
      // Neither stream had a subscription before: a client that just connected reads the state itself, no resync.
      for (const r of readers)
        expect(seen(r.events).map(([event]) => event)).toStrictEqual(['status', 'status', 'trades']);
    } finally {
      await Promise.all(readers.map((r) => r.close()));
      await silent.close();
    }
  });
});
