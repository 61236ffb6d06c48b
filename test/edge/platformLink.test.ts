/**
 * The link object (workers/gateway/platformLink.ts) driven over RPC in workerd against scripted brokers, on a clock
 * the test moves (test/support/workers/linkHarness.ts): its counters, keyed sends and the routes of their late outcomes,
 * outcome queries, a platform moving to another broker, and the edge replica it keeps (when it asks for a
 * replication, how long it waits after a refusal or a gap, what it answers itself).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { CallFrame, LateFrame } from '../../shared/frames.js';
import {
  DEFAULT_REPLICA_MAX_ROWS,
  DEFAULT_REPLICA_STORED_ROWS,
  REPLICA_WINDOW_FRAMES,
  REPLICATE_OP,
  REPLICATED_OP,
} from '../../shared/replication.js';
import type {
  BrokerSetStats,
  GatewayCall,
  GatewayResponse,
  KeyedSend,
  LinkAnswer,
  LinkResponse,
  LinkStats,
  OutcomeAnswer,
} from '../../workers/gateway/messages.js';
import { linkName } from '../../workers/gateway/names.js';
import { startTestingWorker, type TestingWorker } from '../support/testingWorker.js';
import { BROKER_SECRET, startFakeBroker, type FakeBroker, type Reply } from './gatewayFakeBroker.js';
import { until } from '../support/until.js';
import { LOCAL_HOME } from '../support/edge.js';
import type { Placement } from '../../workers/regions/placement.js';

interface LinkObject {
  call(input: GatewayCall): Promise<LinkResponse>;
  send(input: KeyedSend): Promise<LinkAnswer>;
  outcome(q: {
    brokerUrls: string[];
    platform: string;
    callId: string;
    timeoutMs: number;
    place: Placement;
  }): Promise<OutcomeAnswer>;
  stats(): Promise<LinkStats>;
  retarget(brokerUrls: string[]): Promise<void>;
  brokerStats(): Promise<BrokerSetStats | null>;
  advanceClock(ms: number): Promise<number>;
  callOrThrown(input: GatewayCall): Promise<{ answer: GatewayResponse } | { thrown: string }>;
}

type LateReport = LateFrame['late']['report'];

interface LedgerObject {
  received(): Promise<Array<{ callId: string; report: LateReport }>>;
  total(): Promise<number>;
}

const MINUTE = 60_000;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
/** A live read that no replica answers, and one that is, and one whose answer is paged. */
const LIVE = { operationId: 'v2.PF4.UserRecordRequest', op: 'PF4.UserRecordRequest' };
const CACHED = { operationId: 'v2.PF4.UserRecordGet', op: 'PF4.UserRecordGet' };
const PAGED = { operationId: 'v2.PF4.UsersRequest', op: 'PF4.UsersRequest' };
/** Hangs at every broker of this file. */
const HANGING = { operationId: 'v2.PF4.MarginLevelRequest', op: 'PF4.MarginLevelRequest' };
/** Registry Ping: a call with no family. */
const PING = { operationId: 'registry.Registry.Ping', op: 'Ping' };

/** The keyed sends' broker answers, picked by `args.answer`. */
const TIMED_OUT: Reply = {
  ok: false,
  error: { code: 'NoConnect', managerCode: null, message: 'no answer from the trading platform within 5 s' },
  timedOut: true,
  outcome: 'unknown',
};
const SENT_OK: Reply = { ok: true, data: { login: 1001 } };
const REFUSED: Reply = { ok: false, error: { code: 'Validation', managerCode: null, message: 'body.name: required' } };
const ANSWERS: Record<string, Reply> = { unknown: TIMED_OUT, ok: SENT_OK, invalid: REFUSED };
const LATE_REPORT: LateReport = { state: 'settled', result: { ok: true, data: { login: 1002 } } };

let worker: TestingWorker;
/** Answers every call (the read ops, keyed sends) and refuses replications; `HANGING` never answers. */
let broker: FakeBroker;
/** The broker a platform moves to. */
let other: FakeBroker;
const extraBrokers: FakeBroker[] = [];

/** Workers beside the first one, by their replica bounds (their parsing is unit-tested in shared/environment.test.ts). */
const ROW_BOUNDS: Record<string, Record<string, string>> = {
  noReplica: { EDGE_REPLICA_MAX_ROWS: '0' },
  mostRows: { EDGE_REPLICA_MAX_ROWS: '100000', EDGE_REPLICA_STORED_ROWS: '0' },
};

