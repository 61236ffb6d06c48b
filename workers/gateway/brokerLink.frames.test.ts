/**
 * The platform gateway's broker link (workers/gateway/brokerLink.ts) on fake timers with `fetch` and the upgraded
 * WebSocket stood in for, beyond workers/gateway/brokerLink.test.ts: the upgrade request, call frames and their ids,
 * answers taken as raw JSON text or parsed, late and pushed frames, the time-out timer, and how a closed, lost or
 * refused link answers every call.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrokerLink, LINK_GRACE_MS } from './brokerLink.js';

type Listener = (event: { data?: string | ArrayBuffer }) => void;

/** The workerd WebSocket surface the link uses: `sent` holds the frames as text, `emit` plays the broker. */
class FakeSocket {
  readonly sent: string[] = [];
  readonly listeners = new Map<string, Listener[]>();
  accepted = 0;
  closedWith: [number, string] | undefined;
  sendThrows = false;
  closeThrows = false;
  accept(): void {
    this.accepted++;
  }
  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  send(text: string): void {
    if (this.sendThrows) throw new Error('socket closed');
    this.sent.push(text);
  }
  close(code: number, reason: string): void {
    if (this.closeThrows) throw new Error('already closed');
    this.closedWith = [code, reason];
  }
  emit(type: string, event: { data?: string | ArrayBuffer } = {}): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
  message(data: string | ArrayBuffer): void {
    this.emit('message', { data });
  }
  ids(): number[] {
    return this.sent.map((text) => JSON.parse(text).id);
  }
}

interface Upgrade {
  url: string;
  headers: Record<string, string>;
  signal: AbortSignal;
}
let sockets: FakeSocket[];
let upgrades: Upgrade[];
/** How the next upgrades answer: a socket (default), an HTTP status without one, or a thrown error. */
let answers: Array<'socket' | number | Error>;

