/**
 * A stream client that falls too far behind is told and disconnected, never silently skipped (simulator, broker,
 * edge in workerd, with the limit lowered through the edge's STREAM_MAX_BEHIND binding). A SignalR client on the PF5
 * hub that asked for flow checks (EnableFlowControl) stops reading its socket (so it answers no OnFlowCheck either) while positions are deleted through
 * v1.PF5.PositionDeleteBatch; the stream object finds it slow, holds what comes for it, and past the limit sends it a
 * Close message with the error and closes the socket. When the client reads again it gets every StreamPositions item
 * sent before it fell behind, in order and without a gap (the same as a client that kept reading), then the Close
 * message, then the end of the connection. A Server-Sent Events client that kept reading is not affected. A hub client
 * that did not ask for flow checks is never sent one: it is judged by its keep-alive (the quiet time lowered to 2 s
 * through STREAM_HUB_QUIET_SECONDS), is not held while it reads and pings, and once it stops reading is held, then
 * closed past the limit the same way.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SseReader } from '../support/sse.js';
import { ok } from './v1/api.js';
import { eventually, stackForFile } from './support.js';
import { objectCall } from '../../launcher/edge.js';
import { streamObjectName } from '../../workers/streams/fanout.js';
import { LOCAL_HOME } from '../support/edge.js';

type Row = Record<string, any>;

const LIMIT = 1_000;
/** A hub client without flow checks is held once sent data without a word from it this long (default 30). */
const QUIET_SECONDS = 2;
const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
const managers = [{ login: 1000, password: PASSWORD }];
const setup = stackForFile({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, accounts: 20, trades: 10, managers },
      // Many positions to delete, and a quiet feed: the only events are the test's.
      { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, accounts: 1_000, trades: 12_000, orders: 0, managers },
    ],
  },
  edgeVars: { STREAM_MAX_BEHIND: String(LIMIT), STREAM_HUB_QUIET_SECONDS: String(QUIET_SECONDS) },
});

/** The PF5 platform's stream object's figures, read through Miniflare. */
type Stats = { sse: number; hubs: number; flows: number; slowHubs: number };
const streamStats = (): Promise<Stats> =>
  objectCall<Stats>(
    setup.client.stack.edge.miniflare,
    'STREAMS',
    streamObjectName(setup.client.stack.platforms.pf5, LOCAL_HOME.region, 0),
    'stats',
  );

/**
 * A raw hub client (JSON protocol) that answers flow checks (once it asked for them) while it reads, and can stop
 * reading its socket. With `keepAliveMs` it pings as a stock SignalR client does: on a message received, when that
 * long has passed since it last sent anything.
 */
class RawHub {
  readonly received: Row[] = [];
  closeCode: number | null = null;
  private sentAt = Date.now();
  private constructor(
    private readonly ws: WebSocket,
    keepAliveMs?: number,
  ) {
    ws.on('message', (data) => {
      for (const text of (data as Buffer).toString().split('\u001e').filter(Boolean)) {
        const m = JSON.parse(text) as Row;
        this.received.push(m);
        if (m.type === 1 && m.target === 'OnFlowCheck' && m.invocationId)
          this.send({ type: 3, invocationId: m.invocationId, result: null });
      }
      if (keepAliveMs !== undefined && Date.now() - this.sentAt >= keepAliveMs) this.send({ type: 6 });
    });
    ws.on('close', (code) => {
      this.closeCode = code;
    });
    ws.on('error', () => {});
  }

  static async open(url: string, keepAliveMs?: number): Promise<RawHub> {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new RawHub(ws, keepAliveMs);
  }

  send(m: object): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(m) + '\u001e');
    this.sentAt = Date.now();
  }
  pause(): void {
    this.ws.pause();
  }
  resume(): void {
    this.ws.resume();
  }
  terminate(): void {
    this.ws.terminate();
  }
  items(invocationId: string): Row[] {
    return this.received.filter((m) => m.type === 2 && m.invocationId === invocationId).map((m) => m.item);
  }
}