function scriptReads(b: FakeBroker): void {
  b.script.set(LIVE.op, { reply: { ok: true, data: { login: 5, name: 'live' } } });
  b.script.set(CACHED.op, { reply: { ok: true, data: { login: 5, name: 'from the broker' } } });
  b.script.set(PAGED.op, { reply: { ok: true, paging: { nextCursor: 'c1', hasMore: true }, data: [{ login: 5 }] } });
  b.script.set(PING.op, { reply: { ok: true, data: { broker: 'fake' } } });
  b.script.set(HANGING.op, { hang: true });
}

beforeAll(async () => {
  broker = await startFakeBroker();
  other = await startFakeBroker();
  for (const b of [broker, other]) scriptReads(b);
  broker.script.set('PF4.UserRecordNew', { reply: (frame) => ANSWERS[(frame.args as { answer: string }).answer] });
  broker.script.set('PF4.CfgUpdateCommon', { reply: TIMED_OUT, late: { afterMs: 20, report: LATE_REPORT } });
  broker.script.set('PF4.CfgUpdateTime', { reply: SENT_OK, late: { afterMs: 0, report: LATE_REPORT } });
  const entry = (name: string, extra: Record<string, string>, sqlite = true) => ({
    name,
    bindings: { BROKER_SECRET, LINKS_PER_PLATFORM: '3', ...extra },
    durableObjects: {
      LINKS: { className: 'ClockedLink', useSQLite: sqlite },
      IDEMPOTENCY: { className: 'RecordingLedger', useSQLite: true },
    },
  });
  worker = await startTestingWorker('linkHarness.ts', [
    entry('link', {}),
    ...Object.entries(ROW_BOUNDS).map(([name, bounds]) => entry(name, bounds)),
    // Link objects without SQL storage: replicas keep to the memory bound.
    entry('noStorage', {}, false),
  ]);
}, 60_000);
afterAll(async () => {
  await worker?.close();
  for (const b of [broker, other, ...extraBrokers]) await b?.close();
});

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Link object `n` of a platform (of the first worker unless `workerName` names another). */
function linkObject(platform: string, n = 0, workerName?: string): Promise<LinkObject> {
  return worker.object<LinkObject>('LINKS', linkName(platform, LOCAL_HOME.region, n), workerName);
}
const ledgerObject = (name: string) => worker.object<LedgerObject>('IDEMPOTENCY', name);
const statsOf = async (link: LinkObject) => plain(await link.stats());

function call(
  op: { operationId: string; op: string },
  platform: string,
  brokerUrl: string,
  over: Partial<GatewayCall> = {},
): GatewayCall {
  return {
    ...op,
    platform,
    family: op === PING ? null : 'PF4',
    args: { login: 5 },
    timeoutMs: 5_000,
    traceId: TRACE,
    brokerUrls: [brokerUrl],
    mutating: false,
    home: LOCAL_HOME,
    place: LOCAL_HOME,
    ...over,
  };
}

function keyed(platform: string, answer: string, over: Partial<KeyedSend> = {}): KeyedSend {
  return {
    platform,
    op: 'PF4.UserRecordNew',
    args: { answer },
    timeoutMs: 5_000,
    traceId: TRACE,
    brokerUrls: [broker.url],
    callId: randomUUID(),
    ledger: 'client-a#3',
    home: LOCAL_HOME,
    ...over,
  };
}

/** The v2 envelope of a success, as a link object answers it. */
function v2Ok(data: unknown, paging?: { nextCursor: string | null; hasMore: boolean }): GatewayResponse {
  const meta = paging ? { activityId: TRACE, paging } : { activityId: TRACE };
  return { status: 200, body: JSON.stringify({ data, error: null, meta }), headers: {} };
}

function v2Failure(code: string, message: string): GatewayResponse {
  return {
    status: 200,
    body: JSON.stringify({ data: null, error: { code, managerCode: null, message }, meta: { activityId: TRACE } }),
    headers: {},
  };
}

