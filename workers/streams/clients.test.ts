/**
 * The stream object's two kinds of client as its pass, re-check and keep-alive see them (no workerd): an SSE client
 * still taking a write is left for later and, found so twice running, holds what it lacks; clients of one interest
 * share a turn's chunk; a hub socket is owed nothing before its handshake, is told why it ends in a Close message and
 * is let go; each kind pings in its own form.
 */
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../shared/streams.js';
import { Encoded, SseSink, type Interest } from './fanout.js';
import { HubClient, SharedChunks, SseClient, type HubState } from './clients.js';
import type { StreamCaller } from './standing.js';

let seq = 0;
const enc = (event: StreamEvent) => new Encoded(++seq, `00abcdef-${seq}`, event);
const tick = (symbol: string, bid: number) =>
  enc({ topic: 'ticks', data: { symbol, bid, ask: bid + 1, lastTime: new Date(0).toISOString() } });
const trade = (order: number) => enc({ topic: 'trades', data: { kind: 'Added', order } });
const decoder = new TextDecoder();
const caller: StreamCaller = { clientId: 'c1', organizationId: 'o1', expiresAt: 1 };

/** An SSE client whose writes complete only when the test says so. */
function sse(interest: Interest, holdAfter = 1000) {
  const written: string[] = [];
  const chunks: Uint8Array[] = [];
  const waiting: Array<() => void> = [];
  const sink = new SseSink(
    interest,
    (chunk) => {
      chunks.push(chunk);
      written.push(decoder.decode(chunk));
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    () => {},
    () => {},
    { set: () => 0 },
  );
  const complete = async () => {
    waiting.shift()?.();
    await Promise.resolve();
    await Promise.resolve();
  };
  return { client: new SseClient(sink, caller, holdAfter), written, chunks, complete };
}

/** A hub socket that records what it is sent and how it is closed. */
function hubSocket(state: Partial<HubState> = {}, objectSeq = 0) {
  const sent: unknown[] = [];
  const closes: Array<[number, string]> = [];
  const forgotten: unknown[] = [];
  const ws = {
    send: (text: string) => {
      for (const r of text.split('\u001e').filter(Boolean)) sent.push(JSON.parse(r));
    },
    close: (code: number, reason: string) => {
      closes.push([code, reason]);
    },
    serializeAttachment: () => {},
  } as unknown as WebSocket;
  const full: HubState = { family: 'PF4', handshaken: true, ticks: ['EURUSD'], streams: {}, caller, ...state };
  const client = new HubClient(ws, full, {
    seq: () => objectSeq,
    sent: () => {},
    forget: (socket) => forgotten.push(socket),
  });
  return { client, ws, sent, closes, forgotten };
}

describe('SSE clients', () => {
  const interest: Interest = { topics: new Set(['ticks', 'trades']), symbols: null };

  it('is left for a later pass while taking a write, and found so twice running holds what it lacks and owes nothing more', async () => {
    const { client, written, complete } = sse(interest);
    client.deliver([trade(1)], new SharedChunks());
    const range = [tick('EURUSD', 1), trade(2)];
    const last = range[1].seq;
    expect(client.stillWriting(range, last)).toBe(true);
    expect(client.sentSeq).toBe(0);
    expect(client.stillWriting(range, last)).toBe(true);
    expect(client.sentSeq).toBe(last);
    expect(written).toHaveLength(1);
    await complete();
    expect(written[1]).toContain('"order":2');
    await complete();
    expect(client.stillWriting([trade(3)], last + 1)).toBe(false);
  });

  it('holds at once what it lacks when found writing more than holdAfter events behind', () => {
    const { client } = sse(interest, 1);
    client.deliver([trade(1)], new SharedChunks());
    const range = [trade(2), trade(3)];
    expect(client.stillWriting(range, range[1].seq)).toBe(true);
    expect(client.sentSeq).toBe(range[1].seq);
  });

  it('shares one chunk between clients of one interest lacking the same events in a turn', () => {
    const a = sse(interest);
    const b = sse(interest);
    const other = sse({ topics: new Set(['trades']), symbols: null });
    const chunks = new SharedChunks();
    const range = [tick('EURUSD', 1), trade(1)];
    for (const c of [a, b, other]) c.client.deliver(range, chunks);
    expect(a.chunks[0]).toBe(b.chunks[0]);
    expect(other.written[0]).not.toContain('EURUSD');
  });

  it('ends with a last closed event saying why, and pings with a comment', () => {
    const { client, written } = sse(interest);
    client.ping();
    expect(written).toEqual([': ping\n\n']);
    client.end({ code: 'ClientRevoked', message: 'the client is disabled or no longer registered', reconnect: false });
    expect(client.closed).toBe(true);
    expect(written.at(-1)).toBe(
      'event: closed\ndata: {"code":"ClientRevoked","message":"the client is disabled or no longer registered"}\n\n',
    );
  });
});

describe('hub clients', () => {
  it("is owed what comes after the object's newest event when its flow is made, and nothing before its handshake", () => {
    const { client, sent } = hubSocket({ handshaken: false }, 41);
    expect(client.flowing).toBe(false);
    expect(client.sentSeq).toBe(41);
    expect(client.flowing).toBe(true);
    expect(client.ready).toBe(false);
    client.ping();
    expect(sent).toEqual([]);
  });

  it('is never found writing, and is given what it lacks through its flow', () => {
    const { client, sent } = hubSocket();
    const range = [tick('EURUSD', 1)];
    expect(client.stillWriting()).toBe(false);
    client.deliver(range);
    expect(sent[0]).toMatchObject({ type: 1, target: 'OnTick', arguments: [{ symbol: 'EURUSD', bid: 1 }] });
  });

  it('ends with a Close message saying why, closes the socket with the code and is let go', () => {
    const { client, ws, sent, closes, forgotten } = hubSocket();
    client.end({
      code: 'TokenExpired',
      message: 'the access token expired: reconnect with a new token',
      reconnect: true,
    });
    expect(sent).toEqual([
      { type: 7, error: 'TokenExpired: the access token expired: reconnect with a new token', allowReconnect: true },
    ]);
    expect(closes).toEqual([[1008, 'TokenExpired']]);
    expect(forgotten).toEqual([ws]);
    expect(client.closed).toBe(true);
  });

  it('is told it fell behind and closed, and pings once handshaken', () => {
    const { client, sent, closes } = hubSocket();
    client.ping();
    expect(sent).toEqual([{ type: 6 }]);
    client.behind();
    expect(sent.at(-1)).toEqual({ type: 7, error: 'too far behind: reconnect and resync', allowReconnect: true });
    expect(closes).toEqual([[1008, 'too far behind']]);
    expect(client.closed).toBe(true);
  });
});
