/**
 * A hub socket's messages: the handshake (json version 1 only, answered with the status), unreadable records, the
 * admission of invocations, the tick subscriptions and their bounds, flow checks, server streams and their bounds,
 * cancellation, a client's close, and unknown methods and message types.
 */
import { describe, expect, it } from 'vitest';
import { HubClient, type HubState } from './clients.js';
import {
  HUB_STREAMS,
  MAX_HUB_NAME,
  MAX_HUB_STREAMS,
  MAX_HUB_TICK_SYMBOLS,
  onHubText,
  type HubMessageHost,
} from './hubMessages.js';
import { Encoded, FLOW_CONTROL_METHOD, QUIET_MS, setQuietMs } from './fanout.js';
import type { StreamCaller } from './standing.js';

const RS = '\u001e';
const caller: StreamCaller = { clientId: 'c1', organizationId: 'o1', expiresAt: Number.MAX_SAFE_INTEGER };
const text = (...records: unknown[]) =>
  records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r)) + RS).join('');

/** A hub socket and its client, with a host that admits every call unless told otherwise. */
function socket(state: Partial<HubState> = {}, refuse: string | null = null) {
  const sent: Array<Record<string, unknown>> = [];
  const closes: Array<[number, string]> = [];
  const saved: unknown[] = [];
  const gone = new Set<WebSocket>();
  const admitted: string[] = [];
  const ws = {
    send: (t: string) => {
      for (const r of t.split(RS).filter(Boolean)) sent.push(JSON.parse(r));
    },
    close: (code: number, reason: string) => {
      closes.push([code, reason]);
    },
    serializeAttachment: (a: unknown) => {
      saved.push(a);
    },
  } as unknown as WebSocket;
  const full: HubState = { family: 'PF4', handshaken: true, ticks: [], streams: {}, caller, ...state };
  const client = new HubClient(ws, full, { seq: () => 0, sent: () => {}, forget: (s) => gone.add(s) });
  const host: HubMessageHost = {
    connected: () => true,
    admit: (clientId) => {
      admitted.push(clientId);
      return Promise.resolve(refuse);
    },
    gone: (s) => gone.has(s),
    forget: (s) => {
      gone.add(s);
    },
  };
  const say = (...records: unknown[]) => onHubText(client, text(...records), host);
  return { client, state: full, sent, closes, saved, gone, admitted, say, ws };
}

const invoke = (target: string, args: unknown[], invocationId = '1') => ({
  type: 1,
  target,
  arguments: args,
  invocationId,
});

describe("a hub socket's handshake", () => {
  it('takes json version 1, is answered with an empty record and the status, and is saved handshaken', async () => {
    const s = socket({ handshaken: false });
    await s.say({ protocol: 'json', version: 1 });
    expect(s.state.handshaken).toBe(true);
    expect(s.sent).toEqual([{}, { type: 1, target: 'OnConnectionStatus', arguments: [{ connected: true }] }]);
    expect(s.saved).toEqual([{ family: 'PF4', handshaken: true, caller }]);
  });

  it('refuses another protocol or version with an error record and closes the socket', async () => {
    const s = socket({ handshaken: false });
    await s.say({ protocol: 'messagepack', version: 1 }, invoke('SubscribeToTicks', ['EURUSD']));
    expect(s.sent).toEqual([{ error: 'protocol messagepack version 1 is not supported: use json version 1' }]);
    expect(s.closes).toEqual([[1002, 'unsupported protocol']]);
    expect(s.state.handshaken).toBe(false);
    const v2 = socket({ handshaken: false });
    await v2.say({ protocol: 'json', version: 2 });
    expect(v2.sent).toEqual([{ error: 'protocol json version 2 is not supported: use json version 1' }]);
    expect(v2.state.handshaken).toBe(false);
  });

  it('closes on an unreadable record with a Close message', async () => {
    const s = socket();
    await s.say('[1,2]', invoke('SubscribeToTicks', ['EURUSD']));
    expect(s.sent).toEqual([{ type: 7, allowReconnect: false, error: 'unreadable message' }]);
    expect(s.closes).toEqual([[1003, 'unreadable message']]);
  });

  it('handles the records of one message in order, the handshake first, and none once the socket is let go', async () => {
    const s = socket({ handshaken: false });
    await s.say({ protocol: 'json', version: 1 }, invoke('SubscribeToTicks', ['EURUSD']));
    expect(s.state.ticks).toEqual(['EURUSD']);
    expect(s.sent.at(-1)).toEqual({ type: 3, invocationId: '1', result: null });
    s.gone.add(s.ws);
    await s.say(invoke('SubscribeToTicks', ['GBPUSD']));
    expect(s.state.ticks).toEqual(['EURUSD']);
  });
});

