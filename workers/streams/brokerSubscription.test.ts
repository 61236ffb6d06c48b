/**
 * The stream object's broker subscription, against stand-in brokers (workerd's `fetch` upgrade stood in for): the
 * subscribe frame and the events it brings, batched or not; with a pair of brokers, a refusal, a lost socket, an
 * unreachable broker and a hung one moving the subscription to the next broker, which is told why; a drain keeping
 * the draining broker's events until the next broker subscribed, then a resync; a broker alone kept while draining.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FAILOVER_OP, PING_OP, SUBSCRIBE_OP } from '../../shared/frames.js';
import { topicsOf } from '../../shared/streams.js';
import type { RingEvent } from './fanout.js';
import { RESYNC_MESSAGE } from './eventRing.js';
import { BrokerSubscription } from './brokerSubscription.js';
import type { StreamConfig } from './streamRequest.js';

/** One stand-in broker socket: the frames it was sent, how it was closed, and its events to fire. */
interface BrokerSocket {
  url: string;
  frames: Array<{ id: number; op: string; platform: string; args: Record<string, unknown>; timeoutMs: number }>;
  closes: Array<[number, string]>;
  emit(type: 'message' | 'close' | 'error', data?: unknown): void;
}

/** Stands in for the brokers at `urls`: each upgrade makes a socket (or, for a URL in `down`, fails). */
function brokers(down: Set<string> = new Set()) {
  const sockets: BrokerSocket[] = [];
  const requests: Array<{ url: string; headers: Record<string, string> }> = [];
  vi.stubGlobal('fetch', (url: string, init: { headers: Record<string, string> }) => {
    requests.push({ url, headers: init.headers });
    const base = url.replace(/\/link$/, '');
    if (down.has(base)) return Promise.reject(new Error('connection refused'));
    const listeners: Record<string, Array<(ev: { data: unknown }) => void>> = {};
    const socket: BrokerSocket = {
      url: base,
      frames: [],
      closes: [],
      emit: (type, data) => {
        for (const l of listeners[type] ?? [])
          l({ data: typeof data === 'string' || data === undefined ? data : JSON.stringify(data) });
      },
    };
    sockets.push(socket);
    const ws = {
      accept: () => {},
      send: (text: string) => {
        socket.frames.push(JSON.parse(text));
      },
      close: (code: number, reason: string) => {
        socket.closes.push([code, reason]);
      },
      addEventListener: (type: string, fn: (ev: { data: unknown }) => void) => {
        (listeners[type] ??= []).push(fn);
      },
    };
    return Promise.resolve({ status: 101, webSocket: ws });
  });
  return { sockets, requests };
}

const config = (brokerUrls: string[]): StreamConfig => ({ platform: 'p1', family: 'PF4', brokerUrls, shard: 0 });
const trade = (order: number): RingEvent => ({ topic: 'trades', data: { kind: 'Added', order } });
/** Waits until `n` sockets were opened, the last with its subscription sent (its listeners are then in place). */
const opened = (sockets: BrokerSocket[], n: number, timeout = 1000) =>
  vi.waitFor(
    () => {
      expect(sockets).toHaveLength(n);
      expect(sockets[n - 1].frames.some((f) => f.op === SUBSCRIBE_OP)).toBe(true);
    },
    { timeout },
  );
const ops = (s: BrokerSocket) => s.frames.filter((f) => f.op !== PING_OP).map((f) => f.op);

function subscription(urls: string[]) {
  const published: RingEvent[] = [];
  let downs = 0;
  const cfg = config(urls);
  const sub = new BrokerSubscription({
    config: () => cfg,
    secret: () => 's3cret',
    hasClients: () => true,
    publish: (e) => {
      published.push(e);
    },
    disconnected: () => {
      downs++;
    },
  });
  sub.use(urls);
  return { sub, published, downs: () => downs };
}

let open: BrokerSubscription[] = [];
afterEach(() => {
  for (const s of open) s.stop('test over');
  open = [];
  vi.unstubAllGlobals();
});