const FRESH: LinkStats = {
  calls: 0,
  pending: 0,
  connected: false,
  lateRoutes: 0,
  viaHome: 0,
  positionWaits: 0,
  replica: null,
};
/** A replica that has asked for a replication and holds nothing (refused, or not whole yet). */
const EMPTY_REPLICA = {
  inSync: false,
  tables: {},
  chars: 0,
  stored: [],
  answered: 0,
  snapshots: 0,
  lost: 0,
  position: null,
};
/** The calls a broker took for a platform, the acknowledgements of replication frames (`#replicated`) left out. */
const framesOf = (b: FakeBroker, platform: string) =>
  b.frames.filter((f) => f.platform === platform && f.op !== REPLICATED_OP);
const replicationsOf = (b: FakeBroker, platform: string) => b.replicateFrames.filter((f) => f.platform === platform);

describe("a link object's counters", () => {
  it('start at nothing, count each call, keyed send and outcome query, and show a call hanging at the broker', async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    expect(await statsOf(link)).toStrictEqual(FRESH);

    expect(
      plain(
        await link.callOrThrown(
          call({ operationId: 'v2.PF4.NoSuchOperation', op: 'PF4.NoSuchOperation' }, platform, broker.url),
        ),
      ),
    ).toStrictEqual({ thrown: 'unknown operation v2.PF4.NoSuchOperation' });
    expect(framesOf(broker, platform)).toStrictEqual([]);
    expect(await statsOf(link)).toStrictEqual(FRESH);

    expect(plain(await link.call(call(PING, platform, broker.url)))).toStrictEqual({
      status: 200,
      body: '{"broker":"fake"}',
      headers: {},
    });
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 1, connected: true });
    expect(plain(await link.send(keyed(platform, 'ok')))).toStrictEqual(SENT_OK);
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 2, connected: true });
    broker.script.delete('#outcome');
    expect(
      plain(
        await link.outcome({
          brokerUrls: [broker.url],
          platform,
          callId: randomUUID(),
          timeoutMs: 100,
          place: LOCAL_HOME,
        }),
      ),
    ).toStrictEqual({ state: 'unreachable', message: 'the broker answered an outcome query with something else' });
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 3, connected: true });

    const hanging = link.call(call(HANGING, platform, broker.url, { family: null, timeoutMs: 20_000 }));
    expect(
      await until(async () => {
        const s = await statsOf(link);
        return s.pending === 1 && s;
      }, 'pending call'),
    ).toStrictEqual({ ...FRESH, calls: 4, pending: 1, connected: true });
    // Closing the link answers it at once.
    await link.retarget([other.url]);
    expect(plain(await hanging)).toStrictEqual(v2Failure('NoConnect', 'broker link closed'));
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 4 });
    // A call with no family keeps no replica, and the broker answers it.
    expect(replicationsOf(broker, platform)).toStrictEqual([]);
    expect(framesOf(broker, platform).map((f) => f.op)).toStrictEqual(['Ping', 'PF4.UserRecordNew', HANGING.op]);
  });

  it('show a replica once a read it could answer comes, none for live reads, and none on a worker with replicas off', async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    expect(plain(await link.call(call(LIVE, platform, broker.url)))).toStrictEqual(v2Ok({ login: 5, name: 'live' }));
    const [frame] = framesOf(broker, platform);
    expect(frame).toStrictEqual({
      platform,
      op: LIVE.op,
      args: { login: 5 },
      timeoutMs: 5_000,
      traceId: TRACE,
      id: expect.any(Number),
    });
    // A live read alone takes no snapshot of the platform.
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 1, connected: true });
    expect(replicationsOf(broker, platform)).toHaveLength(0);
    expect(plain(await link.call(call(CACHED, platform, broker.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    // This broker refuses replications: the replica holds nothing.
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 2, connected: true, replica: EMPTY_REPLICA });

    const off = await linkObject(platform, 0, 'noReplica');
    expect(plain(await off.call(call(CACHED, platform, broker.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    expect(await statsOf(off)).toStrictEqual({ ...FRESH, calls: 1, connected: true });
    expect(replicationsOf(broker, platform)).toHaveLength(1);
  });

  it("shape a paged answer with the broker's paging", async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    expect(plain(await link.call(call(PAGED, platform, broker.url, { args: { limit: 1 } })))).toStrictEqual(
      v2Ok([{ login: 5 }], { nextCursor: 'c1', hasMore: true }),
    );
  });

  it('answer a large answer sent as a binary frame as bytes: the same bytes as its text, v2 paged and v1', async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    const rows = Array.from({ length: 200 }, (_, i) => ({
      order: i + 1,
      symbol: 'EURUSD',
      comment: `é ${'x'.repeat(100)}`,
    }));
    const paging = { nextCursor: 'MjAw', hasMore: true };
    const reply = (f: CallFrame): Reply => (f.args.limit ? { ok: true, paging, data: rows } : { ok: true, data: rows });
    broker.script.set('PF4.TradesGet', { binary: true, reply });
    const trades = (generation: string) => ({ operationId: `${generation}.PF4.TradesGet`, op: 'PF4.TradesGet' });
    const v2 = await link.call(call(trades('v2'), platform, broker.url, { args: { limit: 200 } }));
    const v1 = await link.call(call(trades('v1'), platform, broker.url, { args: {} }));
    for (const answer of [v2, v1]) expect(answer.body).toBeInstanceOf(Uint8Array);
    const text = (r: LinkResponse) => ({ ...r, body: new TextDecoder().decode(r.body as Uint8Array) });
    expect(text(v2)).toStrictEqual(v2Ok(rows, paging));
    expect(text(v1)).toStrictEqual({ status: 200, body: JSON.stringify(rows), headers: {} });
  });

  it('ask for replications bounded by what their storage holds, or by EDGE_REPLICA_MAX_ROWS without storage', async () => {
    const platform = randomUUID();
    await (await linkObject(platform, 0)).call(call(CACHED, platform, broker.url));
    expect(plain(replicationsOf(broker, platform).map((f) => f.args))).toStrictEqual([
      { rep: 1, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
    ]);
    const other = randomUUID();
    await (await linkObject(other, 0, 'mostRows')).call(call(CACHED, other, broker.url));
    expect(plain(replicationsOf(broker, other).map((f) => f.args))).toStrictEqual([
      { rep: 1, maxRows: 100_000, window: REPLICA_WINDOW_FRAMES },
    ]);
    // An object that is not SQLite-backed answers as before and asks for tables within its memory bound.
    const third = randomUUID();
    const plainLink = await linkObject(third, 0, 'noStorage');
    expect(plain(await plainLink.call(call(CACHED, third, broker.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    expect(plain(replicationsOf(broker, third).map((f) => f.args))).toStrictEqual([
      { rep: 1, maxRows: DEFAULT_REPLICA_MAX_ROWS, window: REPLICA_WINDOW_FRAMES },
    ]);
  });
});

describe('keyed sends', () => {
  it('keep the route of a late outcome only for an answer whose outcome is unknown', async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    expect(plain(await link.send(keyed(platform, 'ok')))).toStrictEqual(SENT_OK);
    expect((await statsOf(link)).lateRoutes).toBe(0);
    expect(plain(await link.send(keyed(platform, 'invalid')))).toStrictEqual(REFUSED);
    expect((await statsOf(link)).lateRoutes).toBe(0);
    const input = keyed(platform, 'unknown');
    expect(plain(await link.send(input))).toStrictEqual(TIMED_OUT);
    expect((await statsOf(link)).lateRoutes).toBe(1);
    await link.send(keyed(platform, 'unknown'));
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 4, connected: true, lateRoutes: 2 });
    const [, , sent] = framesOf(broker, platform);
    expect(sent).toStrictEqual({
      platform,
      op: 'PF4.UserRecordNew',
      args: { answer: 'unknown' },
      timeoutMs: 5_000,
      traceId: TRACE,
      callId: input.callId,
      id: expect.any(Number),
    });
  });

  it('drop a route five minutes after its send, on the next send', async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    await link.send(keyed(platform, 'unknown'));
    await link.send(keyed(platform, 'unknown'));
    expect((await statsOf(link)).lateRoutes).toBe(2);
    await link.advanceClock(4 * MINUTE);
    await link.send(keyed(platform, 'unknown'));
    expect((await statsOf(link)).lateRoutes).toBe(3);
    // The first two are past five minutes, the third is not.
    await link.advanceClock(MINUTE + 1);
    await link.send(keyed(platform, 'unknown'));
    expect((await statsOf(link)).lateRoutes).toBe(2);
    await link.advanceClock(5 * MINUTE + 1);
    await link.send(keyed(platform, 'ok'));
    expect((await statsOf(link)).lateRoutes).toBe(0);
    await link.send(keyed(platform, 'unknown'));
    await link.advanceClock(5 * MINUTE + 1);
    await link.send(keyed(platform, 'unknown'));
    expect((await statsOf(link)).lateRoutes).toBe(1);
  });

  it('hand a late outcome to the ledger named in the send, once', async () => {
    const platform = randomUUID();
    const ledgerName = `client-${randomUUID()}#7`;
    const ledger = await ledgerObject(ledgerName);
    const link = await linkObject(platform);
    const input = keyed(platform, '', { op: 'PF4.CfgUpdateCommon', ledger: ledgerName });
    expect(plain(await link.send(input))).toStrictEqual(TIMED_OUT);
    const received = await until(async () => {
      const r = plain(await ledger.received());
      return r.length > 0 && r;
    }, 'late outcome');
    expect(received).toStrictEqual([{ callId: input.callId, report: LATE_REPORT }]);
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 1, connected: true });
  });

  it('hand on no late outcome of a send whose answer left none open', async () => {
    const platform = randomUUID();
    const ledgerName = `client-${randomUUID()}#1`;
    const ledger = await ledgerObject(ledgerName);
    const total = await ledger.total();
    const link = await linkObject(platform);
    // The broker pushes a late frame right after this answer, before it answers the call that follows.
    expect(plain(await link.send(keyed(platform, '', { op: 'PF4.CfgUpdateTime', ledger: ledgerName })))).toStrictEqual(
      SENT_OK,
    );
    expect(plain(await link.send(keyed(platform, 'unknown', { ledger: ledgerName })))).toStrictEqual(TIMED_OUT);
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 2, connected: true, lateRoutes: 1 });
    expect(plain(await ledger.received())).toStrictEqual([]);
    expect(await ledger.total()).toBe(total);
  });
});