describe("a hub socket's invocations", () => {
  it("admits each invocation and stream against the caller's budget, and answers a refused one with the error", async () => {
    const s = socket({}, 'rate limit: retry after 3 s');
    await s.say(
      invoke('SubscribeToTicks', ['EURUSD']),
      { type: 4, target: 'StreamTrades', arguments: [], invocationId: 's1' },
      { type: 6 },
    );
    expect(s.admitted).toEqual(['c1', 'c1']);
    expect(s.sent).toEqual([
      { type: 3, invocationId: '1', error: 'rate limit: retry after 3 s' },
      { type: 3, invocationId: 's1', error: 'rate limit: retry after 3 s' },
    ]);
    expect(s.state.ticks).toEqual([]);
    expect(s.state.streams).toEqual({});
  });

  it("subscribes to and unsubscribes from a symbol's ticks, once each", async () => {
    const s = socket();
    await s.say(
      invoke('SubscribeToTicks', ['EURUSD'], 'a'),
      invoke('SubscribeToTicks', ['EURUSD'], 'b'),
      invoke('SubscribeToTicks', ['GBPUSD'], 'c'),
    );
    expect(s.state.ticks).toEqual(['EURUSD', 'GBPUSD']);
    await s.say(invoke('UnsubscribeFromTicks', ['EURUSD'], 'd'));
    expect(s.state.ticks).toEqual(['GBPUSD']);
    expect(s.sent.map((m) => m.invocationId)).toEqual(['a', 'b', 'c', 'd']);
    expect(s.sent.every((m) => m.result === null)).toBe(true);
  });

  it('refuses a symbol that is empty, not a string or too long, and more symbols than the bound', async () => {
    const s = socket({ ticks: Array.from({ length: MAX_HUB_TICK_SYMBOLS }, (_, i) => `S${i}`) });
    await s.say(
      invoke('SubscribeToTicks', [''], 'a'),
      invoke('UnsubscribeFromTicks', [7], 'b'),
      invoke('SubscribeToTicks', ['X'.repeat(MAX_HUB_NAME + 1)], 'c'),
      invoke('SubscribeToTicks', ['NEW'], 'd'),
      invoke('SubscribeToTicks', ['S0'], 'e'),
    );
    expect(s.sent.map((m) => m.error ?? m.result)).toEqual([
      'SubscribeToTicks: symbol must be a non-empty string',
      'UnsubscribeFromTicks: symbol must be a non-empty string',
      `SubscribeToTicks: symbol must be at most ${MAX_HUB_NAME} characters`,
      `SubscribeToTicks: at most ${MAX_HUB_TICK_SYMBOLS} symbols per connection: unsubscribe one first, or stream every symbol with StreamTicks`,
      null,
    ]);
    expect(s.state.ticks).toHaveLength(MAX_HUB_TICK_SYMBOLS);
    expect(s.state.ticks.at(-1)).toBe('S0');
  });

  it('turns flow checks on when asked, and names an unknown method', async () => {
    const s = socket();
    await s.say(invoke(FLOW_CONTROL_METHOD, [], 'f'), invoke('Nope', [], 'n'), {
      type: 1,
      target: 'Nope',
      arguments: [],
    });
    expect(s.sent).toEqual([
      { type: 3, invocationId: 'f', result: true },
      { type: 3, invocationId: 'n', error: "Unknown hub method 'Nope'" },
    ]);
    // With checks on, what it is sent comes with a probe to answer.
    s.state.streams = { t: { topic: 'trades' } };
    s.client.deliver([new Encoded(1, 'e-1', { topic: 'trades', data: { kind: 'Added', order: 1 } })]);
    expect(s.sent.slice(2).map((m) => m.target ?? m.type)).toEqual([2, 'OnFlowCheck']);
  });
});