function started(urls: string[], down?: Set<string>) {
  const b = brokers(down);
  const s = subscription(urls);
  open.push(s.sub);
  s.sub.ensure();
  return { ...b, ...s };
}

describe('the broker subscription', () => {
  it("subscribes to the platform's topics with the broker secret, and publishes the broker's events, batched or not", async () => {
    const { sub, sockets, requests, published } = started(['http://a:1']);
    await opened(sockets, 1);
    expect(requests).toEqual([
      { url: 'http://a:1/link', headers: { Upgrade: 'websocket', Authorization: 'Bearer s3cret' } },
    ]);
    expect(sockets[0].frames).toEqual([
      { id: 1, platform: 'p1', op: SUBSCRIBE_OP, args: { topics: topicsOf('PF4'), batch: true }, timeoutMs: 10_000 },
    ]);
    expect(sub.stats()).toEqual({ broker: 'http://a:1', subscribed: false, failovers: {} });
    sockets[0].emit('message', { id: 1, ok: true });
    expect(sub.stats().subscribed).toBe(true);
    sockets[0].emit('message', { sub: 1, events: [trade(1), trade(2)] });
    sockets[0].emit('message', { sub: 1, event: trade(3) });
    sockets[0].emit('message', { event: trade(4) });
    sockets[0].emit('message', 'not json');
    expect(published).toEqual([trade(1), trade(2), trade(3)]);
  });

  it('keeps a PF5 id beyond 2^53 − 1 exact', async () => {
    const { sockets, published } = started(['http://a:1']);
    await opened(sockets, 1);
    sockets[0].emit('message', '{"sub":1,"event":{"topic":"deals","data":{"deal":9007199254740993}}}');
    expect(published).toEqual([{ topic: 'deals', data: { deal: 9007199254740993n } }]);
  });

  it('moves to the next broker when the subscription is refused, and tells it why', async () => {
    const { sub, sockets, downs } = started(['http://a:1', 'http://b:2']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: false, error: { message: 'no such platform' } });
    await opened(sockets, 2);
    expect(sockets[0].closes).toEqual([[1000, 'unreachable']]);
    expect(downs()).toBe(1);
    expect(sockets[1].url).toBe('http://b:2');
    expect(sockets[1].frames.filter((f) => f.op !== PING_OP)).toEqual([
      { id: 2, platform: 'p1', op: FAILOVER_OP, args: { reason: 'unreachable', kind: 'stream' }, timeoutMs: 5000 },
      { id: 1, platform: 'p1', op: SUBSCRIBE_OP, args: { topics: topicsOf('PF4'), batch: true }, timeoutMs: 10_000 },
    ]);
    expect(sub.stats()).toEqual({ broker: 'http://b:2', subscribed: false, failovers: { unreachable: 1 } });
  });

  it('takes a refusal of a draining broker as draining', async () => {
    const { sub, sockets } = started(['http://a:1', 'http://b:2']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: false, notTaken: true, error: { message: 'draining' } });
    await opened(sockets, 2);
    expect(sub.stats().failovers).toEqual({ draining: 1 });
  });

  it('moves to the next broker when the first cannot be reached', async () => {
    const { sub, sockets, requests } = started(['http://a:1', 'http://b:2'], new Set(['http://a:1']));
    await opened(sockets, 1);
    expect(requests.map((r) => r.url)).toEqual(['http://a:1/link', 'http://b:2/link']);
    expect(ops(sockets[0])).toEqual([FAILOVER_OP, SUBSCRIBE_OP]);
    expect(sub.stats().failovers).toEqual({ unreachable: 1 });
  });

  it('after a lost subscription tells the clients the stream is down, and resyncs them once the next broker subscribed', async () => {
    const { sub, sockets, published, downs } = started(['http://a:1', 'http://b:2']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: true });
    sockets[0].emit('close');
    expect(downs()).toBe(1);
    await opened(sockets, 2);
    expect(sockets[1].frames[0].args).toEqual({ reason: 'lost', kind: 'stream' });
    // The lost socket's late frames are not the stream's.
    sockets[0].emit('message', { sub: 1, event: trade(1) });
    expect(published).toEqual([]);
    sockets[1].emit('message', { id: 1, ok: true });
    expect(downs()).toBe(2);
    expect(published).toEqual([{ topic: 'resync', data: { message: RESYNC_MESSAGE } }]);
    expect(sub.stats()).toMatchObject({ broker: 'http://b:2', subscribed: true, failovers: { lost: 1 } });
  });

  it("keeps a draining broker's events coming until the next broker subscribed, then closes it and resyncs", async () => {
    const { sockets, published, downs } = started(['http://a:1', 'http://b:2']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: true });
    sockets[0].emit('message', { drain: { broker: 'a' } });
    await opened(sockets, 2);
    expect(sockets[0].closes).toEqual([]);
    sockets[0].emit('message', { sub: 1, event: trade(1) });
    expect(published).toEqual([trade(1)]);
    expect(downs()).toBe(0);
    sockets[1].emit('message', { id: 1, ok: true });
    expect(sockets[0].closes).toEqual([[1000, 'moved to the next broker']]);
    expect(published).toEqual([trade(1), { topic: 'resync', data: { message: RESYNC_MESSAGE } }]);
    expect(downs()).toBe(1);
    sockets[0].emit('message', { sub: 1, event: trade(2) });
    expect(published).toHaveLength(2);
  });

  it('tells the clients the stream is down when a draining broker goes before the next one subscribed', async () => {
    const { sockets, downs } = started(['http://a:1', 'http://b:2']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: true });
    sockets[0].emit('message', { drain: { broker: 'a' } });
    await opened(sockets, 2);
    sockets[0].emit('close');
    expect(downs()).toBe(1);
  });

  it('keeps a broker alone while it drains, and reconnects to it once it is lost', async () => {
    const { sub, sockets } = started(['http://a:1']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: true });
    sockets[0].emit('message', { drain: { broker: 'a' } });
    expect(sub.stats()).toMatchObject({ broker: 'http://a:1', subscribed: true });
    sockets[0].emit('close');
    await opened(sockets, 2);
    expect(ops(sockets[1])).toEqual([SUBSCRIBE_OP]);
    expect(sub.stats().failovers).toEqual({});
  });

  it('pings the broker in use of a pair, drains on a report that it drains, and leaves it when a ping goes unanswered', async () => {
    const { sub, sockets } = started(['http://a:1', 'http://b:2']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: true });
    await vi.waitFor(() => expect(sockets[0].frames.some((f) => f.op === PING_OP)).toBe(true));
    const ping = sockets[0].frames.find((f) => f.op === PING_OP)!;
    expect(ping).toMatchObject({ platform: 'p1', args: {}, timeoutMs: 1200 });
    sockets[0].emit('message', { id: ping.id, ok: true, data: { draining: true } });
    await opened(sockets, 2);
    expect(sub.stats().failovers).toEqual({ draining: 1 });
    sockets[1].emit('message', { id: 1, ok: true });
    // b answers no ping: it is hung, and the subscription goes back to a.
    await opened(sockets, 3, 4000);
    expect(sockets[1].closes).toEqual([[1000, 'hung']]);
    expect(sockets[2].url).toBe('http://a:1');
    expect(sub.stats().failovers).toEqual({ draining: 1, hung: 1 });
  });

  it('once stopped answers whether a subscription was left since the last one, and starts afresh on a new list', async () => {
    const { sub, sockets, downs } = started(['http://a:1']);
    await opened(sockets, 1);
    sockets[0].emit('message', { id: 1, ok: true });
    expect(sub.stop('no clients')).toBe(true);
    expect(sockets[0].closes).toEqual([[1000, 'no clients']]);
    expect(downs()).toBe(1);
    expect(sub.stop('no clients')).toBe(false);
    sub.ensure();
    await opened(sockets, 2);
    sub.use(['http://c:3']);
    expect(sockets[1].closes).toEqual([[1000, 'platform moved']]);
    sub.use(['http://c:3']);
    expect(sockets[1].closes).toHaveLength(1);
  });
});