describe('outcome queries', () => {
  const ask = async (link: LinkObject, platform: string, timeoutMs = 1_000) => {
    const callId = randomUUID();
    const answer = plain(
      await link.outcome({ brokerUrls: [broker.url], platform, callId, timeoutMs, place: LOCAL_HOME }),
    );
    return { answer, callId, frame: broker.queries.find((q) => q.callId === callId) };
  };

  it('send the call id, no arguments and a whole-millisecond budget of at least 1', async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    broker.script.set('#outcome', { reply: { ok: true, data: { state: 'pending' } } });
    for (const [timeoutMs, sent] of [
      [0.4, 1],
      [1500.6, 1501],
      [1500.4, 1500],
    ] as const) {
      const { answer, callId, frame } = await ask(link, platform, timeoutMs);
      expect(answer).toStrictEqual({ state: 'pending' });
      expect(frame).toStrictEqual({
        platform,
        op: '#outcome',
        args: {},
        timeoutMs: sent,
        callId,
        id: expect.any(Number),
      });
    }
    expect(await statsOf(link)).toStrictEqual({ ...FRESH, calls: 3, connected: true });
  });

  it("answer the broker's reports unchanged and anything else as unreachable", async () => {
    const platform = randomUUID();
    const link = await linkObject(platform);
    const reports: unknown[] = [
      { state: 'pending' },
      { state: 'lost', reason: 'the manager connection dropped' },
      { state: 'unknown' },
      { state: 'settled', result: { ok: true, data: { login: 7 } } },
      {
        state: 'settled',
        result: { ok: false, error: { code: 'PF4Error', managerCode: 3, message: 'invalid parameters' } },
      },
    ];
    for (const report of reports) {
      broker.script.set('#outcome', { reply: { ok: true, data: report } });
      expect((await ask(link, platform)).answer).toStrictEqual(report);
    }
    const OTHER = { state: 'unreachable', message: 'the broker answered an outcome query with something else' };
    for (const data of [
      { state: 'settled', result: { ok: 'yes' } },
      { state: 'settled' },
      null,
      { state: 'done' },
      'pending',
    ]) {
      broker.script.set('#outcome', { reply: { ok: true, data } });
      expect({ data, answer: (await ask(link, platform)).answer }).toStrictEqual({ data, answer: OTHER });
    }
    broker.script.set('#outcome', {
      reply: { ok: false, error: { code: 'Internal', managerCode: null, message: 'outcome store unavailable' } },
    });
    expect((await ask(link, platform)).answer).toStrictEqual({
      state: 'unreachable',
      message: 'outcome store unavailable',
    });
    broker.script.delete('#outcome');
  });
});

