/**
 * Stream subscriptions on the edge link through a real broker against a fake trading server: `#subscribe` answers
 * with the subscription's number and pushes the session's status, then the named topics' changes in order, shaped to
 * their field lists (a secret the server sends never appears); `#unsubscribe` ends it; a session loss and its resync
 * are pushed as status changes; ticks are conflated per symbol while the link is congested, other events never.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_STREAM_BATCH, type StreamFrame } from '../../shared/frames.js';
import type { StreamEvent } from '../../shared/streams.js';
import { startBroker, type RunningBroker } from '../index.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../../test/support/broker/fakeManagerServer.js';
import { eventually, TestLink } from '../../test/support/broker/linkClient.js';
import { PlatformEvents } from './platformEvents.js';
import { streamEvent } from './streamShape.js';
import { StreamSubscriptions } from './streamSubscriptions.js';

const SECRET = 'link-secret-for-tests';
const PF4_ID = '0b6f3a52-4a53-4c47-9d6f-5a1e2f0c0111';

describe('stream subscriptions on the edge link', () => {
  let pf4: FakeManagerServer;
  let broker: RunningBroker;
  let link: TestLink;
  const frames: StreamFrame[] = [];
  const eventsOf = (sub: number) => frames.filter((f) => f.sub === sub).map((f) => f.event);

  beforeAll(async () => {
    pf4 = await FakeManagerServer.start('PF4');
    broker = await startBroker({
      secret: SECRET,
      platforms: [{ id: PF4_ID, family: 'PF4', server: pf4.url, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
      session: { backoff: { baseMs: 20, capMs: 200 }, pingIntervalMs: 1000 },
    });
    link = await TestLink.open(broker.port, SECRET);
    link.ws.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString());
      if (typeof frame.sub === 'number') frames.push(frame);
    });
    await eventually(async () => (await link.call(PF4_ID, 'ServerTime')).ok);
    await eventually(() => broker.platforms.get(PF4_ID)?.events.connected);
  });
  afterAll(async () => {
    await link?.close();
    await broker?.close();
    await pf4?.close();
  });

  it('pushes the status, then the chosen topics shaped to their fields, until unsubscribed', async () => {
    const answer = await link.call(PF4_ID, '#subscribe', { topics: ['trades', 'ticks'] });
    expect(answer).toMatchObject({ ok: true, data: { sub: expect.any(Number) } });
    const sub = (answer as { data: { sub: number } }).data.sub;
    await eventually(() => eventsOf(sub).length >= 1);
    expect(eventsOf(sub)[0]).toEqual({ topic: 'status', data: { connected: true } });

    pf4.emit('users', 'update', { login: 100001, group: 'demo', name: 'Not asked for' });
    pf4.emit('trades', 'add', {
      order: 9001,
      login: 100001,
      symbol: 'EURUSD',
      tradeCommand: 'Buy',
      volume: 10,
      volumeLots: 0.1,
      openPrice: 1.1,
      tradeRecordState: 'OpenNormal',
      apiSecret: 'never-shown',
      magic: 7,
    });
    pf4.emit('ticks', 'update', { symbol: 'EURUSD', time: '2026-01-01T00:00:01.000Z', bid: 1.2, ask: 1.2002 });
    await eventually(() => eventsOf(sub).length >= 3);
    const [, trade, tick] = eventsOf(sub);
    expect(trade).toEqual({
      topic: 'trades',
      data: {
        kind: 'Added',
        order: 9001,
        login: 100001,
        symbol: 'EURUSD',
        cmd: 'Buy',
        volumeLots: 0.1,
        openPrice: 1.1,
      },
    });
    expect(tick).toEqual({
      topic: 'ticks',
      data: { symbol: 'EURUSD', bid: 1.2, ask: 1.2002, lastTime: '2026-01-01T00:00:01.000Z' },
    });
    expect(JSON.stringify(frames)).not.toContain('never-shown');

    expect(await link.call(PF4_ID, '#unsubscribe', { sub })).toMatchObject({ ok: true, data: true });
    const before = eventsOf(sub).length;
    pf4.emit('trades', 'update', { order: 9001, login: 100001, symbol: 'EURUSD', profit: 3 });
    // A later subscription sees the event, so the first one would have had it by now.
    const second = (await link.call(PF4_ID, '#subscribe', { topics: ['trades'] })) as { data: { sub: number } };
    pf4.emit('trades', 'update', { order: 9001, login: 100001, symbol: 'EURUSD', profit: 4 });
    await eventually(() => eventsOf(second.data.sub).some((e) => e.topic === 'trades'));
    expect(eventsOf(sub).length).toBe(before);
  });

  it('refuses an unknown platform and a topic the family has not', async () => {
    expect(await link.call('0b6f3a52-4a53-4c47-9d6f-5a1e2f0c0999', '#subscribe', { topics: ['ticks'] })).toMatchObject({
      ok: false,
      error: { code: 'NotFound' },
    });
    expect(await link.call(PF4_ID, '#subscribe', { topics: ['positions'] })).toMatchObject({
      ok: false,
      error: { code: 'Validation' },
    });
  });

  it('tells the session going down and coming back after its resync', async () => {
    const sub = ((await link.call(PF4_ID, '#subscribe', { topics: ['users'] })) as { data: { sub: number } }).data.sub;
    await eventually(() => eventsOf(sub).length >= 1);
    pf4.drop();
    await eventually(() => eventsOf(sub).filter((e) => e.topic === 'status').length >= 3, 10_000);
    expect(
      eventsOf(sub)
        .filter((e) => e.topic === 'status')
        .map((e) => e.data),
    ).toEqual([{ connected: true }, { connected: false }, { connected: true }]);
  });
});

describe('a congested link', () => {
  it('conflates ticks per symbol, the latest winning, and holds nothing else back', () => {
    const sent: StreamEvent[] = [];
    let buffered = 10_000_000;
    const sink = {
      send: (t: string) => {
        const f = JSON.parse(t);
        if (f.event) sent.push(f.event);
      },
      get bufferedAmount() {
        return buffered;
      },
    };
    const events = new PlatformEvents('PF4');
    const subs = new StreamSubscriptions(sink, () => ({ family: 'PF4', events }), 1000);
    subs.handle({ id: 1, platform: 'p', op: '#subscribe', args: { topics: ['ticks', 'trades'] }, timeoutMs: 1000 });
    const tick = (symbol: string, bid: number) =>
      events.onManagerEvent({ event: 'ticks', op: 'update', record: { symbol, bid, ask: bid + 1, time: 't' } });
    tick('EURUSD', 1);
    tick('GBPUSD', 2);
    events.onManagerEvent({ event: 'trades', op: 'add', record: { order: 1 } });
    tick('EURUSD', 3);
    expect(sent.map((e) => e.topic)).toEqual(['status', 'trades']);
    return eventually(() => {
      buffered = 0;
      return sent.length === 4;
    }).then(() => {
      expect(sent.slice(2).map((e) => e.data)).toEqual([
        { symbol: 'GBPUSD', bid: 2, ask: 3, lastTime: 't' },
        { symbol: 'EURUSD', bid: 3, ask: 4, lastTime: 't' },
      ]);
      subs.close();
    });
  });
});

describe('a batched subscription', () => {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  function subscribed(args: Record<string, unknown>) {
    const frames: Array<Record<string, unknown>> = [];
    const answers: Array<Record<string, unknown>> = [];
    const sink = {
      send: (t: string) => {
        const f = JSON.parse(t);
        (typeof f.sub === 'number' ? frames : answers).push(f);
      },
      bufferedAmount: 0,
    };
    const events = new PlatformEvents('PF4');
    const subs = new StreamSubscriptions(sink, () => ({ family: 'PF4', events }), 1000);
    subs.handle({ id: 7, platform: 'p', op: '#subscribe', args, timeoutMs: 1000 });
    const trade = (order: number) => events.onManagerEvent({ event: 'trades', op: 'add', record: { order } });
    return { frames, answers, subs, trade };
  }

  it("sends one turn's events as one frame, in order, and the next turn's as another", async () => {
    const { frames, answers, subs, trade } = subscribed({ topics: ['trades'], batch: true });
    expect(answers).toEqual([{ id: 7, ok: true, data: { sub: 7 } }]);
    trade(1);
    trade(2);
    expect(frames).toEqual([]); // not before the turn is over
    await turn();
    expect(frames).toHaveLength(1);
    expect(frames[0].sub).toBe(7);
    expect((frames[0].events as StreamEvent[]).map((e) => (e.topic === 'trades' ? e.data.order : e.topic))).toEqual([
      'status',
      1,
      2,
    ]);
    expect(frames[0]).not.toHaveProperty('event');
    trade(3);
    await turn();
    expect(frames.map((f) => (f.events as StreamEvent[]).length)).toEqual([3, 1]);
    subs.close();
  });

  it(`splits a burst longer than ${MAX_STREAM_BATCH} events into frames of at most that many, keeping the order`, async () => {
    const { frames, subs, trade } = subscribed({ topics: ['trades'], batch: true });
    for (let order = 1; order <= 300; order++) trade(order);
    await turn();
    const lists = frames.map((f) => f.events as StreamEvent[]);
    expect(lists.map((l) => l.length)).toEqual([MAX_STREAM_BATCH, 301 - MAX_STREAM_BATCH]);
    const orders = lists
      .flat()
      .slice(1)
      .map((e) => (e.topic === 'trades' ? e.data.order : null));
    expect(orders).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    subs.close();
  });

  it('sends nothing after it ends, not even what its last turn gathered', async () => {
    const { frames, subs, trade } = subscribed({ topics: ['trades'], batch: true });
    trade(1);
    subs.handle({ id: 8, platform: 'p', op: '#unsubscribe', args: { sub: 7 }, timeoutMs: 1000 });
    await turn();
    expect(frames).toEqual([]);
  });

  it('is refused with a batch that is not true or false, and without batch sends one event a frame', async () => {
    const refused = subscribed({ topics: ['trades'], batch: 'yes' });
    expect(refused.answers).toEqual([
      { id: 7, ok: false, error: { code: 'Validation', managerCode: null, message: 'batch: must be true or false' } },
    ]);
    refused.trade(1);
    await turn();
    expect(refused.frames).toEqual([]);
    const single = subscribed({ topics: ['trades'] });
    single.trade(1);
    expect(single.frames).toEqual([
      { sub: 7, event: { topic: 'status', data: { connected: false } } },
      { sub: 7, event: expect.objectContaining({ topic: 'trades' }) },
    ]);
    single.subs.close();
  });
});

describe('PF5 margin-call events', () => {
  it('are shaped to exactly {login, type, direction}, whatever else the server sends', () => {
    const record = {
      login: 500123,
      group: 'real\\retail',
      type: 'StopOut',
      direction: 'Enter',
      time: '2026-01-01T00:00:00.000Z',
      marginLevel: 48.2,
      equity: 530.1,
      margin: 1100,
      password: 'Secret123',
      apiSecret: 'never-shown',
    };
    expect(streamEvent('PF5', { event: 'margin', op: 'add', record })).toEqual({
      topic: 'margin',
      data: { login: 500123, type: 'StopOut', direction: 'Enter' },
    });
    expect(
      streamEvent('PF5', { event: 'margin', op: 'add', record: { login: 7, type: 'MarginCall', direction: 'Leave' } }),
    ).toEqual({ topic: 'margin', data: { login: 7, type: 'MarginCall', direction: 'Leave' } });
  });

  it('leave out a record whose type or direction is not one a client is told about', () => {
    expect(
      streamEvent('PF5', { event: 'margin', op: 'add', record: { login: 7, type: 'Ok', direction: 'Enter' } }),
    ).toBeNull();
    expect(
      streamEvent('PF5', { event: 'margin', op: 'add', record: { login: 7, type: 'MarginCall', direction: 'Up' } }),
    ).toBeNull();
    expect(streamEvent('PF5', { event: 'margin', op: 'delete', record: { login: 7 } })).toBeNull();
  });

  it('reach a PF5 subscription that names margin, after the status, and no other', () => {
    const sent: Array<{ sub: number; event: StreamEvent }> = [];
    const sink = {
      send: (t: string) => {
        const f = JSON.parse(t);
        if (f.event) sent.push(f);
      },
      bufferedAmount: 0,
    };
    const events = new PlatformEvents('PF5');
    const subs = new StreamSubscriptions(sink, () => ({ family: 'PF5', events }), 1000);
    subs.handle({ id: 1, platform: 'p', op: '#subscribe', args: { topics: ['margin'] }, timeoutMs: 1000 });
    subs.handle({ id: 2, platform: 'p', op: '#subscribe', args: { topics: ['users'] }, timeoutMs: 1000 });
    events.onManagerEvent({
      event: 'margin',
      op: 'add',
      record: { login: 9, type: 'MarginCall', direction: 'Enter', equity: 1 },
    });
    const bySub = (n: number) => sent.filter((f) => f.sub === n).map((f) => f.event);
    const [first, second] = [...new Set(sent.map((f) => f.sub))];
    expect(bySub(first)).toEqual([
      { topic: 'status', data: { connected: false } },
      { topic: 'margin', data: { login: 9, type: 'MarginCall', direction: 'Enter' } },
    ]);
    expect(bySub(second)).toEqual([{ topic: 'status', data: { connected: false } }]);
    subs.close();
  });
});

describe('a subscription with a snapshot', () => {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  function subscribed(args: Record<string, unknown>, records: Array<Record<string, unknown>>) {
    const frames: Array<Record<string, unknown>> = [];
    const answers: Array<Record<string, unknown>> = [];
    const sink = {
      send: (t: string) => {
        const f = JSON.parse(t);
        (typeof f.sub === 'number' ? frames : answers).push(f);
      },
      bufferedAmount: 0,
    };
    const events = new PlatformEvents('PF4');
    const asked: Array<readonly string[]> = [];
    const snapshot = (topics: readonly string[]) => {
      asked.push(topics);
      return records.map((r) => streamEvent('PF4', { event: 'trades', op: 'add', record: r })!);
    };
    const subs = new StreamSubscriptions(sink, () => ({ family: 'PF4', events, snapshot }), 1000);
    const up = () => events.onManagerEvent({ event: 'resync', op: 'end', record: { counts: {} } });
    return {
      frames,
      answers,
      subs,
      events,
      asked,
      up,
      handle: () => subs.handle({ id: 7, platform: 'p', op: '#subscribe', args, timeoutMs: 1000 }),
    };
  }
  const kinds = (frames: Array<Record<string, unknown>>) =>
    frames.map((f) =>
      f.snapshot
        ? `snapshot ${(f.snapshot as { events: StreamEvent[] }).events.length}${(f.snapshot as { last: boolean }).last ? ' last' : ''}`
        : (f.events as StreamEvent[])
            .map((e) => (e.topic === 'status' ? `status ${String(e.data.connected)}` : e.topic))
            .join(','),
    );

  it('sends the records once the stream is whole, in parts, before the changes after them, and again after each return', async () => {
    const records = Array.from({ length: MAX_STREAM_BATCH + 10 }, (_, i) => ({
      order: i + 1,
      login: 7,
      symbol: 'EURUSD',
    }));
    const s = subscribed({ topics: ['trades'], batch: true, snapshot: true }, records);
    s.handle();
    await turn();
    // The session is down: no snapshot yet, only the status.
    expect(kinds(s.frames)).toEqual(['status false']);
    s.up();
    s.events.onManagerEvent({ event: 'trades', op: 'add', record: { order: 999, login: 7 } });
    await turn();
    expect(kinds(s.frames)).toEqual([
      'status false',
      'status true',
      `snapshot ${MAX_STREAM_BATCH}`,
      'snapshot 10 last',
      'trades',
    ]);
    const parts = s.frames.filter((f) => f.snapshot).flatMap((f) => (f.snapshot as { events: StreamEvent[] }).events);
    expect(parts[0]).toEqual({ topic: 'trades', data: { kind: 'Added', order: 1, login: 7, symbol: 'EURUSD' } });
    expect(parts.map((e) => (e.data as { order: number }).order)).toEqual(records.map((r) => r.order));
    expect(s.asked).toEqual([['trades']]);
    s.events.onSessionDown();
    s.up();
    await turn();
    // Down and up again in one turn: both statuses in one frame, then the records again.
    expect(kinds(s.frames).slice(5)).toEqual([
      'status false,status true',
      `snapshot ${MAX_STREAM_BATCH}`,
      'snapshot 10 last',
    ]);
    s.subs.close();
  });

  it('sends an empty last part for a platform without records, and none without asking', async () => {
    const empty = subscribed({ topics: ['trades'], batch: true, snapshot: true }, []);
    empty.up();
    empty.handle();
    await turn();
    expect(empty.frames.find((f) => f.snapshot)).toEqual({ sub: 7, snapshot: { events: [], last: true } });
    empty.subs.close();
    const plain = subscribed({ topics: ['trades'], batch: true }, [{ order: 1 }]);
    plain.up();
    plain.handle();
    await turn();
    expect(plain.frames.some((f) => f.snapshot)).toBe(false);
    expect(plain.asked).toEqual([]);
    plain.subs.close();
  });

  it('is refused with a snapshot that is not true or false', () => {
    const refused = subscribed({ topics: ['trades'], snapshot: 'yes' }, []);
    refused.handle();
    expect(refused.answers).toEqual([
      {
        id: 7,
        ok: false,
        error: { code: 'Validation', managerCode: null, message: 'snapshot: must be true or false' },
      },
    ]);
  });
});

describe('a PF4 trade closed by an update', () => {
  it('is told as removed, as the cache drops it from the open trades', () => {
    const closed = streamEvent('PF4', {
      event: 'trades',
      op: 'update',
      record: { order: 5, login: 7, tradeRecordState: 'ClosedNormal', closePrice: 1.2 },
    });
    expect(closed).toEqual({ topic: 'trades', data: { kind: 'Deleted', order: 5, login: 7, closePrice: 1.2 } });
    const open = streamEvent('PF4', {
      event: 'trades',
      op: 'update',
      record: { order: 5, tradeRecordState: 'OpenNormal' },
    });
    expect((open?.data as { kind?: string } | undefined)?.kind).toBe('Updated');
  });
});
