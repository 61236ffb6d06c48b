/**
 * The fan-out's flow control alone (no workerd): an SSE client with a write outstanding gets the latest tick of each
 * symbol and every other event in order (status events never conflated), then `overflow` past MAX_BEHIND non-tick
 * events (ticks of any number of symbols count for nothing); a hub socket that asked for flow checks and does not
 * answer its probe is held the same way (its status events each kept and counted), and one that answers is sent what
 * was held; a socket that did not ask is never probed, and is held only once it has been quiet for QUIET_MS with data
 * sent; a resync notice reaches the clients of record changes only.
 */
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../shared/streams.js';
import {
  chunkFor,
  Encoded,
  HubFlow,
  MAX_BEHIND,
  PROBE_TARGET,
  QUIET_MS,
  SLOW_MS,
  SseSink,
  streamShard,
  type HubInterest,
  type Interest,
  type RingEvent,
} from './fanout.js';

let seq = 0;
const enc = (event: StreamEvent | RingEvent) => new Encoded(++seq, `00abcdef-${seq}`, event);
const tick = (symbol: string, bid: number) =>
  enc({ topic: 'ticks', data: { symbol, bid, ask: bid + 1, lastTime: new Date(0).toISOString() } });
const trade = (order: number) => enc({ topic: 'trades', data: { kind: 'Added', order } });
const status = (connected: boolean) => enc({ topic: 'status', data: { connected } });
const decoder = new TextDecoder();

/** An SSE sink whose writes complete only when the test says so. */
function slowSse(interest: Interest) {
  const written: string[] = [];
  const waiting: Array<() => void> = [];
  const ends: boolean[] = [];
  const sink = new SseSink(
    interest,
    (chunk) => {
      written.push(decoder.decode(chunk));
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    (abort) => ends.push(abort),
    () => {},
    { set: () => 0 },
  );
  const complete = async () => {
    waiting.shift()?.();
    await Promise.resolve();
    await Promise.resolve();
  };
  return { sink, written, complete, ends, waiting };
}

const events = (text: string) =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const event = /event: (\w+)/.exec(block)?.[1];
      const data = /data: (.*)/.exec(block)?.[1];
      return { event, data: data ? JSON.parse(data) : undefined };
    });