describe("a hub socket's streams", () => {
  it("opens the family's streams, a ticks stream of one symbol when named, and cancels them", async () => {
    const s = socket({ family: 'PF5' });
    await s.say(
      { type: 4, target: 'StreamPositions', arguments: [], invocationId: 'p' },
      { type: 4, target: 'StreamTicks', arguments: ['EURUSD'], invocationId: 't' },
      { type: 4, target: 'StreamTicks', arguments: [''], invocationId: 'all' },
    );
    expect(s.state.streams).toEqual({
      p: { topic: 'positions' },
      t: { topic: 'ticks', symbol: 'EURUSD' },
      all: { topic: 'ticks' },
    });
    await s.say({ type: 5, invocationId: 'p' }, { type: 5, invocationId: 'unknown' });
    expect(Object.keys(s.state.streams)).toEqual(['t', 'all']);
    expect(s.sent).toEqual([]);
  });

  it('names a stream the family has not, and refuses more open streams than the bound', async () => {
    const streams = Object.fromEntries(
      Array.from({ length: MAX_HUB_STREAMS }, (_, i) => [`s${i}`, { topic: 'trades' as const }]),
    );
    const s = socket({ streams });
    expect(HUB_STREAMS.PF4.StreamPositions).toBeUndefined();
    await s.say(
      { type: 4, target: 'StreamPositions', arguments: [], invocationId: 'x' },
      { type: 4, target: 'StreamTrades', arguments: [], invocationId: 'y' },
      { type: 4, target: 'StreamUserUpdates', arguments: [], invocationId: 's0' },
    );
    expect(s.sent).toEqual([
      { type: 3, invocationId: 'x', error: "Unknown hub stream 'StreamPositions'" },
      {
        type: 3,
        invocationId: 'y',
        error: `StreamTrades: at most ${MAX_HUB_STREAMS} open streams per connection: cancel one first`,
      },
    ]);
    expect(s.state.streams.s0).toEqual({ topic: 'users' });
  });

  it('closes and lets go of a socket whose stream invocation id is too long', async () => {
    const s = socket();
    await s.say(
      { type: 4, target: 'StreamTrades', arguments: [], invocationId: 'i'.repeat(MAX_HUB_NAME + 1) },
      invoke('SubscribeToTicks', ['EURUSD']),
    );
    expect(s.sent).toEqual([
      { type: 7, allowReconnect: false, error: `invocationId: must be at most ${MAX_HUB_NAME} characters` },
    ]);
    expect(s.closes).toEqual([[1008, 'invocation id too long']]);
    expect(s.gone.has(s.ws)).toBe(true);
    expect(s.state.ticks).toEqual([]);
  });
});

describe("a hub socket's other messages", () => {
  it('closes when the client closes, takes pings and unanswered completions silently, and names other types', async () => {
    const s = socket();
    await s.say({ type: 6 }, { type: 3, invocationId: '99' }, { type: 7 });
    expect(s.sent).toEqual([]);
    expect(s.closes).toEqual([[1000, 'closed by the client']]);
    await s.say({ type: 2, invocationId: 'i', item: 1 }, { type: 42, invocationId: 'q' }, { type: 42 });
    expect(s.sent).toEqual([
      { type: 3, invocationId: 'i', error: 'message type 2 is not supported' },
      { type: 3, invocationId: 'q', error: 'message type 42 is not supported' },
    ]);
  });

  it('hears the client with every message after the handshake: what was held for it goes out', async () => {
    const s = socket({ streams: { t: { topic: 'trades' } } });
    setQuietMs(-1); // slow as soon as it was sent something and not heard from since
    try {
      s.client.deliver([new Encoded(1, 'e-1', { topic: 'trades', data: { kind: 'Added', order: 1 } })]);
      s.client.deliver([new Encoded(2, 'e-2', { topic: 'trades', data: { kind: 'Added', order: 2 } })]);
      expect(s.sent.map((m) => (m.item as { order: number }).order)).toEqual([1]);
      await s.say({ type: 6 });
      expect(s.sent.map((m) => (m.item as { order: number }).order)).toEqual([1, 2]);
    } finally {
      setQuietMs(QUIET_MS);
    }
  });
});
