/**
 * A stream client that falls too far behind is told and disconnected, never silently skipped (simulator, broker,
 * edge in workerd, with the limit lowered through the edge's STREAM_MAX_BEHIND binding). A SignalR client on the PF5
 * hub that asked for flow checks (EnableFlowControl) stops reading its socket (so it answers no OnFlowCheck either) while positions are deleted through
 * v1.PF5.PositionDeleteBatch; the stream object finds it slow, holds what comes for it, and past the limit sends it a
 * Close message with the error and closes the socket. When the client reads again it gets every StreamPositions item
 * sent before it fell behind, in order and without a gap (the same as a client that kept reading), then the Close
 * message, then the end of the connection. A Server-Sent Events client that kept reading is not affected.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SseReader } from '../support/sse.js';
import { ok } from './v1/api.js';
import { eventually, stackForFile } from './support.js';

type Row = Record<string, any>;

const LIMIT = 1_000;
const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
const managers = [{ login: 1000, password: PASSWORD }];
const setup = stackForFile({
  simConfig: { servers: [
    { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, accounts: 20, trades: 10, managers },
    // Many positions to delete, and a quiet feed: the only events are the test's.
    { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, accounts: 1_000, trades: 12_000, orders: 0, managers },
  ] },
  edgeVars: { STREAM_MAX_BEHIND: String(LIMIT) },
});

/** The PF5 platform's stream object's figures, read through Miniflare (one stub for the file: each proxy costs). */
type Stats = { sse: number; hubs: number; flows: number; slowHubs: number };
let stub: { stats(): Promise<Stats> } | undefined;
async function streamStats(): Promise<Stats> {
  const c = setup.client;
  if (!stub) {
    const ns = await c.stack.edge.miniflare.getDurableObjectNamespace('STREAMS');
    stub = ns.get(ns.idFromName(c.stack.platforms.pf5)) as unknown as typeof stub;
  }
  return JSON.parse(JSON.stringify(await stub!.stats()));
}

/** A raw hub client (JSON protocol) that answers flow checks (once it asked for them) while it reads, and can stop reading its socket. */
class RawHub {
  readonly received: Row[] = [];
  closeCode: number | null = null;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      for (const text of data.toString().split('\u001e').filter(Boolean)) {
        const m = JSON.parse(text) as Row;
        this.received.push(m);
        if (m.type === 1 && m.target === 'OnFlowCheck' && m.invocationId) this.send({ type: 3, invocationId: m.invocationId, result: null });
      }
    });
    ws.on('close', (code) => { this.closeCode = code; });
    ws.on('error', () => {});
  }

  static async open(url: string): Promise<RawHub> {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    return new RawHub(ws);
  }

  send(m: object): void { if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(m) + '\u001e'); }
  pause(): void { this.ws.pause(); }
  resume(): void { this.ws.resume(); }
  terminate(): void { this.ws.terminate(); }
  items(invocationId: string): Row[] { return this.received.filter((m) => m.type === 2 && m.invocationId === invocationId).map((m) => m.item); }
}

describe('a hub client too far behind', () => {
  it('gets every item sent before it fell behind, in order, then the Close message with the error, and is disconnected', async () => {
    const c = setup.client;
    const all = await ok<Row[]>(c, 'v1.PF5.PositionRequestByGroup', { params: { mask: '*' } });
    // Positions of trade server 2 cannot be deleted here.
    const tickets = all.filter((p) => !String(p.externalId ?? '').startsWith('TS2:')).map((p) => p.position as number).sort((a, b) => a - b);
    expect(tickets.length).toBeGreaterThan(8_000);

    const reading = await SseReader.open(`${c.stack.edgeUrl}${c.v2pf5}/Stream?positions`, c.token);
    const slow = await RawHub.open(`${c.stack.edgeUrl.replace('http', 'ws')}/hubs/pf5/v2?tradePlatform=${c.stack.platforms.pf5}&access_token=${c.token}`);
    try {
      slow.send({ protocol: 'json', version: 1 });
      // Flow checks asked for: the hub judges the socket by its answers, within a second (a client that does not ask
      // is judged by its keep-alive, over 30 s: fanout.test.ts).
      slow.send({ type: 1, invocationId: 'flow', target: 'EnableFlowControl', arguments: [] });
      slow.send({ type: 4, invocationId: 'positions', target: 'StreamPositions', arguments: [] });
      // Messages are handled in order: once this is answered, the stream is open.
      slow.send({ type: 1, invocationId: 'ready', target: 'SubscribeToTicks', arguments: ['EURUSD'] });
      await eventually(async () => slow.received.some((m) => m.type === 3 && m.invocationId === 'ready'), 10_000);
      await eventually(async () => reading.of('status').length >= 1, 10_000);
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
        await eventually(async () => reading.events.at(-1)?.event === 'positions' && JSON.parse(reading.events.at(-1)!.data).position === batch.at(-1), 10_000, 10);
      };
      while (deleted < tickets.length - 250 && deletedWhenSlow < 0) {
        await deleteBatch();
        // A flow check goes out with what is sent (at most one a second); unanswered for a second, the socket is slow.
        if (await eventually(async () => (await streamStats()).slowHubs === 1, 2_500, 100)) deletedWhenSlow = deleted;
      }
      expect(deletedWhenSlow).toBeGreaterThan(0);
      while (deleted < deletedWhenSlow + LIMIT + 500) await deleteBatch();

      slow.resume();
      await eventually(async () => slow.closeCode !== null, 15_000);
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
      await eventually(async () => deletedOf(reading).some((p) => p.position === next), 10_000);
      expect(reading.ended).toBe(false);
      // The closed socket is gone from the object, its flow too, though events went on after it closed.
      await eventually(async () => { const s = await streamStats(); return s.hubs === 0 && s.flows === 0; }, 10_000);
      expect(await streamStats()).toMatchObject({ sse: 1, hubs: 0, flows: 0, slowHubs: 0 });
    } finally {
      slow.terminate();
      await reading.close();
    }
  }, 120_000);
});