describe('SSE fan-out', () => {
  const interest: Interest = { topics: new Set(['ticks', 'trades']), symbols: new Set(['EURUSD', 'GBPUSD']) };

  it('serializes an event once and gives clients of one interest the same chunk of the asked events only', () => {
    const batch = [tick('EURUSD', 1), tick('USDJPY', 2), trade(7)];
    const chunk = chunkFor(interest, batch)!;
    expect(events(decoder.decode(chunk))).toEqual([
      { event: 'ticks', data: { symbol: 'EURUSD', bid: 1, ask: 2, lastTime: '1970-01-01T00:00:00.000Z' } },
      { event: 'trades', data: { kind: 'Added', order: 7 } },
    ]);
    expect(chunkFor({ topics: new Set(['users']), symbols: null }, batch)).toBeNull();
  });

  it("holds a slow client's ticks as the latest per symbol and keeps every other event, in one write", async () => {
    const { sink, written, complete } = slowSse(interest);
    sink.send(chunkFor(interest, [tick('EURUSD', 1)])!);
    expect(sink.idle).toBe(false);
    sink.hold([tick('EURUSD', 2), trade(1), tick('GBPUSD', 3)]);
    sink.hold([tick('EURUSD', 4), trade(2), tick('USDJPY', 5)]);
    expect(written).toHaveLength(1);
    await complete();
    expect(written).toHaveLength(2);
    expect(events(written[1])).toEqual([
      { event: 'trades', data: { kind: 'Added', order: 1 } },
      { event: 'ticks', data: expect.objectContaining({ symbol: 'GBPUSD', bid: 3 }) },
      { event: 'ticks', data: expect.objectContaining({ symbol: 'EURUSD', bid: 4 }) },
      { event: 'trades', data: { kind: 'Added', order: 2 } },
    ]);
    await complete();
    expect(sink.idle).toBe(true);
  });

  it('is writing from a write handed out until the response took it', async () => {
    const { sink, complete } = slowSse(interest);
    expect(sink.writing).toBe(false);
    sink.send(chunkFor(interest, [tick('EURUSD', 1)])!);
    expect(sink.writing).toBe(true);
    await complete();
    expect(sink.writing).toBe(false);
    expect(sink.idle).toBe(true);
  });

  it('tells a client whose owed events are no longer held, after its outstanding write, and ends its stream once', async () => {
    const gone: string[] = [];
    const { sink, written, complete, ends } = slowSse(interest);
    (sink as unknown as { onGone: () => void }).onGone = () => gone.push('gone');
    sink.send(chunkFor(interest, [trade(1)])!);
    sink.behind();
    expect(sink.closed).toBe(true);
    expect(gone).toEqual(['gone']);
    expect(events(written.at(-1)!)).toEqual([
      { event: 'overflow', data: { message: `more than ${MAX_BEHIND} events behind: reconnect and resync` } },
    ]);
    sink.behind();
    expect(gone).toEqual(['gone']);
    expect(written).toHaveLength(2);
    await complete();
    await complete();
    expect(ends).toEqual([false]);
  });

  it('tells a client more than MAX_BEHIND non-tick events behind, and ends its stream', async () => {
    const gone: string[] = [];
    const { sink, written, complete, ends } = slowSse({ topics: new Set(['trades']), symbols: null });
    (sink as unknown as { onGone: () => void }).onGone = () => gone.push('gone');
    sink.send(chunkFor(interest, [trade(0)])!);
    sink.hold(Array.from({ length: MAX_BEHIND }, (_, i) => trade(i + 1)));
    expect(sink.closed).toBe(false);
    sink.hold([trade(MAX_BEHIND + 1)]);
    expect(sink.closed).toBe(true);
    expect(gone).toEqual(['gone']);
    expect(events(written.at(-1)!)).toEqual([
      { event: 'overflow', data: { message: `more than ${MAX_BEHIND} events behind: reconnect and resync` } },
    ]);
    await complete();
    await complete();
    expect(ends).toEqual([false]);
    sink.hold([trade(1)]);
    expect(written).toHaveLength(2);
  });
  it('counts only non-tick events toward the overflow limit: ticks of any number of symbols never overflow', async () => {
    const all: Interest = { topics: new Set(['ticks', 'trades']), symbols: null };
    const { sink, written, complete } = slowSse(all);
    sink.send(chunkFor(all, [trade(0)])!);
    // More held ticks (one per symbol, so none conflated) than MAX_BEHIND, beside exactly MAX_BEHIND other events.
    sink.hold(Array.from({ length: MAX_BEHIND + 10 }, (_, i) => tick(`S${i}`, i)));
    sink.hold(Array.from({ length: MAX_BEHIND }, (_, i) => trade(i + 1)));
    sink.raw(': ping\n\n');
    expect(sink.closed).toBe(false);
    await complete();
    const caughtUp = events(written[1]);
    expect(caughtUp.filter((e) => e.event === 'ticks')).toHaveLength(MAX_BEHIND + 10);
    expect(caughtUp.filter((e) => e.event === 'trades').map((e) => e.data.order)).toEqual(
      Array.from({ length: MAX_BEHIND }, (_, i) => i + 1),
    );
    // Held again while that write is out: one non-tick event past the limit overflows, ticks alone never do.
    sink.hold(Array.from({ length: MAX_BEHIND + 10 }, (_, i) => tick(`S${i}`, i)));
    sink.hold(Array.from({ length: MAX_BEHIND }, (_, i) => trade(i + 1)));
    expect(sink.closed).toBe(false);
    sink.hold([trade(MAX_BEHIND + 1)]);
    expect(sink.closed).toBe(true);
    expect(events(written.at(-1)!).map((e) => e.event)).toEqual(['overflow']);
  });

  it("never conflates a slow client's status events: each is held and sent in order", async () => {
    const { sink, written, complete } = slowSse(interest);
    sink.send(chunkFor(interest, [trade(0)])!);
    sink.hold([status(false), tick('EURUSD', 1), status(true)]);
    sink.hold([status(false), tick('EURUSD', 2), status(true)]);
    await complete();
    expect(events(written[1])).toEqual([
      { event: 'status', data: { connected: false } },
      { event: 'status', data: { connected: true } },
      { event: 'status', data: { connected: false } },
      { event: 'ticks', data: expect.objectContaining({ symbol: 'EURUSD', bid: 2 }) },
      { event: 'status', data: { connected: true } },
    ]);
  });
});

