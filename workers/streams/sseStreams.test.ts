/**
 * The stream object's SSE responses: a new stream's headers and opening (retry, then its status, or what a
 * reconnect missed), the writes counted, and a stream let go once it ends or its response is gone.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Interest, RingEvent } from './fanout.js';
import { SharedChunks } from './clients.js';
import { EventRing } from './eventRing.js';
import { SseStreams } from './sseStreams.js';

const trade = (order: number): RingEvent => ({ topic: 'trades', data: { kind: 'Added', order } });
const interest: Interest = { topics: new Set(['trades']), symbols: null };
const caller = { clientId: 'c1', organizationId: 'o1', expiresAt: Number.MAX_SAFE_INTEGER };
// A queueing stream in place of workerd's IdentityTransformStream: the text written is the same.
const pipe = () => new TransformStream<Uint8Array, Uint8Array>();

/** Reads the response's body until it holds `until`. */
async function readUntil(res: Response, until: string): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(until)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
  }
  reader.releaseLock();
  return text;
}

describe('the SSE streams', () => {
  it('opens a stream with retry and the status, named by the newest event, and owes it what comes after', async () => {
    const ring = new EventRing();
    ring.publish(trade(1));
    let sent = 0;
    const streams = new SseStreams(
      ring,
      () => {
        sent++;
      },
      pipe,
    );
    const res = streams.start(interest, caller, null);
    expect(res.status).toBe(200);
    expect(Object.fromEntries(res.headers)).toStrictEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    expect(await readUntil(res, 'event: status')).toBe(
      `retry: 1000\n\nid: ${ring.epoch}-1\nevent: status\ndata: {"connected":false}\n\n`,
    );
    expect(streams.size).toBe(1);
    const [client] = streams.clients();
    expect(client.sentSeq).toBe(1);
    expect(client.caller).toBe(caller);
    expect(sent).toBeGreaterThanOrEqual(1);
  });

  it('opens a reconnect with what it missed instead of the status', async () => {
    const ring = new EventRing();
    for (let i = 1; i <= 3; i++) ring.publish(trade(i));
    const streams = new SseStreams(ring, () => {}, pipe);
    const res = streams.start(interest, caller, `${ring.epoch}-1`);
    const text = await readUntil(res, '"order":3');
    expect(text).toBe(
      `retry: 1000\n\nid: ${ring.epoch}-2\nevent: trades\ndata: {"kind":"Added","order":2}\n\nid: ${ring.epoch}-3\nevent: trades\ndata: {"kind":"Added","order":3}\n\n`,
    );
    expect(streams.clients()[0].sentSeq).toBe(3);
  });

  it('counts every write, and lets a stream go once it ends', async () => {
    const ring = new EventRing();
    let sent = 0;
    const streams = new SseStreams(
      ring,
      () => {
        sent++;
      },
      pipe,
    );
    const res = streams.start(interest, caller, null);
    await readUntil(res, 'event: status');
    await vi.waitFor(() => expect(streams.clients()[0].sink.idle).toBe(true));
    const before = sent;
    ring.publish(trade(1));
    streams.clients()[0].deliver(ring.after(0)!, new SharedChunks());
    expect(await readUntil(res, '"order":1')).toContain('event: trades');
    expect(sent).toBe(before + 1);
    streams.clients()[0].end({ code: 'ClientRevoked', message: 'gone', reconnect: false });
    expect(streams.size).toBe(0);
    expect(await readUntil(res, 'event: closed')).toBe(
      'event: closed\ndata: {"code":"ClientRevoked","message":"gone"}\n\n',
    );
  });

  it('lets a stream go once its response is gone', async () => {
    const streams = new SseStreams(new EventRing(), () => {}, pipe);
    const res = streams.start(interest, caller, null);
    await res.body!.cancel();
    await vi.waitFor(() => expect(streams.size).toBe(0));
  });
});