describe('a platform moving to another broker', () => {
  it("closes the links of the platform's other link objects when one of them links to the new broker", async () => {
    const platform = randomUUID();
    const links = await Promise.all([0, 1, 2].map((n) => linkObject(platform, n)));
    for (const link of links) await link.call(call(PING, platform, broker.url));
    for (const link of links) expect((await statsOf(link)).connected).toBe(true);
    const hanging = links[1].call(call(HANGING, platform, broker.url, { timeoutMs: 20_000 }));
    await until(async () => (await statsOf(links[1])).pending === 1, 'pending call');

    expect(plain(await links[0].call(call(PING, platform, other.url)))).toStrictEqual({
      status: 200,
      body: '{"broker":"fake"}',
      headers: {},
    });
    expect(plain(await hanging)).toStrictEqual(v2Failure('NoConnect', 'broker link closed'));
    await until(async () => !(await statsOf(links[2])).connected, 'closed link of #2');
    // A live read makes no replica: only a read one could answer does.
    expect(await statsOf(links[1])).toStrictEqual({ ...FRESH, calls: 2 });
    expect(await statsOf(links[2])).toStrictEqual({ ...FRESH, calls: 1 });
    expect(await statsOf(links[0])).toStrictEqual({ ...FRESH, calls: 2, connected: true });
    expect(framesOf(other, platform).map((f) => f.op)).toStrictEqual(['Ping']);
    // Their next call links to the broker it names.
    await links[1].call(call(PING, platform, other.url));
    expect(await statsOf(links[1])).toStrictEqual({ ...FRESH, calls: 3, connected: true });
  });

  it('leaves the other link objects alone when one links for the first time', async () => {
    const platform = randomUUID();
    const [first, second] = await Promise.all([0, 1].map((n) => linkObject(platform, n)));
    const hanging = second.call(call(HANGING, platform, broker.url, { timeoutMs: 200 }));
    await until(async () => (await statsOf(second)).pending === 1, 'pending call');
    await first.call(call(PING, platform, other.url));
    // Not closed: the call runs out its own budget.
    expect(plain(await hanging)).toStrictEqual(
      v2Failure('NoConnect', 'no answer from the trading platform within 0.2 s'),
    );
    expect(await statsOf(second)).toStrictEqual({ ...FRESH, calls: 1, connected: true });
  });

  it('retargets a link to the same broker as a no-op, and an object without a link as nothing', async () => {
    const platform = randomUUID();
    const [linked, idle] = await Promise.all([0, 1].map((n) => linkObject(platform, n)));
    await linked.call(call(PING, platform, broker.url));
    await linked.retarget([broker.url]);
    expect(await statsOf(linked)).toStrictEqual({ ...FRESH, calls: 1, connected: true });
    await expect(idle.retarget([other.url])).resolves.toBeUndefined();
    expect(await statsOf(idle)).toStrictEqual(FRESH);
  });
});

