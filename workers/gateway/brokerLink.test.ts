/**
 * The platform gateway's broker link on fake timers, with `fetch` and the upgraded WebSocket stood in for: the 5 s
 * bound applies to the handshake only and never to the link it opened, and a call's own deadline answers a time-out.
 * (The same link runs in workerd against a scripted broker in test/edge/gateway.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrokerLink } from './brokerLink.js';

type Listener = (event: { data?: string }) => void;

/** The workerd WebSocket surface the link uses; `sent` records frames, `answer` plays the broker. */
class FakeSocket {
  readonly sent: Array<{ id: number; op: string }> = [];
  readonly listeners = new Map<string, Listener[]>();
  closed = false;
  accept(): void {}
  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  send(text: string): void {
    if (this.closed) throw new Error('socket closed');
    this.sent.push(JSON.parse(text));
  }
  close(): void {
    this.emit('close', {});
  }
  emit(type: string, event: { data?: string }): void {
    if (type === 'close') this.closed = true;
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
  answer(id: number, data: unknown): void {
    this.emit('message', { data: JSON.stringify({ id, ok: true, data }) });
  }
}

let sockets: FakeSocket[];
let signals: AbortSignal[];
/** When set, the broker never answers the upgrade (a black-holed address). */
let blackHole: boolean;

beforeEach(() => {
  vi.useFakeTimers();
  sockets = [];
  signals = [];
  blackHole = false;
  vi.stubGlobal('fetch', (_url: string, init: { signal: AbortSignal }) => {
    signals.push(init.signal);
    if (blackHole) {
      return new Promise((_resolve, reject) =>
        init.signal.addEventListener('abort', () => reject(init.signal.reason as Error)),
      );
    }
    // A socket bound to an aborted signal dies with it, as an upgraded fetch's does in workerd.
    const socket = new FakeSocket();
    init.signal.addEventListener('abort', () => socket.close());
    sockets.push(socket);
    return Promise.resolve({ status: 101, webSocket: socket });
  });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** Lets the link's promise chain run (the fake fetch answers at once) without moving the fake clock. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

const frame = (op: string, timeoutMs = 10_000) => ({ platform: 'p', op, args: {}, timeoutMs, traceId: 't' });

describe('broker link', () => {
  it('keeps the link it opened past the handshake bound, and sends later calls over it', async () => {
    const link = new BrokerLink('http://127.0.0.1:1', 'secret');
    const first = link.call(frame('ServerTime'), false);
    await settle();
    expect(sockets[0].sent).toHaveLength(1);
    sockets[0].answer(sockets[0].sent[0].id, 'first');
    expect(await first).toEqual({ ok: true, data: 'first' });

    await vi.advanceTimersByTimeAsync(60_000); // far past the 5 s handshake bound
    expect(signals[0].aborted).toBe(false);
    expect(sockets[0].closed).toBe(false);
    const later = link.call(frame('ServerTime'), false);
    await settle();
    expect(sockets[0].sent).toHaveLength(2);
    sockets[0].answer(sockets[0].sent[1].id, 'later');
    expect(await later).toEqual({ ok: true, data: 'later' });
    expect(sockets).toHaveLength(1);
  });

  it('gives up on a broker that does not answer the upgrade within 5 s, with nothing sent', async () => {
    blackHole = true;
    const link = new BrokerLink('http://127.0.0.1:1', 'secret');
    const change = link.call(frame('PF4.UserRecordNew', 60_000), true);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(signals[0].aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    // Not sent, so even a change has a known outcome.
    expect(await change).toEqual({
      ok: false,
      error: { code: 'NoConnect', managerCode: null, message: 'broker unreachable: no answer within 5000 ms' },
      notSent: true,
    });
  });

  it('answers a time-out past the call budget and its grace, unknown for a change', async () => {
    const link = new BrokerLink('http://127.0.0.1:1', 'secret');
    const change = link.call(frame('PF4.UserRecordNew', 2_000), true);
    await settle();
    expect(sockets[0].sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_999);
    expect(link.pendingCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await change).toEqual({
      ok: false,
      error: { code: 'NoConnect', managerCode: null, message: 'no answer from the trading platform within 2 s' },
      timedOut: true,
      outcome: 'unknown',
    });
    expect(link.pendingCount).toBe(0);
  });

  it("keeps one timer, for the earliest deadline: a later call never pushes back an earlier one's time-out", async () => {
    const link = new BrokerLink('http://127.0.0.1:1', 'secret');
    const short = link.call(frame('ServerTime', 1_000), false);
    await settle();
    const long = link.call(frame('ServerTime', 10_000), false);
    await settle();
    await vi.advanceTimersByTimeAsync(2_000); // the short call's budget and grace
    expect(await short).toMatchObject({
      ok: false,
      timedOut: true,
      error: { message: 'no answer from the trading platform within 1 s' },
    });
    expect(link.pendingCount).toBe(1);
    sockets[0].answer(sockets[0].sent[1].id, 'long');
    expect(await long).toEqual({ ok: true, data: 'long' });
  });

  it('re-arms for the earliest deadline left after a time-out, whatever order the calls came in', async () => {
    const link = new BrokerLink('http://127.0.0.1:1', 'secret');
    const first = link.call(frame('ServerTime', 1_000), false);
    await settle();
    const middle = link.call(frame('ServerTime', 3_000), false);
    const last = link.call(frame('ServerTime', 10_000), false);
    await settle();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await first).toMatchObject({ ok: false, timedOut: true });
    expect(link.pendingCount).toBe(2);
    await vi.advanceTimersByTimeAsync(2_000); // the middle call's 3 s and grace
    expect(await middle).toMatchObject({
      ok: false,
      timedOut: true,
      error: { message: 'no answer from the trading platform within 3 s' },
    });
    expect(link.pendingCount).toBe(1);
    await vi.advanceTimersByTimeAsync(7_000);
    expect(await last).toMatchObject({
      ok: false,
      timedOut: true,
      error: { message: 'no answer from the trading platform within 10 s' },
    });
    expect(link.pendingCount).toBe(0);
  });

  it('takes a success frame as raw text only when it starts as one: a push that nests one is a push', async () => {
    const link = new BrokerLink('http://127.0.0.1:1', 'secret');
    const pushes: unknown[] = [];
    link.onPush = (f) => pushes.push(f);
    const call = link.call(frame('ServerTime'), false, { raw: true });
    await settle();
    const id = sockets[0].sent[0].id;
    const nested = `{"push":{"id":${id},"ok":true,"data":5}}`;
    sockets[0].emit('message', { data: nested });
    expect(pushes).toEqual([{ push: { id, ok: true, data: 5 } }]);
    expect(link.pendingCount).toBe(1);
    sockets[0].emit('message', { data: `{"id":${id},"ok":true,"data":{"a": 1}}` });
    expect(await call).toEqual({ ok: true, dataJson: '{"a": 1}' });
  });

  it('answers its pending calls when the link drops, with or without a close listener', async () => {
    const link = new BrokerLink('http://127.0.0.1:1', 'secret');
    const read = link.call(frame('ServerTime'), false);
    const change = link.call(frame('PF4.UserRecordNew'), true);
    await settle();
    sockets[0].emit('close', {});
    expect(await read).toEqual({
      ok: false,
      error: { code: 'NoConnect', managerCode: null, message: 'broker link lost' },
      linkLost: true,
    });
    expect(await change).toEqual({
      ok: false,
      error: { code: 'NoConnect', managerCode: null, message: 'broker link lost' },
      outcome: 'unknown',
      linkLost: true,
    });
    expect(link.connected).toBe(false);

    let closes = 0;
    link.onClose = () => {
      closes++;
    };
    const next = link.call(frame('ServerTime'), false);
    await settle();
    expect(link.connected).toBe(true);
    sockets[1].emit('error', {});
    expect(await next).toMatchObject({ ok: false, error: { message: 'broker link lost' } });
    // A second event of the same socket changes nothing.
    sockets[1].emit('close', {});
    expect(closes).toBe(1);
  });
});