describe('hub socket flow', () => {
  const records = (text: string) =>
    text
      .split('\u001e')
      .filter(Boolean)
      .map((r) => JSON.parse(r));

  /** A socket's flow; `checks`: the client asked for flow checks (EnableFlowControl). */
  function flow(checks = true) {
    let now = 1_000_000;
    const sent: string[] = [];
    const closed: string[] = [];
    const f = new HubFlow(
      (t) => sent.push(t),
      (e) => closed.push(e),
      () => now,
    );
    if (checks) f.enableChecks();
    return {
      f,
      sent,
      closed,
      advance: (ms: number) => {
        now += ms;
      },
    };
  }
  const s: HubInterest = {
    handshaken: true,
    ticks: ['EURUSD'],
    streams: { t1: { topic: 'trades' }, k1: { topic: 'ticks', symbol: 'GBPUSD' } },
  };

  it('sends one message per flush with a probe, conflates while the probe is unanswered, and catches up when answered', () => {
    const { f, sent, advance } = flow();
    f.deliver(s, [tick('EURUSD', 1), tick('USDJPY', 1), trade(1), tick('GBPUSD', 1)]);
    expect(sent).toHaveLength(1);
    const first = records(sent[0]);
    expect(first.map((r) => r.target ?? r.invocationId)).toEqual(['OnTick', 't1', 'k1', PROBE_TARGET]);
    const probe = first.at(-1);
    expect(probe).toMatchObject({ type: 1, arguments: [] });
    // The probe stays unanswered past SLOW_MS: from now on the socket's output is held.
    advance(SLOW_MS + 1);
    expect(f.slow).toBe(true);
    f.deliver(s, [tick('EURUSD', 2), trade(2), tick('EURUSD', 3), tick('GBPUSD', 4), tick('GBPUSD', 5)]);
    f.deliver(s, [trade(3), tick('EURUSD', 6)]);
    expect(sent).toHaveLength(1);
    expect(f.holding).toBe(4);
    expect(f.answered('t1')).toBe(false);
    expect(f.answered(probe.invocationId)).toBe(true);
    expect(sent).toHaveLength(2);
    const caughtUp = records(sent[1]);
    expect(caughtUp.filter((r) => r.target === 'OnTick').map((r) => r.arguments[0].bid)).toEqual([6]);
    expect(caughtUp.filter((r) => r.invocationId === 'k1').map((r) => r.item.bid)).toEqual([5]);
    expect(caughtUp.filter((r) => r.invocationId === 't1').map((r) => r.item.order)).toEqual([2, 3]);
    expect(caughtUp.at(-1)).toMatchObject({ type: 1, target: PROBE_TARGET });
    expect(f.slow).toBe(false);
  });

  it("never conflates a slow socket's status events, with or without flow checks: each is held, counted and sent in order", () => {
    for (const checks of [true, false]) {
      const { f, sent, advance } = flow(checks);
      f.deliver(s, [trade(1)]);
      advance((checks ? SLOW_MS : QUIET_MS) + 1);
      expect(f.slow).toBe(true);
      f.deliver(s, [status(false), tick('EURUSD', 1), status(true), trade(2)]);
      f.deliver(s, [status(false), tick('EURUSD', 2), status(true)]);
      expect(sent).toHaveLength(1);
      expect(f.holding).toBe(6);
      if (checks) f.answered(records(sent[0]).at(-1).invocationId);
      else f.heard();
      const caughtUp = records(sent[1]).filter((r) => r.target !== PROBE_TARGET);
      expect(
        caughtUp.map((r) => [
          r.target ?? r.invocationId,
          r.arguments?.[0]?.connected ?? r.arguments?.[0]?.bid ?? r.item?.order,
        ]),
      ).toEqual([
        ['OnConnectionStatus', false],
        ['OnConnectionStatus', true],
        ['t1', 2],
        ['OnConnectionStatus', false],
        ['OnTick', 2],
        ['OnConnectionStatus', true],
      ]);
    }
  });

  it('counts held status events toward MAX_BEHIND like any other non-tick event', () => {
    const { f, closed, advance } = flow();
    f.deliver(s, [trade(0)]);
    advance(SLOW_MS + 1);
    f.deliver(
      s,
      Array.from({ length: MAX_BEHIND }, (_, i) => status(i % 2 === 0)),
    );
    expect(closed).toEqual([]);
    f.deliver(s, [status(true)]);
    expect(closed).toEqual([`more than ${MAX_BEHIND} events behind: reconnect and resync`]);
  });

  it('drops held items of a stream the client cancelled', () => {
    const { f, sent, advance } = flow();
    f.deliver(s, [trade(1)]);
    const probe = records(sent[0]).at(-1);
    advance(SLOW_MS + 1);
    f.deliver(s, [trade(2), tick('EURUSD', 1)]);
    f.cancelled('t1');
    f.answered(probe.invocationId);
    expect(records(sent[1]).map((r) => r.target ?? r.invocationId)).toEqual(['OnTick', PROBE_TARGET]);
  });

  it('closes a socket more than MAX_BEHIND non-tick events behind, with the error', () => {
    const { f, sent, closed, advance } = flow();
    f.deliver(s, [trade(0)]);
    advance(SLOW_MS + 1);
    f.deliver(
      s,
      Array.from({ length: MAX_BEHIND }, (_, i) => trade(i + 1)),
    );
    expect(closed).toEqual([]);
    f.deliver(s, [trade(MAX_BEHIND + 1)]);
    expect(closed).toEqual([`more than ${MAX_BEHIND} events behind: reconnect and resync`]);
    f.deliver(s, [trade(1)]);
    expect(sent).toHaveLength(1);
  });

  it('probes no socket that is sent nothing', () => {
    const { f, sent } = flow();
    f.deliver(s, [tick('USDJPY', 1)]);
    f.deliver({ ...s, handshaken: false }, [trade(1)]);
    expect(sent).toEqual([]);
  });

  it('never probes a socket that did not ask for flow checks, and holds its output only after QUIET_MS unheard', () => {
    const { f, sent, advance } = flow(false);
    f.deliver(s, [tick('EURUSD', 1), trade(1)]);
    expect(records(sent[0]).map((r) => r.target ?? r.invocationId)).toEqual(['OnTick', 't1']);
    // Sent data and silent for QUIET_MS: still flowing (a stock client pings within 15 s of receiving).
    advance(QUIET_MS);
    expect(f.slow).toBe(false);
    f.deliver(s, [tick('EURUSD', 2)]);
    expect(sent).toHaveLength(2);
    // A moment more without a word: slow, so its ticks are conflated and its other events held.
    advance(1);
    expect(f.slow).toBe(true);
    f.deliver(s, [tick('EURUSD', 3), trade(2), tick('EURUSD', 4), tick('GBPUSD', 5), trade(3)]);
    expect(sent).toHaveLength(2);
    expect(f.holding).toBe(4);
    // A completion that answers nothing the hub asked changes nothing; any message it sends (its ping) releases all.
    expect(f.answered('flow-0')).toBe(true);
    expect(sent).toHaveLength(2);
    f.heard();
    expect(f.slow).toBe(false);
    const caughtUp = records(sent[2]);
    expect(
      caughtUp.map((r) => [r.target ?? r.invocationId, r.arguments?.[0]?.bid ?? r.item?.order ?? r.item?.bid]),
    ).toEqual([
      ['t1', 2],
      ['OnTick', 4],
      ['k1', 5],
      ['t1', 3],
    ]);
    expect(sent.join('')).not.toContain(PROBE_TARGET);
    // Heard from while being sent: never slow however long the session.
    for (let i = 0; i < 10; i++) {
      advance(15_000);
      f.deliver(s, [trade(10 + i)]);
      f.heard();
    }
    expect(f.slow).toBe(false);
    expect(sent).toHaveLength(13);
  });

  it('closes a socket without flow checks that stays quiet past MAX_BEHIND held non-tick events, with the error', () => {
    const { f, sent, closed, advance } = flow(false);
    f.deliver(s, [trade(0)]);
    advance(QUIET_MS + 1);
    f.deliver(
      s,
      Array.from({ length: MAX_BEHIND }, (_, i) => trade(i + 1)),
    );
    f.deliver(
      s,
      Array.from({ length: 1_000 }, (_, i) => tick('EURUSD', i)),
    );
    expect(closed).toEqual([]);
    f.deliver(s, [trade(MAX_BEHIND + 1)]);
    expect(closed).toEqual([`more than ${MAX_BEHIND} events behind: reconnect and resync`]);
    f.heard();
    f.deliver(s, [trade(1)]);
    expect(sent).toHaveLength(1);
  });

  it('starts probing when the client asks for flow checks, first sending what was held for it', () => {
    const { f, sent, advance } = flow(false);
    f.deliver(s, [trade(1)]);
    advance(QUIET_MS + 1);
    f.deliver(s, [trade(2), tick('EURUSD', 1)]);
    expect(sent).toHaveLength(1);
    f.enableChecks();
    expect(records(sent[1]).map((r) => r.target ?? r.invocationId)).toEqual(['t1', 'OnTick', PROBE_TARGET]);
    // Now judged by its answers: a ping no longer releases what is held once its probe is overdue.
    advance(SLOW_MS + 1);
    f.deliver(s, [trade(3)]);
    f.heard();
    expect(sent).toHaveLength(2);
    f.answered(records(sent[1]).at(-1).invocationId);
    expect(records(sent[2]).map((r) => r.item?.order ?? r.target)).toEqual([3, PROBE_TARGET]);
  });
});