describe('a hub client too far behind', () => {
  it('gets every item sent before it fell behind, in order, then the Close message with the error, and is disconnected', async () => {
    const c = setup.client;
    const all = await ok<Row[]>(c, 'v1.PF5.PositionRequestByGroup', { params: { mask: '*' } });
    // Positions of trade server 2 cannot be deleted here.
    const tickets = all
      .filter((p) => !String(p.externalId ?? '').startsWith('TS2:'))
      .map((p) => p.position as number)
      .sort((a, b) => a - b);
    expect(tickets.length).toBeGreaterThan(8_000);

    const reading = await SseReader.open(`${c.stack.edgeUrl}${c.v2pf5}/Stream?positions`, c.token);
    const slow = await RawHub.open(
      `${c.stack.edgeUrl.replace('http', 'ws')}/hubs/pf5/v2?tradePlatform=${c.stack.platforms.pf5}&access_token=${c.token}`,
    );
    try {
      slow.send({ protocol: 'json', version: 1 });
      // Flow checks asked for: the hub judges the socket by its answers, within a second (a client that does not ask
      // is judged by its keep-alive, over 30 s: fanout.test.ts).
      slow.send({ type: 1, invocationId: 'flow', target: 'EnableFlowControl', arguments: [] });
      slow.send({ type: 4, invocationId: 'positions', target: 'StreamPositions', arguments: [] });
      // Messages are handled in order: once this is answered, the stream is open.
      slow.send({ type: 1, invocationId: 'ready', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
      await eventually(
        () => Promise.resolve(slow.received.some((m) => m.type === 3 && m.invocationId === 'ready')),
        10_000,
      );
      await eventually(() => Promise.resolve(reading.of('status').length >= 1), 10_000);
      expect(await streamStats()).toMatchObject({ sse: 1, hubs: 1, slowHubs: 0 });
      slow.pause();

      // Deletes in batches, each seen whole by the reading client before the next, so that client is never far
      // behind; the paused one, whose flow check goes unanswered, turns slow, and then falls past the limit.
      const deletedOf = (sse: SseReader) => sse.of('positions').map((e) => JSON.parse(e.data) as Row);
      let deleted = 0;
      let deletedWhenSlow = -1;
      const deleteBatch = async () => {
        const batch = tickets.slice(deleted, deleted + 250);
        expect(await ok(c, 'v1.PF5.PositionDeleteBatch', { body: batch })).toBe(true);
        deleted += batch.length;
        await eventually(
          () =>
            Promise.resolve(
              reading.events.at(-1)?.event === 'positions' &&
                JSON.parse(reading.events.at(-1)!.data).position === batch.at(-1),
            ),
          10_000,
          10,
        );
      };
      while (deleted < tickets.length - 250 && deletedWhenSlow < 0) {
        await deleteBatch();
        // A flow check goes out with what is sent (at most one a second); unanswered for a second, the socket is slow.
        if (await eventually(async () => (await streamStats()).slowHubs === 1, 2_500, 100)) deletedWhenSlow = deleted;
      }
      expect(deletedWhenSlow).toBeGreaterThan(0);
      while (deleted < deletedWhenSlow + LIMIT + 500) await deleteBatch();

      slow.resume();
      await eventually(() => Promise.resolve(slow.closeCode !== null), 15_000);
      expect(slow.closeCode).toBe(1008);
      expect(slow.received[0]).toEqual({});
      const closing = slow.received.at(-1)!;
      expect(closing).toMatchObject({ type: 7, error: `more than ${LIMIT} events behind: reconnect and resync` });
      expect(slow.received.filter((m) => m.type === 7)).toHaveLength(1);

      // What it got is exactly what the reading client got first, each deletion once, in order; none of what came
      // after it fell behind.
      const got = slow.items('positions');
      const kept = deletedOf(reading);
      expect(got.length).toBeGreaterThanOrEqual(250);
      expect(got.length).toBeLessThanOrEqual(deletedWhenSlow);
      expect(got).toEqual(kept.slice(0, got.length));
      expect(got).toEqual(tickets.slice(0, got.length).map((position) => ({ kind: 'Deleted', position })));

      // The reading client goes on: every delete so far, and a later one.
      expect(kept).toEqual(tickets.slice(0, deleted).map((position) => ({ kind: 'Deleted', position })));
      const next = tickets[deleted];
      expect(await ok(c, 'v1.PF5.PositionDeleteBatch', { body: [next] })).toBe(true);
      await eventually(() => Promise.resolve(deletedOf(reading).some((p) => p.position === next)), 10_000);
      expect(reading.ended).toBe(false);
      // The closed socket is gone from the object, its flow too, though events went on after it closed.
      await eventually(async () => {
        const s = await streamStats();
        return s.hubs === 0 && s.flows === 0;
      }, 10_000);
      expect(await streamStats()).toMatchObject({ sse: 1, hubs: 0, flows: 0, slowHubs: 0 });
    } finally {
      slow.terminate();
      await reading.close();
    }
  }, 120_000);

  it('judges a client without flow checks by its keep-alive: never sent a check, not held while it reads and pings, held once it stops, then closed past the limit', async () => {
    const c = setup.client;
    const all = await ok<Row[]>(c, 'v1.PF5.PositionRequestByGroup', { params: { mask: '*' } });
    const tickets = all
      .filter((p) => !String(p.externalId ?? '').startsWith('TS2:'))
      .map((p) => p.position as number)
      .sort((a, b) => a - b);
    expect(tickets.length).toBeGreaterThan(LIMIT + 3_000);

    const reading = await SseReader.open(`${c.stack.edgeUrl}${c.v2pf5}/Stream?positions`, c.token);
    // Pings at most every 0.3 s as it reads: well within the quiet time.
    const hub = await RawHub.open(
      `${c.stack.edgeUrl.replace('http', 'ws')}/hubs/pf5/v2?tradePlatform=${c.stack.platforms.pf5}&access_token=${c.token}`,
      300,
    );
    try {
      hub.send({ protocol: 'json', version: 1 });
      hub.send({ type: 4, invocationId: 'positions', target: 'StreamPositions', arguments: [] });
      hub.send({ type: 1, invocationId: 'ready', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
      await eventually(
        () => Promise.resolve(hub.received.some((m) => m.type === 3 && m.invocationId === 'ready')),
        10_000,
      );
      await eventually(() => Promise.resolve(reading.of('status').length >= 1), 10_000);

      const deletedOf = (sse: SseReader) => sse.of('positions').map((e) => JSON.parse(e.data) as Row);
      let deleted = 0;
      const deleteBatch = async (size: number) => {
        const batch = tickets.slice(deleted, deleted + size);
        expect(await ok(c, 'v1.PF5.PositionDeleteBatch', { body: batch })).toBe(true);
        deleted += batch.length;
        await eventually(
          () =>
            Promise.resolve(
              reading.events.at(-1)?.event === 'positions' &&
                JSON.parse(reading.events.at(-1)!.data).position === batch.at(-1),
            ),
          10_000,
          10,
        );
      };
      // Reading and pinging, over twice the quiet time: every item as it comes, and never found slow.
      const readingUntil = Date.now() + 2 * QUIET_SECONDS * 1000;
      while (Date.now() < readingUntil) {
        await deleteBatch(50);
        expect(await eventually(() => Promise.resolve(hub.items('positions').length === deleted), 10_000, 10)).toBe(
          true,
        );
        expect((await streamStats()).slowHubs).toBe(0);
        // Paced: reading over twice the quiet time is the behaviour, not something to wait for. A pause of an eighth
        // of the quiet time: the client, pinging as it receives, is heard well within it however long a batch takes.
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const readWhileReading = deleted;

      // It stops reading (and so pinging): held once the quiet time has passed with data sent, then over the limit.
      hub.pause();
      let deletedWhenSlow = -1;
      while (deletedWhenSlow < 0 && deleted < tickets.length - LIMIT - 1_000) {
        await deleteBatch(100);
        if (await eventually(async () => (await streamStats()).slowHubs === 1, 1_000, 100)) deletedWhenSlow = deleted;
      }
      expect(deletedWhenSlow).toBeGreaterThan(readWhileReading);
      while (deleted < deletedWhenSlow + LIMIT + 500) await deleteBatch(250);

      hub.resume();
      await eventually(() => Promise.resolve(hub.closeCode !== null), 15_000);
      expect(hub.closeCode).toBe(1008);
      expect(hub.received[0]).toEqual({});
      expect(hub.received.at(-1)).toMatchObject({
        type: 7,
        error: `more than ${LIMIT} events behind: reconnect and resync`,
      });
      // Never sent an invocation it did not ask for: only the status, no flow check.
      expect(new Set(hub.received.filter((m) => m.type === 1).map((m) => m.target))).toEqual(
        new Set(['OnConnectionStatus']),
      );
      // Every item up to where it was held, each once and in order, as the reading client got them.
      const got = hub.items('positions');
      expect(got.length).toBeGreaterThanOrEqual(readWhileReading);
      expect(got.length).toBeLessThanOrEqual(deletedWhenSlow);
      expect(got).toEqual(deletedOf(reading).slice(0, got.length));
      expect(got).toEqual(tickets.slice(0, got.length).map((position) => ({ kind: 'Deleted', position })));
      await eventually(async () => (await streamStats()).hubs === 0, 10_000);
    } finally {
      hub.terminate();
      await reading.close();
    }
  }, 120_000);
});
