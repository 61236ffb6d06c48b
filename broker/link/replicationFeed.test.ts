/**
 * The broker side of edge replicas in-process: a real pumping cache and its feed, driven by manager events as a trade
 * platform drives them, and the frames one link's replications send. Checked: the answer to `#replicate` and its
 * refusals, the snapshot (tables that fit, rows as the broker's JSON, chunks, seq), changes per turn (last value once,
 * deletes as null, tables outside the replica left out), a resync as a new snapshot, a table growing past the bound
 * dropped, a replication replaced, a congested link and a removed platform stopping it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CallFrame } from '../../shared/frames.js';
import type { Family, ManagerEvent } from '../../shared/protocol.js';
import {
  REPLICA_CHUNK_ROWS,
  REPLICATE_OP,
  REPLICATED_OP,
  REPLICATED_TABLES,
  type ReplicaFrame,
} from '../../shared/replication.js';
import { CacheFeed } from '../cache/cacheFeed.js';
import { PumpCache } from '../cache/pumpCache.js';
import { recordJson } from '../cache/recordJson.js';
import { EdgeReplication, isReplicationOp, MAX_BUFFERED_BYTES, SNAPSHOT_PAUSE_BYTES } from './edgeReplication.js';
import { EdgeReplica, type ReplicaPlan } from '../../workers/gateway/edgeReplica.js';
import { until } from '../../test/support/until.js';

const usersPlan: ReplicaPlan = { kind: 'record', family: 'PF5', tables: ['users'], key: 'login', what: 'login' };

type Frame = Record<string, unknown>;

class Platform {
  readonly cache: PumpCache;
  readonly feed: CacheFeed;
  /** A read fence standing (TradePlatform.readFence), when a test sets one. */
  fence: Promise<void> | undefined;
  /** What the trading server's login declared (every kind unless a test narrows it). */
  readonly session: { declared?: { events: ReadonlySet<string> } } = {};
  readonly readFence = () => this.fence;
  constructor(readonly family: Family) {
    this.cache = new PumpCache(family);
    this.feed = new CacheFeed(family);
  }

  /** One manager event, as TradePlatform hands it on. */
  emit(event: ManagerEvent): void {
    this.cache.apply(event);
    this.feed.afterEvent(event);
  }

  resync(chunks: Record<string, unknown[]>): void {
    this.emit({ event: 'resync', op: 'begin', record: {} });
    for (const [kind, items] of Object.entries(chunks))
      this.emit({ event: 'resync', op: 'chunk', record: { kind, items } });
    this.emit({ event: 'resync', op: 'end', record: {} });
  }

  change(kind: string, op: 'add' | 'update' | 'delete', record: unknown): void {
    this.emit({ event: kind, op, record } as ManagerEvent);
  }
}

/**
 * A link that records what a replication sends: `sent` the frames as the other tests read them, without their
 * positions (`pos`) and without the frames that carry only a position (no changes), which `positions` keeps: the
 * position of every frame that names one, in order.
 */
function link(platforms: Record<string, Platform>) {
  const sent: Frame[] = [];
  const positions: Array<{ seq: unknown; pos: unknown; changes: number | null }> = [];
  const sink = {
    bufferedAmount: 0,
    send: (text: string) => {
      const { pos, ...frame } = JSON.parse(text) as Frame;
      const changes = Array.isArray(frame.changes) ? (frame.changes as unknown[]).length : null;
      if (pos !== undefined) positions.push({ seq: frame.seq, pos, changes });
      if (changes === 0) return;
      sent.push(frame);
    },
  };
  const replication = new EdgeReplication(sink, (id) => platforms[id]);
  let nextId = 1;
  const ask = (platform: string, args: unknown) => {
    const id = nextId++;
    replication.handle({ id, platform, op: REPLICATE_OP, args, timeoutMs: 5000 } as CallFrame);
    return id;
  };
  /** Sends a `#replicated` and answers the broker's answer to it (taken out of `sent`). */
  const acknowledge = (platform: string, rep: unknown, seq: unknown) => {
    const id = nextId++;
    replication.handle({ id, platform, op: REPLICATED_OP, args: { rep, seq }, timeoutMs: 5000 });
    const at = sent.findIndex((f) => f.id === id);
    const [answer] = sent.splice(at, 1);
    const { id: _id, ...rest } = answer;
    return rest;
  };
  return { sent, positions, sink, replication, ask, acknowledge };
}