describe('resync notices', () => {
  const records = (text: string) =>
    text
      .split('\u001e')
      .filter(Boolean)
      .map((r) => JSON.parse(r));
  const resync = () => enc({ topic: 'resync', data: { message: 'read the current state again' } });
  const status = (connected: boolean) => enc({ topic: 'status', data: { connected } });

  it('go to SSE clients of record changes, not to clients of ticks or symbols alone', () => {
    const batch = [status(false), resync(), status(true), tick('EURUSD', 1)];
    const sent = (topics: string[]) =>
      events(
        decoder.decode(
          chunkFor({ topics: new Set(topics) as Interest['topics'], symbols: null }, batch) ?? new Uint8Array(),
        ),
      );
    for (const topics of [['trades'], ['ticks', 'users'], ['margin'], ['positions'], ['orders'], ['deals']]) {
      expect(sent(topics).map((e) => e.event)).toEqual([
        'status',
        'resync',
        'status',
        ...(topics.includes('ticks') ? ['ticks'] : []),
      ]);
    }
    for (const topics of [['ticks'], ['symbols'], ['ticks', 'symbols']]) {
      expect(sent(topics).map((e) => e.event)).toEqual([
        'status',
        'status',
        ...(topics.includes('ticks') ? ['ticks'] : []),
      ]);
    }
    expect(sent(['trades'])[1]).toEqual({ event: 'resync', data: { message: 'read the current state again' } });
  });

  it('go to hub sockets with a record stream open as OnResync, held in order while the socket is slow', () => {
    let now = 0;
    const sent: string[] = [];
    const f = new HubFlow(
      (t) => sent.push(t),
      () => {},
      () => now,
    );
    f.enableChecks();
    const ticksOnly: HubInterest = {
      handshaken: true,
      ticks: ['EURUSD'],
      streams: { k: { topic: 'ticks' }, y: { topic: 'symbols' } },
    };
    f.deliver(ticksOnly, [status(false), resync(), status(true)]);
    expect(records(sent[0]).map((r) => r.target ?? r.invocationId)).toEqual([
      'OnConnectionStatus',
      'OnConnectionStatus',
      PROBE_TARGET,
    ]);
    const withTrades: HubInterest = { ...ticksOnly, streams: { ...ticksOnly.streams, t: { topic: 'trades' } } };
    now += SLOW_MS + 1;
    f.deliver(withTrades, [status(false), resync(), status(true), trade(1)]);
    expect(sent).toHaveLength(1);
    f.answered(records(sent[0]).at(-1).invocationId);
    expect(records(sent[1]).map((r) => [r.target ?? r.invocationId, r.arguments?.[0] ?? r.item])).toEqual([
      ['OnConnectionStatus', { connected: false }],
      ['OnResync', { message: 'read the current state again' }],
      ['OnConnectionStatus', { connected: true }],
      ['t', { kind: 'Added', order: 1 }],
      [PROBE_TARGET, undefined],
    ]);
  });
});

describe('stream shards', () => {
  it('sends a reconnect to the object its event id names, and a new client to any', () => {
    expect(streamShard('02a1b2c3-17', 4, () => 0)).toBe(2);
    expect(streamShard('00a1b2c3-17', 4, () => 0.99)).toBe(0);
    // An id of a shard that no longer exists, or no id: spread by the random draw.
    expect(streamShard('07a1b2c3-17', 4, () => 0.5)).toBe(2);
    expect(streamShard(null, 4, () => 0.74)).toBe(2);
    expect(streamShard('not-an-id', 3, () => 0.99)).toBe(2);
    expect(streamShard(null, 1)).toBe(0);
  });
});
