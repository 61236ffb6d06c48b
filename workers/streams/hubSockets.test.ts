/**
 * The stream object's hub sockets: a socket accepted is owed what comes after the newest event and saved in its
 * attachment; one that does not handshake in time is told so and closed; a socket's messages are handled in order,
 * each waiting for the one before it; a socket let go is handled no more; a socket whose client the object lost is
 * found again from its attachment. workerd's WebSocketPair and its 101 Response are stood in for here.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HubState } from './clients.js';
import { HubSockets, type HubSocketsHost } from './hubSockets.js';
import type { StreamCaller } from './standing.js';

const RS = '\u001e';
const caller: StreamCaller = { clientId: 'c1', organizationId: 'o1', expiresAt: Number.MAX_SAFE_INTEGER };

/** A socket that records what it is sent, how it is closed and its attachment. */
function fakeSocket(attachment: unknown = null) {
  const sent: Array<Record<string, unknown>> = [];
  const closes: Array<[number, string]> = [];
  let saved = attachment;
  const ws = {
    send: (t: string) => {
      for (const r of t.split(RS).filter(Boolean)) sent.push(JSON.parse(r));
    },
    close: (code: number, reason: string) => {
      closes.push([code, reason]);
    },
    serializeAttachment: (a: unknown) => {
      saved = a;
    },
    deserializeAttachment: () => saved,
  };
  return { ws: ws as unknown as WebSocket, sent, closes, attachment: () => saved };
}

type Fake = ReturnType<typeof fakeSocket>;

function sockets(overrides: Partial<HubSocketsHost> = {}) {
  const accepted: WebSocket[] = [];
  let sent = 0;
  const host: HubSocketsHost = {
    ctx: {
      acceptWebSocket: (ws: WebSocket) => {
        accepted.push(ws);
      },
      getWebSockets: () => accepted,
    },
    handshakeSeconds: () => 15,
    seq: () => 7,
    sent: () => {
      sent++;
    },
    connected: () => false,
    admit: () => Promise.resolve(null),
    ...overrides,
  };
  return { hubs: new HubSockets(host), accepted, sentCount: () => sent };
}