describe('the edge replica of a link object', () => {
  /** A broker that accepts replications, answering `{rep, tables}`. */
  async function replicatingBroker(): Promise<FakeBroker> {
    const b = await startFakeBroker();
    extraBrokers.push(b);
    scriptReads(b);
    b.script.set(REPLICATE_OP, {
      reply: (frame: CallFrame) => ({
        ok: true,
        data: { rep: (frame.args as { rep: number }).rep, tables: ['users'] },
      }),
    });
    return b;
  }
  const snapshot = (b: FakeBroker, rep: number, name: string) => {
    b.push({ rep, seq: 0, begin: { tables: ['users'] } });
    b.push({ rep, seq: 1, table: 'users', rows: [[5, JSON.stringify({ login: 5, name })]] });
  };
  const inSync = async (link: LinkObject) => (await statsOf(link)).replica?.inSync === true;

  it('answers a read it holds once its snapshot is whole, sends the rest to the broker, and asks once per link', async () => {
    const b = await replicatingBroker();
    const platform = randomUUID();
    const link = await linkObject(platform);
    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    expect(plain(replicationsOf(b, platform))).toStrictEqual([
      {
        platform,
        op: REPLICATE_OP,
        args: { rep: 1, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
        timeoutMs: 10_000,
        id: expect.any(Number),
      },
    ]);
    snapshot(b, 1, 'replicated');
    // Not whole yet: the broker answers, and no second replication is asked for.
    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    b.push({ rep: 1, seq: 2, end: true });
    await until(() => inSync(link), 'replica in sync');

    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(v2Ok({ login: 5, name: 'replicated' }));
    // A live read has no replica plan: the broker answers it.
    expect(plain(await link.call(call(LIVE, platform, b.url)))).toStrictEqual(v2Ok({ login: 5, name: 'live' }));
    expect(framesOf(b, platform).map((f) => f.op)).toStrictEqual([CACHED.op, CACHED.op, LIVE.op]);
    expect(replicationsOf(b, platform)).toHaveLength(1);
    // The snapshot's one rows frame was acknowledged once applied.
    expect(
      b.frames.filter((f) => f.platform === platform && f.op === REPLICATED_OP).map((f) => plain(f.args)),
    ).toStrictEqual([{ rep: 1, seq: 1 }]);
    expect(await statsOf(link)).toStrictEqual({
      ...FRESH,
      calls: 4,
      connected: true,
      replica: {
        inSync: true,
        tables: { users: 1 },
        chars: 31,
        stored: [],
        answered: 1,
        snapshots: 1,
        lost: 0,
        position: null,
      },
    });

    // The link drops: reads go to the broker until the new link's replication is whole.
    b.dropLinks();
    await until(async () => !(await statsOf(link)).connected, 'dropped link');
    expect((await statsOf(link)).replica).toStrictEqual({ ...EMPTY_REPLICA, answered: 1, snapshots: 1, lost: 1 });
    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    expect(plain(replicationsOf(b, platform).map((f) => f.args))).toStrictEqual([
      { rep: 1, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
      { rep: 2, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
    ]);
    snapshot(b, 2, 'again');
    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    b.push({ rep: 2, seq: 2, end: true });
    await until(() => inSync(link), 'replica in sync again');
    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(v2Ok({ login: 5, name: 'again' }));
    expect(framesOf(b, platform).map((f) => f.op)).toStrictEqual([CACHED.op, CACHED.op, LIVE.op, CACHED.op, CACHED.op]);
    expect(replicationsOf(b, platform)).toHaveLength(2);
  });

  it('asks again for a refused replication only a second later, whatever frames come meanwhile', async () => {
    const b = await startFakeBroker();
    extraBrokers.push(b);
    scriptReads(b);
    const platform = randomUUID();
    const link = await linkObject(platform);
    // The refusal comes on the link before the call's answer.
    await link.call(call(CACHED, platform, b.url));
    expect(replicationsOf(b, platform)).toHaveLength(1);
    await link.call(call(CACHED, platform, b.url));
    expect(replicationsOf(b, platform)).toHaveLength(1);

    await link.advanceClock(1_001);
    // A frame of another replication is ignored, and does not put the next request off.
    b.push({ rep: 99, seq: 0, begin: { tables: ['users'] } });
    await link.outcome({ brokerUrls: [b.url], platform, callId: randomUUID(), timeoutMs: 100, place: LOCAL_HOME });
    await link.call(call(CACHED, platform, b.url));
    expect(plain(replicationsOf(b, platform).map((f) => f.args))).toStrictEqual([
      { rep: 1, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
      { rep: 2, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
    ]);
    expect(framesOf(b, platform)).toHaveLength(3);
  });

  it('falls out of sync on a frame out of order and asks again only a second later', async () => {
    const b = await replicatingBroker();
    const platform = randomUUID();
    const link = await linkObject(platform);
    await link.call(call(CACHED, platform, b.url));
    snapshot(b, 1, 'replicated');
    b.push({ rep: 1, seq: 2, end: true });
    await until(() => inSync(link), 'replica in sync');
    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(v2Ok({ login: 5, name: 'replicated' }));

    b.push({ rep: 1, seq: 9, changes: [['users', 5, JSON.stringify({ login: 5, name: 'after a gap' })]] });
    await until(async () => !(await inSync(link)), 'replica out of sync');
    expect(plain(await link.call(call(CACHED, platform, b.url)))).toStrictEqual(
      v2Ok({ login: 5, name: 'from the broker' }),
    );
    expect(replicationsOf(b, platform)).toHaveLength(1);
    await link.advanceClock(1_001);
    await link.call(call(CACHED, platform, b.url));
    expect(plain(replicationsOf(b, platform).map((f) => f.args))).toStrictEqual([
      { rep: 1, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
      { rep: 2, maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
    ]);
  });
});