beforeEach(() => {
  vi.useFakeTimers();
  sockets = [];
  upgrades = [];
  answers = [];
  vi.stubGlobal('fetch', (url: string, init: { headers: Record<string, string>; signal: AbortSignal }) => {
    upgrades.push({ url, headers: init.headers, signal: init.signal });
    const answer = answers.shift() ?? 'socket';
    if (answer instanceof Error) return Promise.reject(answer);
    if (typeof answer === 'number') return Promise.resolve({ status: answer, webSocket: null });
    const socket = new FakeSocket();
    sockets.push(socket);
    return Promise.resolve({ status: 101, webSocket: socket });
  });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** Lets the link's promise chain run without moving the fake clock. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

const frame = (op: string, timeoutMs = 10_000) => ({
  platform: 'p1',
  op,
  args: { login: 7 },
  timeoutMs,
  traceId: 't1',
});
const noConnect = (message: string) => ({ ok: false, error: { code: 'NoConnect', managerCode: null, message } });

describe('opening the link', () => {
  it('upgrades <brokerUrl>/link with the shared secret, accepts the socket and tells onOpen before any call is sent', async () => {
    const link = new BrokerLink('http://127.0.0.1:9/base/', 's3cret');
    const opened: string[] = [];
    link.onOpen = (send) => {
      opened.push(`sent before: ${sockets[0].sent.length}`);
      send('{"hello":1}');
    };
    expect(link.brokerUrl).toBe('http://127.0.0.1:9/base/');
    expect(link.connected).toBe(false);
    const call = link.call(frame('ServerTime'), false);
    await settle();
    expect(upgrades.map((u) => [u.url, u.headers])).toEqual([
      ['http://127.0.0.1:9/link', { Upgrade: 'websocket', Authorization: 'Bearer s3cret' }],
    ]);
    expect(sockets[0].accepted).toBe(1);
    expect(opened).toEqual(['sent before: 0']);
    expect(sockets[0].sent).toEqual([
      '{"hello":1}',
      '{"platform":"p1","op":"ServerTime","args":{"login":7},"timeoutMs":10000,"traceId":"t1","id":1}',
    ]);
    expect(link.connected).toBe(true);
    sockets[0].message('{"id":1,"ok":true,"data":5}');
    expect(await call).toStrictEqual({ ok: true, data: 5 });
  });

  it('shares one upgrade between concurrent calls and numbers their frames 1, 2, 3', async () => {
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    const calls = [link.call(frame('A'), false), link.call(frame('B'), false)];
    await settle();
    calls.push(link.call(frame('C'), false));
    await settle();
    expect(upgrades).toHaveLength(1);
    expect(sockets[0].ids()).toEqual([1, 2, 3]);
    expect(link.pendingCount).toBe(3);
    for (const id of [3, 1, 2]) sockets[0].message(`{"id":${id},"ok":true,"data":${id * 10}}`);
    expect(await Promise.all(calls)).toStrictEqual([
      { ok: true, data: 10 },
      { ok: true, data: 20 },
      { ok: true, data: 30 },
    ]);
    expect(link.pendingCount).toBe(0);
  });

  it('answers a refused upgrade as unreachable, leaves no timer, and tries again on the next call', async () => {
    answers = [403, new Error('connection refused')];
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    expect(await link.call(frame('PF4.UserRecordNew'), true)).toStrictEqual({
      ...noConnect('broker unreachable: link refused with HTTP 403'),
      notSent: true,
    });
    expect(vi.getTimerCount()).toBe(0);
    expect(await link.call(frame('PF4.UserRecordNew'), true)).toStrictEqual({
      ...noConnect('broker unreachable: connection refused'),
      notSent: true,
    });
    expect(vi.getTimerCount()).toBe(0);
    const third = link.call(frame('ServerTime'), false);
    await settle();
    expect(upgrades).toHaveLength(3);
    sockets[0].message('{"id":1,"ok":true,"data":"t"}');
    expect(await third).toStrictEqual({ ok: true, data: 't' });
    expect(link.connected).toBe(true);
  });

  it('answers a call whose frame cannot be sent as a lost link, at once', async () => {
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    const first = link.call(frame('A'), false);
    await settle();
    sockets[0].message('{"id":1,"ok":true,"data":1}');
    await first;
    sockets[0].sendThrows = true;
    expect(await link.call(frame('B'), true)).toStrictEqual({ ...noConnect('broker link lost'), linkLost: true });
    expect(link.pendingCount).toBe(0);
  });
});

describe('answers', () => {
  async function openLink(): Promise<{ link: BrokerLink; socket: FakeSocket }> {
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    const warm = link.call(frame('Warm'), false);
    await settle();
    sockets[0].message('{"id":1,"ok":true,"data":null}');
    await warm;
    return { link, socket: sockets[0] };
  }

  it("answers a raw call with the data's JSON text as the broker wrote it", async () => {
    const { link, socket } = await openLink();
    const raw = link.call(frame('A'), false, { raw: true });
    await settle();
    socket.message('{"id":2,"ok":true,"data":{"b": 2, "big":9223372036854775807}}');
    expect(await raw).toStrictEqual({ ok: true, dataJson: '{"b": 2, "big":9223372036854775807}' });
    expect(link.pendingCount).toBe(0);
  });

  it("answers a raw paged call with its paging and the data's text", async () => {
    const { link, socket } = await openLink();
    const pages = [
      link.call(frame('A'), false, { raw: true, paged: true }),
      link.call(frame('B'), false, { raw: true, paged: true }),
    ];
    await settle();
    socket.message('{"id":2,"ok":true,"paging":{"nextCursor":"c2","hasMore":true},"data":[1,2]}');
    socket.message('{"id":3,"ok":true,"paging":{"nextCursor":null,"hasMore":false},"data":[]}');
    expect(await Promise.all(pages)).toStrictEqual([
      { ok: true, dataJson: '[1,2]', paging: { nextCursor: 'c2', hasMore: true } },
      { ok: true, dataJson: '[]', paging: { nextCursor: null, hasMore: false } },
    ]);
    expect(link.pendingCount).toBe(0);
  });

  it('parses whole every frame the raw cut does not fit', async () => {
    const { link, socket } = await openLink();
    const calls = [
      link.call(frame('plain'), false),
      link.call(frame('pagedWithoutPaging'), false, { raw: true, paged: true }),
      link.call(frame('unpagedWithPaging'), false, { raw: true }),
      link.call(frame('cursorNotText'), false, { raw: true, paged: true }),
      link.call(frame('flagNotBoolean'), false, { raw: true, paged: true }),
      link.call(frame('trailingSpace'), false, { raw: true }),
      link.call(frame('failure'), false, { raw: true }),
      link.call(frame('arrayBuffer'), false),
    ];
    await settle();
    socket.message('{"id":2,"ok":true,"data":{"a":1}}');
    socket.message('{"id":3,"ok":true,"data":[1]}');
    socket.message('{"id":4,"ok":true,"paging":{"nextCursor":null,"hasMore":false},"data":[2]}');
    socket.message('{"id":5,"ok":true,"paging":{"nextCursor":5,"hasMore":true},"data":[3]}');
    socket.message('{"id":6,"ok":true,"paging":{"nextCursor":null,"hasMore":"no"},"data":[4]}');
    socket.message('{"id":7,"ok":true,"data":[5]} ');
    socket.message('{"id":8,"ok":false,"error":{"code":"NotFound","managerCode":3,"message":"login 7 not found"}}');
    socket.message(new TextEncoder().encode('{"id":9,"ok":true,"data":"bytes"}').buffer as ArrayBuffer);
    expect(await Promise.all(calls)).toStrictEqual([
      { ok: true, data: { a: 1 } },
      { ok: true, data: [1] },
      { ok: true, paging: { nextCursor: null, hasMore: false }, data: [2] },
      { ok: true, paging: { nextCursor: 5, hasMore: true }, data: [3] },
      { ok: true, paging: { nextCursor: null, hasMore: 'no' }, data: [4] },
      { ok: true, data: [5] },
      { ok: false, error: { code: 'NotFound', managerCode: 3, message: 'login 7 not found' } },
      { ok: true, data: 'bytes' },
    ]);
    expect(link.pendingCount).toBe(0);
  });

  it("answers a raw call of a binary frame with the data's bytes, paging read from the head, exact int64 digits", async () => {
    const { link, socket } = await openLink();
    const calls = [
      link.call(frame('A'), false, { raw: true }),
      link.call(frame('B'), false, { raw: true, paged: true }),
      // A data of characters beyond ASCII: bytes are cut by the head's length, not the text's.
      link.call(frame('C'), false, { raw: true }),
    ];
    await settle();
    const utf8 = (text: string) => new TextEncoder().encode(text).buffer as ArrayBuffer;
    socket.message(utf8('{"id":2,"ok":true,"data":{"deal":9223372036854775807}}'));
    socket.message(utf8('{"id":3,"ok":true,"paging":{"nextCursor":"c2","hasMore":true},"data":[1]}'));
    socket.message(utf8('{"id":4,"ok":true,"data":"\u00e9\u4e00 ok"}'));
    const [a, b, c] = (await Promise.all(calls)) as Array<{ ok: true; dataBytes: Uint8Array; paging?: unknown }>;
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    expect(Object.keys(a)).toStrictEqual(['ok', 'dataBytes']);
    expect(text(a.dataBytes)).toBe('{"deal":9223372036854775807}');
    expect(b.paging).toStrictEqual({ nextCursor: 'c2', hasMore: true });
    expect(text(b.dataBytes)).toBe('[1]');
    expect(text(c.dataBytes)).toBe('"\u00e9\u4e00 ok"');
    expect(link.pendingCount).toBe(0);
  });

  it('parses whole a binary frame the raw cut does not fit: a head beyond ASCII, no closing brace, a failure', async () => {
    const { link, socket } = await openLink();
    const calls = [
      link.call(frame('cursorBeyondAscii'), false, { raw: true, paged: true }),
      link.call(frame('trailingSpace'), false, { raw: true }),
      link.call(frame('failure'), false, { raw: true }),
      link.call(frame('notRaw'), false),
    ];
    await settle();
    const utf8 = (text: string) => new TextEncoder().encode(text).buffer as ArrayBuffer;
    socket.message(utf8('{"id":2,"ok":true,"paging":{"nextCursor":"\u00e9","hasMore":false},"data":[1]}'));
    socket.message(utf8('{"id":3,"ok":true,"data":[2]} '));
    socket.message(utf8('{"id":4,"ok":false,"error":{"code":"NotFound","managerCode":null,"message":"gone"}}'));
    socket.message(utf8('{"id":5,"ok":true,"data":{"big":9223372036854775807}}'));
    expect(await Promise.all(calls)).toStrictEqual([
      { ok: true, paging: { nextCursor: '\u00e9', hasMore: false }, data: [1] },
      { ok: true, data: [2] },
      { ok: false, error: { code: 'NotFound', managerCode: null, message: 'gone' } },
      { ok: true, data: { big: 9223372036854775807n } },
    ]);
    expect(link.pendingCount).toBe(0);
  });

  it('ignores a frame it cannot read, one with a paging it cannot read, and an answer nobody waits for', async () => {
    const { link, socket } = await openLink();
    const call = link.call(frame('A'), false, { raw: true, paged: true });
    await settle();
    socket.message('not json');
    socket.message('{"id":2,"ok":true,"paging":{"nextCursor":x},"data":[1]}');
    socket.message('{"id":99,"ok":true,"data":1}');
    socket.message('{"id":99,"ok":true,"paging":{"nextCursor":null,"hasMore":false},"data":1}');
    expect(link.pendingCount).toBe(1);
    socket.message('{"id":2,"ok":true,"paging":{"nextCursor":null,"hasMore":true},"data":[9]}');
    expect(await call).toStrictEqual({ ok: true, dataJson: '[9]', paging: { nextCursor: null, hasMore: true } });
  });

  it('hands late outcomes to onLate and other link frames to onPush, and drops frames that are not objects (null included)', async () => {
    const late: unknown[] = [];
    const pushed: unknown[] = [];
    const link = new BrokerLink('http://127.0.0.1:9', 's', (l) => late.push(l));
    const warm = link.call(frame('Warm'), false);
    await settle();
    const socket = sockets[0];
    // No onPush yet: a pushed frame is dropped.
    socket.message('{"rep":1,"seq":0,"end":true}');
    link.onPush = (f) => pushed.push(f);
    socket.message('{"late":{"callId":"c1","report":{"state":"lost"}}}');
    socket.message('{"late":{"callId":7}}');
    socket.message('{"rep":1,"seq":1,"end":true}');
    socket.message('5');
    socket.message('"text"');
    socket.message('null');
    socket.message('{"id":1,"ok":true,"data":0}');
    expect(await warm).toStrictEqual({ ok: true, data: 0 });
    expect(late).toStrictEqual([{ callId: 'c1', report: { state: 'lost' } }]);
    expect(pushed).toStrictEqual([{ late: { callId: 7 } }, { rep: 1, seq: 1, end: true }]);
  });
});

describe('time-outs', () => {
  it('waits the call budget plus LINK_GRACE_MS, arming one timer for the earliest deadline', async () => {
    expect(LINK_GRACE_MS).toBe(1000);
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    const slow = link.call(frame('Slow', 9_000), false);
    await settle();
    const fast = link.call(frame('Fast', 2_000), false);
    const answered = link.call(frame('Answered', 1_000), false);
    await settle();
    expect(vi.getTimerCount()).toBe(1);
    sockets[0].message('{"id":3,"ok":true,"data":"in time"}');
    expect(await answered).toStrictEqual({ ok: true, data: 'in time' });
    await vi.advanceTimersByTimeAsync(2_999);
    expect(link.pendingCount).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(await fast).toStrictEqual({
      ...noConnect('no answer from the trading platform within 2 s'),
      timedOut: true,
    });
    expect(link.pendingCount).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(6_999);
    expect(link.pendingCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await slow).toStrictEqual({
      ...noConnect('no answer from the trading platform within 9 s'),
      timedOut: true,
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('times out every call past its deadline at once, with fractional seconds named as they are', async () => {
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    const calls = [link.call(frame('A', 1_500), true), link.call(frame('B', 1_500), false)];
    await settle();
    await vi.advanceTimersByTimeAsync(2_500);
    expect(await Promise.all(calls)).toStrictEqual([
      { ...noConnect('no answer from the trading platform within 1.5 s'), timedOut: true, outcome: 'unknown' },
      { ...noConnect('no answer from the trading platform within 1.5 s'), timedOut: true },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('closing and losing the link', () => {
  it('answers every pending call on close, unknown for changes, and closes the socket once', async () => {
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    let closes = 0;
    link.onClose = () => {
      closes++;
    };
    const calls = [link.call(frame('Read'), false), link.call(frame('Change'), true)];
    await settle();
    link.close();
    expect(await Promise.all(calls)).toStrictEqual([
      { ...noConnect('broker link closed'), linkLost: true },
      { ...noConnect('broker link closed'), outcome: 'unknown', linkLost: true },
    ]);
    expect(sockets[0].closedWith).toEqual([1000, 'closing']);
    expect(link.connected).toBe(false);
    expect(link.pendingCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(closes).toBe(1);
    link.close();
    expect(closes).toBe(1);
  });

  it('closes even when the socket is already closed', async () => {
    const link = new BrokerLink('http://127.0.0.1:9', 's');
    const call = link.call(frame('Read'), false);
    await settle();
    sockets[0].closeThrows = true;
    link.close();
    expect(await call).toStrictEqual({ ...noConnect('broker link closed'), linkLost: true });
    expect(link.connected).toBe(false);
  });

  it('answers every pending call when the socket errs or closes, and reconnects on the next call', async () => {
    for (const event of ['error', 'close']) {
      sockets = [];
      upgrades = [];
      const link = new BrokerLink('http://127.0.0.1:9', 's');
      let closes = 0;
      link.onClose = () => {
        closes++;
      };
      const calls = [link.call(frame('Read'), false), link.call(frame('Change'), true)];
      await settle();
      sockets[0].emit(event);
      expect(await Promise.all(calls)).toStrictEqual([
        { ...noConnect('broker link lost'), linkLost: true },
        { ...noConnect('broker link lost'), outcome: 'unknown', linkLost: true },
      ]);
      expect(closes).toBe(1);
      expect(link.connected).toBe(false);
      expect(vi.getTimerCount()).toBe(0);

      const next = link.call(frame('Again', 5_000), false);
      await settle();
      expect(upgrades).toHaveLength(2);
      expect(sockets[1].ids()).toEqual([3]);
      // The lost socket's own late events touch nothing of the new link.
      sockets[0].emit('close');
      sockets[0].emit('error');
      expect(closes).toBe(1);
      expect(link.connected).toBe(true);
      expect(link.pendingCount).toBe(1);
      // The new call has its own deadline, armed afresh.
      await vi.advanceTimersByTimeAsync(6_000);
      expect(await next).toStrictEqual({
        ...noConnect('no answer from the trading platform within 5 s'),
        timedOut: true,
      });
    }
  });
});