/** Stands in for workerd's WebSocketPair and 101 Response; answers the server ends the pairs made. */
function standIns(): Fake[] {
  const servers: Fake[] = [];
  vi.stubGlobal(
    'WebSocketPair',
    class {
      0 = fakeSocket().ws;
      1: WebSocket;
      constructor() {
        const server = fakeSocket();
        servers.push(server);
        this[1] = server.ws;
      }
    },
  );
  vi.stubGlobal(
    'Response',
    class {
      status: number;
      webSocket: WebSocket;
      constructor(_body: null, init: { status: number; webSocket: WebSocket }) {
        this.status = init.status;
        this.webSocket = init.webSocket;
      }
    },
  );
  return servers;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('accepting a hub socket', () => {
  it("answers 101 with the client's end, saves the socket's state, and owes it what comes after the newest event", () => {
    const servers = standIns();
    let seq = 7;
    const { hubs, accepted } = sockets({ seq: () => seq });
    const res = hubs.accept('PF5', caller) as unknown as { status: number; webSocket: WebSocket };
    seq = 9;
    expect(res.status).toBe(101);
    expect(accepted).toEqual([servers[0].ws]);
    expect(res.webSocket).not.toBe(servers[0].ws);
    expect(servers[0].attachment()).toEqual({ family: 'PF5', handshaken: false, caller });
    const [client] = hubs.clients();
    expect(client.sentSeq).toBe(7);
    expect(hubs.stats()).toEqual({ flows: 1, slowHubs: 0 });
    expect(hubs.count).toBe(1);
  });

  it('tells a socket that does not handshake in time so, closes it and lets it go; a handshaken one stays', async () => {
    const servers = standIns();
    const { hubs } = sockets({ handshakeSeconds: () => 0 });
    hubs.accept('PF4', caller);
    hubs.accept('PF4', caller);
    await hubs.message(servers[1].ws, JSON.stringify({ protocol: 'json', version: 1 }) + RS);
    await vi.waitFor(() => expect(servers[0].closes).toEqual([[1008, 'no handshake']]), { timeout: 3000 });
    expect(servers[0].sent).toEqual([{ type: 7, error: 'no handshake within 0 s', allowReconnect: false }]);
    expect(hubs.clients().map((c) => c.ws)).toEqual([servers[1].ws]);
    expect(servers[1].closes).toEqual([]);
  });
});

describe("a hub socket's messages", () => {
  it("are handled in order, a later one waiting for an earlier invocation's admission", async () => {
    const releases: Array<() => void> = [];
    const { hubs, accepted } = sockets({ admit: () => new Promise((resolve) => releases.push(() => resolve(null))) });
    const s = fakeSocket({ family: 'PF4', handshaken: true, caller } satisfies Omit<HubState, 'ticks' | 'streams'>);
    accepted.push(s.ws);
    const invoke = (target: string, symbol: string, id: string) =>
      JSON.stringify({ type: 1, target, arguments: [symbol], invocationId: id }) + RS;
    const first = hubs.message(s.ws, invoke('SubscribeToTicks', 'EURUSD', 'a'));
    const second = hubs.message(s.ws, invoke('UnsubscribeFromTicks', 'EURUSD', 'b'));
    await vi.waitFor(() => expect(releases).toHaveLength(1));
    releases[0]();
    await first;
    await vi.waitFor(() => expect(releases).toHaveLength(2));
    expect(s.sent.map((m) => m.invocationId)).toEqual(['a']);
    releases[1]();
    await second;
    expect(s.sent.map((m) => m.invocationId)).toEqual(['a', 'b']);
    expect(hubs.clients()[0].state.ticks).toEqual([]);
  });

  it("finds a socket's client again from its attachment, and handles a socket let go no more", async () => {
    const { hubs, accepted, sentCount } = sockets({ connected: () => true });
    const s = fakeSocket({ family: 'PF5', handshaken: false, caller });
    accepted.push(s.ws);
    await hubs.message(s.ws, JSON.stringify({ protocol: 'json', version: 1 }) + RS);
    expect(s.sent).toEqual([{}, { type: 1, target: 'OnConnectionStatus', arguments: [{ connected: true }] }]);
    expect(sentCount()).toBe(2);
    const [client] = hubs.clients();
    expect(client.state.family).toBe('PF5');
    expect(client.caller).toEqual(caller);
    hubs.forget(s.ws);
    expect(client.closed).toBe(true);
    expect(hubs.clients()).toEqual([]);
    expect(hubs.count).toBe(1);
    await hubs.message(
      s.ws,
      JSON.stringify({ type: 1, target: 'SubscribeToTicks', arguments: ['EURUSD'], invocationId: 'x' }) + RS,
    );
    expect(s.sent).toHaveLength(2);
  });

  it('logs a message that failed and goes on with the next', async () => {
    let calls = 0;
    const { hubs, accepted } = sockets({
      admit: () => (calls++ === 0 ? Promise.reject(new Error('limiter down')) : Promise.resolve(null)),
    });
    const s = fakeSocket({ family: 'PF4', handshaken: true, caller });
    accepted.push(s.ws);
    const errors: string[] = [];
    const error = console.error;
    console.error = (line: string) => {
      errors.push(line);
    };
    try {
      await hubs.message(
        s.ws,
        JSON.stringify({ type: 1, target: 'SubscribeToTicks', arguments: ['A'], invocationId: '1' }) + RS,
      );
      await hubs.message(
        s.ws,
        JSON.stringify({ type: 1, target: 'SubscribeToTicks', arguments: ['B'], invocationId: '2' }) + RS,
      );
    } finally {
      console.error = error;
    }
    expect(errors).toEqual([JSON.stringify({ msg: 'hub message failed', error: 'Error: limiter down' })]);
    expect(s.sent).toEqual([{ type: 3, invocationId: '2', result: null }]);
  });
});