const user = (login: number, name = `u${login}`) => ({ login, name, group: 'demo' });
/** The next turn of the event loop, where a replication flushes its changes. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe('#replicate', () => {
  it('is the replication operation', () => {
    expect(isReplicationOp(REPLICATE_OP)).toBe(true);
    expect(isReplicationOp('#subscribe')).toBe(false);
  });

  it('refuses arguments that are not an integer rep and a non-negative integer maxRows, and platforms not served', () => {
    const pf4 = new Platform('PF4');
    const l = link({ p4: pf4 });
    l.ask('p4', undefined);
    l.ask('p4', { rep: 1.5, maxRows: 10 });
    l.ask('p4', { rep: 1, maxRows: -1 });
    l.ask('p4', { rep: 1, maxRows: '10' });
    l.ask('p4', { maxRows: 10 });
    l.ask('p4', { rep: 1, maxRows: 10, window: 0 });
    l.ask('elsewhere', { rep: 1, maxRows: 10 });
    const malformed = {
      code: 'Internal',
      managerCode: null,
      message: 'malformed call frame: #replicate needs an integer rep and maxRows, and a window of at least 1 if any',
    };
    expect(l.sent).toStrictEqual([
      { id: 1, ok: false, error: malformed },
      { id: 2, ok: false, error: malformed },
      { id: 3, ok: false, error: malformed },
      { id: 4, ok: false, error: malformed },
      { id: 5, ok: false, error: malformed },
      { id: 6, ok: false, error: malformed },
      {
        id: 7,
        ok: false,
        error: { code: 'NotFound', managerCode: null, message: 'trade platform not served by this broker' },
      },
    ]);
    expect(l.replication.size).toBe(0);
    expect(pf4.feed.listenerCount).toBe(0);
  });

  it('sends its snapshot only once a read fence standing on the platform falls, with what the cache holds then', async () => {
    const pf4 = new Platform('PF4');
    pf4.resync({ users: [user(1)] });
    let fall!: () => void;
    pf4.fence = new Promise<void>((resolve) => {
      fall = resolve;
    });
    const l = link({ p4: pf4 });
    const id = l.ask('p4', { rep: 3, maxRows: 10 });
    expect(l.sent).toStrictEqual([{ id, ok: true, data: { rep: 3, tables: [...REPLICATED_TABLES.PF4] } }]);
    pf4.change('users', 'update', user(1, 'caught up'));
    fall();
    await nextTurn();
    const users = pf4.cache.table('users')!;
    expect(l.sent.slice(1)).toStrictEqual([
      {
        rep: 3,
        seq: 0,
        begin: {
          tables: [
            'users',
            'ticks',
            'symbolInfo',
            'symbolSessions',
            'groups',
            'groupSecurities',
            'trades',
            'closedTrades',
          ],
        },
      },
      { rep: 3, seq: 1, table: 'users', rows: [[1, recordJson(users.get(1)!)]] },
      { rep: 3, seq: 2, end: true },
    ]);
    expect(recordJson(users.get(1)!)).toContain('caught up');
  });

  it("answers with the replicated tables, then sends the snapshot of those that fit, rows as the broker's JSON", () => {
    const pf4 = new Platform('PF4');
    pf4.resync({
      users: [user(2), user(1)],
      ticks: [
        { symbol: 'EURUSD', bid: 1, ask: 2 },
        { symbol: 'GBPUSD', bid: 3, ask: 4 },
        { symbol: 'USDJPY', bid: 5, ask: 6 },
      ],
    });
    const l = link({ p4: pf4 });
    const id = l.ask('p4', { rep: 7, maxRows: 2 });
    const users = pf4.cache.table('users')!;
    expect(l.sent).toStrictEqual([
      { id, ok: true, data: { rep: 7, tables: [...REPLICATED_TABLES.PF4] } },
      // ticks has 3 rows, over the bound of 2: not in the replica.
      {
        rep: 7,
        seq: 0,
        begin: {
          tables: ['users', 'symbolInfo', 'symbolSessions', 'groups', 'groupSecurities', 'trades', 'closedTrades'],
        },
      },
      {
        rep: 7,
        seq: 1,
        table: 'users',
        rows: [
          [2, recordJson(users.get(2)!)],
          [1, recordJson(users.get(1)!)],
        ],
      },
      { rep: 7, seq: 2, end: true },
    ]);
    expect(l.replication.size).toBe(1);
    expect(pf4.feed.listenerCount).toBe(1);
  });

  it("leaves out the tables filled by event kinds the trading server's login did not declare", () => {
    const pf4 = new Platform('PF4');
    pf4.session.declared = { events: new Set(['users', 'ticks', 'symbolInfo', 'symbolSessions']) };
    pf4.resync({ users: [user(1)] });
    const l = link({ p4: pf4 });
    l.ask('p4', { rep: 5, maxRows: 10 });
    // No groups events: neither groups nor the securities taken from them are replicated, so their reads go to the broker.
    expect(l.sent[1]).toStrictEqual({
      rep: 5,
      seq: 0,
      begin: { tables: ['users', 'ticks', 'symbolInfo', 'symbolSessions'] },
    });
  });

  it('sends a table of more rows than a chunk holds in chunks', () => {
    const pf5 = new Platform('PF5');
    const logins = Array.from({ length: REPLICA_CHUNK_ROWS + 3 }, (_, i) => i + 1);
    pf5.resync({ users: logins.map((login) => ({ login, name: `n${login}` })) });
    const l = link({ p5: pf5 });
    l.ask('p5', { rep: 1, maxRows: 10_000 });
    const frames = l.sent.slice(1);
    expect(frames.map((f) => Object.keys(f).filter((k) => k !== 'rep' && k !== 'seq')[0])).toStrictEqual([
      'begin',
      'table',
      'table',
      'end',
    ]);
    expect(frames.map((f) => f.seq)).toStrictEqual([0, 1, 2, 3]);
    expect((frames[1].rows as unknown[]).length).toBe(REPLICA_CHUNK_ROWS);
    expect((frames[2].rows as Array<[number, string]>).map((r) => r[0])).toStrictEqual(
      logins.slice(REPLICA_CHUNK_ROWS),
    );
    expect(frames[0]).toStrictEqual({
      rep: 1,
      seq: 0,
      begin: { tables: ['users', 'symbols', 'groups', 'positions', 'orders'] },
    });
  });

  it('sends a large snapshot a part at a time while the link is full, the changes made meanwhile just before its end', async () => {
    const pf5 = new Platform('PF5');
    const logins = Array.from({ length: 3 * REPLICA_CHUNK_ROWS }, (_, i) => i + 1);
    pf5.resync({ users: logins.map((login) => ({ login, name: `n${login}` })) });
    const l = link({ p5: pf5 });
    l.sink.bufferedAmount = SNAPSHOT_PAUSE_BYTES + 1;
    l.ask('p5', { rep: 1, maxRows: 10_000 });
    // The first chunk went out; the rest waits for the link's buffer to drain.
    expect(l.sent.slice(1).map((f) => Object.keys(f).find((k) => k !== 'rep' && k !== 'seq'))).toStrictEqual([
      'begin',
      'table',
    ]);
    pf5.change('users', 'update', { login: 1, name: 'sent, then changed' });
    pf5.change('users', 'delete', { login: 2 * REPLICA_CHUNK_ROWS + 5 });
    pf5.change('users', 'add', { login: 9999, name: 'new' });
    await nextTurn();
    expect(l.sent).toHaveLength(3);
    l.sink.bufferedAmount = 0;
    await until(() => l.sent.some((f) => f.end === true), 'the snapshot end');
    const frames = l.sent.slice(1);
    expect(frames.map((f) => f.seq)).toStrictEqual([0, 1, 2, 3, 4, 5]);
    const users = pf5.cache.table('users')!;
    expect(frames[4]).toStrictEqual({
      rep: 1,
      seq: 4,
      changes: [
        ['users', 1, users.json(1)],
        ['users', 2 * REPLICA_CHUNK_ROWS + 5, null],
        ['users', 9999, users.json(9999)],
      ],
    });
    expect(frames[5]).toStrictEqual({ rep: 1, seq: 5, end: true });
    // Only the end names a position: the replica is whole and current there.
    expect(l.positions.map((p) => p.seq)).toStrictEqual([5]);
    const replica = new EdgeReplica('PF5', 10_000);
    replica.expect(1);
    for (const f of frames) expect(replica.apply(f as unknown as ReplicaFrame)).toBe(true);
    expect(replica.stats().tables.users).toBe(users.size);
    for (const login of [1, 2, 2 * REPLICA_CHUNK_ROWS + 5, 9999])
      expect(replica.read(usersPlan, { login })).toStrictEqual(
        users.json(login) === undefined
          ? expect.objectContaining({ ok: false })
          : { ok: true, dataJson: users.json(login) },
      );
  });

  it('keeps at most its window of rows frames unacknowledged, going on as the edge acknowledges them', () => {
    const pf5 = new Platform('PF5');
    const logins = Array.from({ length: 5 * REPLICA_CHUNK_ROWS }, (_, i) => i + 1);
    pf5.resync({ users: logins.map((login) => ({ login, name: `n${login}` })) });
    const l = link({ p5: pf5 });
    l.ask('p5', { rep: 3, maxRows: 10_000, window: 2 });
    const kinds = () => l.sent.slice(1).map((f) => Object.keys(f).find((k) => k !== 'rep' && k !== 'seq'));
    expect(kinds()).toStrictEqual(['begin', 'table', 'table']);
    // An acknowledgement of another replication, or of a frame before the rows, lets nothing more go.
    expect(l.acknowledge('p5', 2, 99)).toStrictEqual({ ok: true, data: null });
    l.acknowledge('p5', 3, 0);
    expect(kinds()).toHaveLength(3);
    l.acknowledge('p5', 3, 1);
    expect(kinds()).toStrictEqual(['begin', 'table', 'table', 'table']);
    l.acknowledge('p5', 3, 3);
    expect(kinds()).toStrictEqual(['begin', 'table', 'table', 'table', 'table', 'table']);
    l.acknowledge('p5', 3, 5);
    expect(kinds()).toStrictEqual(['begin', 'table', 'table', 'table', 'table', 'table', 'end']);
    const rows = l.sent.slice(1).flatMap((f) => (f.rows as Array<[number, string]> | undefined) ?? []);
    expect(rows.map((r) => r[0])).toStrictEqual(logins);
    // Without a window the same snapshot goes out whole at once.
    const whole = link({ p5: pf5 });
    whole.ask('p5', { rep: 1, maxRows: 10_000 });
    expect(whole.sent.at(-1)).toMatchObject({ end: true });
    expect(l.acknowledge('p5', 'x', 1)).toMatchObject({
      ok: false,
      error: { message: 'malformed call frame: #replicated needs an integer rep and seq' },
    });
  });

  it('drops a table whose key JSON cannot carry from the snapshot', () => {
    const pf5 = new Platform('PF5');
    pf5.resync({
      users: [
        { login: 1, name: 'a' },
        { login: 2n ** 60n, name: 'big' },
        { login: 3, name: 'c' },
      ],
      symbols: [{ symbol: 'EURUSD' }],
    });
    const l = link({ p5: pf5 });
    l.ask('p5', { rep: 2, maxRows: 100 });
    const frames = l.sent.slice(1);
    expect(frames[0]).toStrictEqual({
      rep: 2,
      seq: 0,
      begin: { tables: ['users', 'symbols', 'groups', 'positions', 'orders'] },
    });
    expect(frames[1]).toStrictEqual({ rep: 2, seq: 1, drop: 'users' });
    expect(frames[2]).toMatchObject({ rep: 2, seq: 2, table: 'symbols' });
    expect(frames[3]).toStrictEqual({ rep: 2, seq: 3, end: true });
    expect(frames).toHaveLength(4);
  });

  it('waits for the first snapshot of a cache that is not ready, and sends it once', async () => {
    const pf4 = new Platform('PF4');
    const l = link({ p4: pf4 });
    l.ask('p4', { rep: 3, maxRows: 100 });
    expect(l.sent).toHaveLength(1);
    // Changes before the snapshot are part of it, not sent apart.
    pf4.change('users', 'add', user(1));
    pf4.resync({ users: [user(5)] });
    await nextTurn();
    const frames = l.sent.slice(1);
    expect(frames.filter((f) => 'begin' in f)).toHaveLength(1);
    expect(frames.find((f) => f.table === 'users')).toStrictEqual({
      rep: 3,
      seq: 1,
      table: 'users',
      rows: [[5, recordJson(pf4.cache.get('users', 5)!)]],
    });
    expect(frames.some((f) => 'changes' in f)).toBe(false);
  });
});

describe('changes', () => {
  function replicated(maxRows = 100) {
    const pf4 = new Platform('PF4');
    pf4.resync({
      users: [user(1), user(2)],
      online: [{ login: 1 }],
      symbolInfo: [{ symbol: 'EURUSD', bid: 1, ask: 2, point: 0.5 }],
    });
    const l = link({ p4: pf4 });
    l.ask('p4', { rep: 4, maxRows });
    const snapshot = l.sent.length;
    return { pf4, l, frames: () => l.sent.slice(snapshot) };
  }

  it("carries the cache's position on the snapshot's end and on each turn's frame, one that moved only tables not replicated included", async () => {
    const { pf4, l } = replicated();
    const at = pf4.feed.position()!;
    expect(at).toMatchObject({ count: 0 });
    expect(l.positions).toStrictEqual([{ seq: 3, pos: `${at.epoch}-0`, changes: null }]);
    pf4.change('users', 'update', user(1, 'again'));
    pf4.change('online', 'add', { login: 12 });
    await nextTurn();
    // Two events applied: the frame of the turn is at count 2.
    expect(l.positions[1]).toStrictEqual({ seq: 4, pos: `${at.epoch}-2`, changes: 1 });
    pf4.change('online', 'add', { login: 13 });
    await nextTurn();
    expect(l.positions[2]).toStrictEqual({ seq: 5, pos: `${at.epoch}-3`, changes: 0 });
    await nextTurn();
    expect(l.positions).toHaveLength(3);
  });

  it("sends one turn's changes in one frame, a key changed twice once with its last value, a delete as null", async () => {
    const { pf4, frames } = replicated();
    pf4.change('users', 'update', user(1, 'first'));
    pf4.change('users', 'update', user(1, 'last'));
    pf4.change('users', 'delete', { login: 2 });
    pf4.change('online', 'add', { login: 11 });
    pf4.change('ticks', 'update', { symbol: 'EURUSD', bid: 1.5, ask: 2.5, time: '2024-01-01T00:00:00Z' });
    expect(frames()).toStrictEqual([]);
    await nextTurn();
    expect(frames()).toStrictEqual([
      {
        rep: 4,
        seq: 4,
        changes: [
          ['users', 1, recordJson(pf4.cache.get('users', 1)!)],
          ['users', 2, null],
          ['ticks', 'EURUSD', recordJson(pf4.cache.get('ticks', 'EURUSD')!)],
          ['symbolInfo', 'EURUSD', recordJson(pf4.cache.get('symbolInfo', 'EURUSD')!)],
        ],
      },
    ]);
    expect(JSON.parse((frames()[0].changes as Array<[string, number, string]>)[0][2])).toMatchObject({ name: 'last' });
    pf4.change('users', 'add', user(3));
    await nextTurn();
    expect(frames()[1]).toStrictEqual({
      rep: 4,
      seq: 5,
      changes: [['users', 3, recordJson(pf4.cache.get('users', 3)!)]],
    });
    await nextTurn();
    expect(frames()).toHaveLength(2);
  });

  it('sends a new snapshot after a resync, pending changes included in it', async () => {
    const { pf4, frames } = replicated();
    pf4.change('users', 'update', user(1, 'pending'));
    pf4.resync({ users: [user(8)] });
    await nextTurn();
    const after = frames();
    expect(after[0]).toStrictEqual({
      rep: 4,
      seq: 4,
      begin: {
        tables: [
          'users',
          'ticks',
          'symbolInfo',
          'symbolSessions',
          'groups',
          'groupSecurities',
          'trades',
          'closedTrades',
        ],
      },
    });
    expect(after[1]).toStrictEqual({
      rep: 4,
      seq: 5,
      table: 'users',
      rows: [[8, recordJson(pf4.cache.get('users', 8)!)]],
    });
    expect(after[2]).toStrictEqual({ rep: 4, seq: 6, end: true });
    expect(after).toHaveLength(3);
  });

  it("drops a table that grows past the bound, after sending the other tables' changes, and follows it no more", async () => {
    const { pf4, frames } = replicated(2);
    pf4.change('ticks', 'add', { symbol: 'EURUSD', bid: 1, ask: 2 });
    pf4.change('users', 'add', user(3));
    pf4.change('ticks', 'add', { symbol: 'GBPUSD', bid: 1, ask: 2 });
    await nextTurn();
    expect(frames()).toStrictEqual([
      // The changes collected before the table that went over the bound, then its drop.
      {
        rep: 4,
        seq: 4,
        changes: [
          ['ticks', 'EURUSD', recordJson(pf4.cache.get('ticks', 'EURUSD')!)],
          ['ticks', 'GBPUSD', recordJson(pf4.cache.get('ticks', 'GBPUSD')!)],
          ['symbolInfo', 'EURUSD', recordJson(pf4.cache.get('symbolInfo', 'EURUSD')!)],
          ['symbolInfo', 'GBPUSD', null],
        ],
      },
      { rep: 4, seq: 5, drop: 'users' },
    ]);
    pf4.change('users', 'delete', { login: 3 });
    pf4.change('users', 'update', user(1, 'x'));
    await nextTurn();
    expect(frames()).toHaveLength(2);
  });

  it('stops a replication whose link buffers too much, with the reason, and sends nothing more', async () => {
    const { pf4, l, frames } = replicated();
    pf4.change('users', 'update', user(1, 'x'));
    l.sink.bufferedAmount = MAX_BUFFERED_BYTES;
    await nextTurn();
    expect(frames()).toHaveLength(1);
    expect(frames()[0]).toMatchObject({ rep: 4, seq: 4, changes: [['users', 1, expect.any(String)]] });
    pf4.change('users', 'update', user(1, 'y'));
    l.sink.bufferedAmount = MAX_BUFFERED_BYTES + 1;
    await nextTurn();
    expect(frames()[1]).toStrictEqual({
      rep: 4,
      seq: 5,
      stop: 'the edge link is not keeping up with the change stream',
    });
    expect(l.replication.size).toBe(0);
    expect(pf4.feed.listenerCount).toBe(0);
    l.sink.bufferedAmount = 0;
    pf4.change('users', 'update', user(1, 'z'));
    pf4.resync({ users: [user(1)] });
    await nextTurn();
    expect(frames()).toHaveLength(2);
  });

  it('does not start the snapshot on a congested link', () => {
    const pf4 = new Platform('PF4');
    pf4.resync({ users: [user(1)] });
    const l = link({ p4: pf4 });
    l.sink.bufferedAmount = MAX_BUFFERED_BYTES + 1;
    l.ask('p4', { rep: 9, maxRows: 10 });
    expect(l.sent.slice(1)).toStrictEqual([
      { rep: 9, seq: 0, stop: 'the edge link is not keeping up with the change stream' },
    ]);
    expect(l.replication.size).toBe(0);
  });

  it('stops when the platform goes away', async () => {
    const { pf4, l, frames } = replicated();
    pf4.change('users', 'update', user(1, 'x'));
    pf4.feed.close();
    await nextTurn();
    expect(frames()).toStrictEqual([{ rep: 4, seq: 4, stop: 'the trade platform is no longer served' }]);
    expect(l.replication.size).toBe(0);
  });

  it("replaces a platform's replication with a new one silently, and ends all of them when the link closes", async () => {
    const { pf4, l, frames } = replicated();
    const pf5 = new Platform('PF5');
    pf5.resync({ users: [{ login: 1 }] });
    l.sent.length = 0;
    pf4.change('users', 'update', user(1, 'before'));
    l.ask('p4', { rep: 5, maxRows: 100 });
    expect(l.replication.size).toBe(1);
    expect(pf4.feed.listenerCount).toBe(1);
    await nextTurn();
    // The old one (rep 4) sends nothing more, not even its pending change.
    expect(l.sent.every((f) => f.rep !== 4)).toBe(true);
    expect(l.sent.filter((f) => 'begin' in f)).toHaveLength(1);
    expect(frames).toBeDefined();
    const withPf5 = link({ p4: pf4, p5: pf5 });
    withPf5.ask('p4', { rep: 1, maxRows: 100 });
    withPf5.ask('p5', { rep: 1, maxRows: 100 });
    expect(withPf5.replication.size).toBe(2);
    const before = withPf5.sent.length;
    withPf5.replication.close();
    expect(withPf5.replication.size).toBe(0);
    expect(pf5.feed.listenerCount).toBe(0);
    expect(pf4.feed.listenerCount).toBe(1);
    pf5.change('users', 'update', { login: 1, name: 'z' });
    await nextTurn();
    expect(withPf5.sent.length).toBe(before);
  });
});
