/**
 * A link object whose platform names two brokers (workers/gateway/brokerSet.ts), driven over RPC in workerd against
 * two scripted brokers: which broker takes calls, what a hung, dropped, draining or unreachable broker does to reads
 * and writes in flight and arriving, the heartbeat, the return to the preferred broker after its hold-down, and
 * outcome queries asked of both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { FAILBACK_HOLD_DOWN_MS, FAILOVER_OP, PING_OP, type CallFrame, type PingReport } from '../../shared/frames.js';
import type {
  BrokerSetStats,
  GatewayCall,
  GatewayResponse,
  KeyedSend,
  LinkAnswer,
  OutcomeAnswer,
} from '../../workers/gateway/messages.js';
import { linkName } from '../../workers/gateway/names.js';
import { startTestingWorker, type TestingWorker } from '../support/testingWorker.js';
import { LOCAL_HOME } from '../support/edge.js';
import { BROKER_SECRET, startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import { until } from '../support/until.js';

interface LinkObject {
  call(input: GatewayCall): Promise<GatewayResponse>;
  send(input: KeyedSend): Promise<LinkAnswer>;
  outcome(q: { brokerUrls: string[]; platform: string; callId: string; timeoutMs: number }): Promise<OutcomeAnswer>;
  brokerStats(): Promise<BrokerSetStats | null>;
  advanceClock(ms: number): Promise<number>;
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const LIVE = { operationId: 'v2.PF4.UserRecordRequest', op: 'PF4.UserRecordRequest' };
const WRITE = { operationId: 'v2.PF4.UserRecordNew', op: 'PF4.UserRecordNew' };
/** A cached read a replica could answer: the first one makes the link object's replica. */
const CACHED = { operationId: 'v2.PF4.UserRecordGet', op: 'PF4.UserRecordGet' };

let worker: TestingWorker;
const started: FakeBroker[] = [];

beforeAll(async () => {
  const entry = (name: string, rows: string) => ({
    name,
    // A faster heartbeat than the product's (every 400 ms, 1200 ms to answer): each hung broker is left sooner.
    bindings: {
      BROKER_SECRET,
      LINKS_PER_PLATFORM: '1',
      EDGE_REPLICA_MAX_ROWS: rows,
      HEARTBEAT_EVERY_MS: '200',
      HEARTBEAT_TIMEOUT_MS: '800',
    },
    durableObjects: {
      LINKS: { className: 'ClockedLink', useSQLite: true },
      IDEMPOTENCY: { className: 'RecordingLedger', useSQLite: true },
    },
  });
  // The second worker keeps edge replicas, to show whose broker feeds them.
  worker = await startTestingWorker('linkHarness.ts', [entry('link', '0'), entry('replicas', '10000')]);
}, 60_000);
afterAll(async () => {
  await worker?.close();
  for (const b of started) await b.close();
});

/** A broker that answers pings as a healthy one, and reads with its own name. */
async function healthyBroker(name: string): Promise<FakeBroker> {
  const b = await startFakeBroker();
  started.push(b);
  const report: PingReport = { broker: name, draining: false, platform: 'up' };
  b.script.set(PING_OP, { reply: { ok: true, data: report } });
  b.script.set(LIVE.op, { reply: { ok: true, data: { login: 5, from: name } } });
  b.script.set(WRITE.op, { reply: { ok: true, data: { login: 6, from: name } } });
  return b;
}

async function pair(): Promise<{ a: FakeBroker; b: FakeBroker; platform: string; link: LinkObject }> {
  const [a, b] = await Promise.all([healthyBroker('a'), healthyBroker('b')]);
  const platform = randomUUID();
  const link = await worker.object<LinkObject>('LINKS', linkName(platform, LOCAL_HOME.region, 0));
  return { a, b, platform, link };
}

function call(
  op: { operationId: string; op: string },
  platform: string,
  brokers: FakeBroker[],
  over: Partial<GatewayCall> = {},
): GatewayCall {
  return {
    ...op,
    platform,
    family: 'PF4',
    args: { login: 5 },
    timeoutMs: 8_000,
    traceId: TRACE,
    brokerUrls: brokers.map((b) => b.url),
    mutating: op === WRITE,
    home: LOCAL_HOME,
    place: LOCAL_HOME,
    ...over,
  };
}

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const dataOf = (r: GatewayResponse) => (JSON.parse(r.body) as { data: unknown }).data;
const errorOf = (r: GatewayResponse) => (JSON.parse(r.body) as { error: unknown }).error;
const opsOf = (b: FakeBroker, platform: string) =>
  b.frames.filter((f) => f.platform === platform && f.op !== PING_OP).map((f) => f.op);
const failoversOf = (b: FakeBroker, platform: string) =>
  b.frames.filter((f) => f.platform === platform && f.op === FAILOVER_OP).map((f) => f.args);
const framesOf = (b: FakeBroker, platform: string, op: string): CallFrame[] =>
  b.frames.filter((f) => f.platform === platform && f.op === op);

describe('a platform served by two brokers', () => {
  it('sends every call to the first broker while it is healthy, and pings it', async () => {
    const { a, b, platform, link } = await pair();
    expect(dataOf(plain(await link.call(call(LIVE, platform, [a, b]))))).toStrictEqual({ login: 5, from: 'a' });
    await until(() => framesOf(a, platform, PING_OP).length >= 2, 'two heartbeats');
    expect(opsOf(a, platform)).toStrictEqual([LIVE.op]);
    expect(opsOf(b, platform)).toStrictEqual([]);
    expect(plain(await link.brokerStats())).toMatchObject({ current: a.url, failovers: {}, moved: 0 });
  });

  it('pings no broker of a platform that names one', async () => {
    const { a, b, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a]));
    // As long as a platform naming two brokers, called after it, takes to be pinged twice.
    const paired = randomUUID();
    const pairedLink = await worker.object<LinkObject>('LINKS', linkName(paired, LOCAL_HOME.region, 0));
    await pairedLink.call(call(LIVE, paired, [a, b]));
    await until(() => framesOf(a, paired, PING_OP).length >= 2, 'two heartbeats of the platform naming two brokers');
    expect(framesOf(a, platform, PING_OP)).toStrictEqual([]);
  });

  it('answers a read in flight on a hung broker from the next one, within its budget, and tells that broker why', async () => {
    const { a, b, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a, b]));
    // The broker stops answering anything, and keeps its socket open (a stopped process).
    a.script.set(PING_OP, { hang: true });
    a.script.set(LIVE.op, { hang: true });
    const answer = plain(await link.call(call(LIVE, platform, [a, b])));
    expect(dataOf(answer)).toStrictEqual({ login: 5, from: 'b' });
    const [resent] = framesOf(b, platform, LIVE.op);
    expect(resent).toMatchObject({ moved: true, args: { login: 5 } });
    expect(resent.timeoutMs).toBeLessThan(8_000);
    expect(failoversOf(b, platform)).toStrictEqual([{ reason: 'hung', kind: 'link' }]);
    expect(plain(await link.brokerStats())).toMatchObject({ current: b.url, failovers: { hung: 1 }, moved: 1 });
    // Calls arriving now go to the second broker at once.
    expect(dataOf(plain(await link.call(call(LIVE, platform, [a, b]))))).toStrictEqual({ login: 5, from: 'b' });
    expect(opsOf(a, platform)).toStrictEqual([LIVE.op, LIVE.op]);
  });

  it('answers a write in flight on a dropped link with an unknown outcome, never sends it again, and sends the next write to the next broker', async () => {
    const { a, b, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a, b]));
    a.script.set(WRITE.op, { hang: true });
    const inFlight = link.call(call(WRITE, platform, [a, b]));
    await until(() => framesOf(a, platform, WRITE.op).length === 1, 'the write at the first broker');
    a.dropLinks();
    const answer = plain(await inFlight);
    expect(errorOf(answer)).toStrictEqual({ code: 'NoConnect', managerCode: null, message: 'broker link lost' });
    expect(answer.headers).toMatchObject({ 'X-Request-Outcome': 'unknown' });
    expect(framesOf(b, platform, WRITE.op)).toStrictEqual([]);
    // The first broker was left when its link dropped: the next write goes to the second.
    expect(dataOf(plain(await link.call(call(WRITE, platform, [a, b]))))).toStrictEqual({ login: 6, from: 'b' });
    expect(failoversOf(b, platform)).toStrictEqual([{ reason: 'lost', kind: 'link' }]);
  });

  it('moves new calls at once when the broker in use says it is draining, and sends a call it did not take to the next', async () => {
    const { a, b, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a, b]));
    // A write the draining broker refuses untaken goes on: it was never run.
    a.script.set(WRITE.op, {
      reply: {
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message: 'the broker is draining: call not taken' },
        notTaken: true,
      },
    });
    expect(dataOf(plain(await link.call(call(WRITE, platform, [a, b]))))).toStrictEqual({ login: 6, from: 'b' });
    expect(failoversOf(b, platform)).toStrictEqual([{ reason: 'draining', kind: 'link' }]);

    const other = await pair();
    await other.link.call(call(LIVE, other.platform, [other.a, other.b]));
    other.a.push({ drain: { broker: 'a' } });
    await until(async () => (await other.link.brokerStats())?.current === other.b.url, 'moved on the drain notice');
    expect(dataOf(plain(await other.link.call(call(LIVE, other.platform, [other.a, other.b]))))).toStrictEqual({
      login: 5,
      from: 'b',
    });
    expect(opsOf(other.a, other.platform)).toStrictEqual([LIVE.op]);
    // Nothing waited on the draining broker's link: it was let go.
    expect(plain(await other.link.brokerStats())?.brokers[0]).toMatchObject({ health: 'draining', connected: false });
  });

  it("lets a draining broker's link go only once the calls in flight on it are answered", async () => {
    const { a, b, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a, b]));
    a.script.set(LIVE.op, { reply: { ok: true, data: { login: 5, from: 'a' } }, delayMs: 600 });
    const inFlight = link.call(call(LIVE, platform, [a, b]));
    await until(() => framesOf(a, platform, LIVE.op).length === 2, 'the read at the first broker');
    a.push({ drain: { broker: 'a' } });
    await until(async () => (await link.brokerStats())?.current === b.url, 'moved on the drain notice');
    expect(plain(await link.brokerStats())?.brokers[0]).toMatchObject({ health: 'draining', connected: true });
    expect(dataOf(plain(await inFlight))).toStrictEqual({ login: 5, from: 'a' });
    await until(async () => (await link.brokerStats())?.brokers[0].connected === false, 'the link let go');
  });

  it("sends a platform's sole draining broker no call until it is due to be tried again", async () => {
    const { a, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a]));
    a.push({ drain: { broker: 'a' } });
    await until(async () => (await link.brokerStats())?.brokers[0].health === 'draining', 'the drain seen');
    const sent = framesOf(a, platform, LIVE.op).length;
    const answer = plain(await link.call(call(LIVE, platform, [a])));
    expect(errorOf(answer)).toStrictEqual({
      code: 'NoConnect',
      managerCode: null,
      message: 'the broker is draining: call not taken',
    });
    expect(framesOf(a, platform, LIVE.op)).toHaveLength(sent);
    // Back after its restart: tried again half a second later, and answering.
    await link.advanceClock(1000);
    expect(dataOf(plain(await link.call(call(LIVE, platform, [a]))))).toStrictEqual({ login: 5, from: 'a' });
    expect(plain(await link.brokerStats())?.brokers[0]).toMatchObject({ health: 'ok', connected: true });
  });

  it("answers a draining sole broker's untaken call as not applied, without an unknown outcome", async () => {
    const { a, platform, link } = await pair();
    a.script.set(WRITE.op, {
      reply: {
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message: 'the broker is draining: call not taken' },
        notTaken: true,
      },
    });
    const answer = plain(await link.call(call(WRITE, platform, [a])));
    expect(errorOf(answer)).toStrictEqual({
      code: 'NoConnect',
      managerCode: null,
      message: 'the broker is draining: call not taken',
    });
    expect(answer.headers['X-Request-Outcome']).toBeUndefined();
  });

  it('sends a call to the next broker when the first cannot be reached, keyed writes included', async () => {
    const { a, b, platform, link } = await pair();
    await a.close();
    const callId = randomUUID();
    const answer = plain(
      await link.send({
        platform,
        op: WRITE.op,
        args: {},
        timeoutMs: 5_000,
        traceId: TRACE,
        brokerUrls: [a.url, b.url],
        callId,
        ledger: 'client#0',
        home: LOCAL_HOME,
      }),
    );
    expect(answer).toStrictEqual({ ok: true, data: { login: 6, from: 'b' } });
    expect(framesOf(b, platform, WRITE.op).map((f) => f.callId)).toStrictEqual([callId]);
    expect(plain(await link.brokerStats())).toMatchObject({ current: b.url, failovers: { unreachable: 1 } });
  });

  it('returns to the preferred broker only after it answered every probe for the hold-down time', async () => {
    const { a, b, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a, b]));
    a.script.set(PING_OP, { hang: true });
    await until(async () => (await link.brokerStats())?.current === b.url, 'moved to the second broker');
    // Healthy again: probed, but not yet trusted.
    a.script.set(PING_OP, {
      reply: { ok: true, data: { broker: 'a', draining: false, platform: 'up' } satisfies PingReport },
    });
    const pingsBefore = framesOf(a, platform, PING_OP).length;
    await until(() => framesOf(a, platform, PING_OP).length >= pingsBefore + 2, 'probes of the first broker');
    expect(dataOf(plain(await link.call(call(LIVE, platform, [a, b]))))).toStrictEqual({ login: 5, from: 'b' });
    await link.advanceClock(FAILBACK_HOLD_DOWN_MS);
    await until(async () => (await link.brokerStats())?.current === a.url, 'back to the first broker');
    expect(dataOf(plain(await link.call(call(LIVE, platform, [a, b]))))).toStrictEqual({ login: 5, from: 'a' });
    expect(failoversOf(a, platform)).toStrictEqual([{ reason: 'preferred', kind: 'link' }]);
    expect(plain(await link.brokerStats())).toMatchObject({ failovers: { hung: 1, preferred: 1 } });
  });

  it('probes a standby it saw drain until it answers again, so the platform can move to it later', async () => {
    const { a, b, platform, link } = await pair();
    await link.call(call(LIVE, platform, [a, b]));
    // Both links open: the standby is reached by a move and a return.
    a.script.set(PING_OP, { hang: true });
    await until(async () => (await link.brokerStats())?.current === b.url, 'moved to the standby');
    a.script.set(PING_OP, {
      reply: { ok: true, data: { broker: 'a', draining: false, platform: 'up' } satisfies PingReport },
    });
    await until(async () => (await link.brokerStats())?.brokers[0].health === 'ok', 'the first broker answering again');
    await link.advanceClock(FAILBACK_HOLD_DOWN_MS);
    await until(async () => (await link.brokerStats())?.current === a.url, 'back on the first broker');
    // The standby drains (a restart): left, then probed until it answers as a healthy broker again.
    b.push({ drain: { broker: 'b' } });
    await until(async () => (await link.brokerStats())?.brokers[1].health === 'draining', 'the standby seen draining');
    await until(async () => (await link.brokerStats())?.brokers[1].health === 'ok', 'the standby healthy again');
    a.script.set(PING_OP, { hang: true });
    a.script.set(LIVE.op, { hang: true });
    expect(dataOf(plain(await link.call(call(LIVE, platform, [a, b]))))).toStrictEqual({ login: 5, from: 'b' });
  });

  it('asks the broker it moved to for the edge replica, and no longer the one it left', async () => {
    const [a, b] = await Promise.all([healthyBroker('a'), healthyBroker('b')]);
    const platform = randomUUID();
    const link = await worker.object<LinkObject>('LINKS', linkName(platform, LOCAL_HOME.region, 0), 'replicas');
    const replicationsOf = (x: FakeBroker) => x.replicateFrames.filter((f) => f.platform === platform).length;
    for (const x of [a, b]) x.script.set(CACHED.op, { reply: { ok: true, data: { login: 5 } } });
    await link.call(call(CACHED, platform, [a, b]));
    await until(() => replicationsOf(a) === 1, 'a replication asked of the first broker');
    a.script.set(PING_OP, { hang: true });
    await until(async () => (await link.brokerStats())?.current === b.url, 'moved to the second broker');
    await until(() => replicationsOf(b) === 1, 'a replication asked of the second broker');
    expect(replicationsOf(a)).toBe(1);
  });

  it('asks every broker of the list what became of a call id', async () => {
    const { a, b, platform, link } = await pair();
    const ask = () =>
      link.outcome({ brokerUrls: [a.url, b.url], platform, callId: 'call-1', timeoutMs: 100 }).then(plain);
    a.script.set('#outcome', { reply: { ok: true, data: { state: 'unknown' } } });
    b.script.set('#outcome', { reply: { ok: true, data: { state: 'settled', result: { ok: true, data: 7 } } } });
    expect(await ask()).toStrictEqual({ state: 'settled', result: { ok: true, data: 7 } });
    b.script.set('#outcome', { reply: { ok: true, data: { state: 'unknown' } } });
    expect(await ask()).toStrictEqual({ state: 'unknown' });
    b.script.set('#outcome', {
      reply: { ok: false, error: { code: 'Internal', managerCode: null, message: 'not now' } },
    });
    expect(await ask()).toStrictEqual({ state: 'unreachable', message: 'not now' });
    expect([a, b].map((x) => x.queries.filter((q) => q.platform === platform).map((q) => q.callId))).toStrictEqual([
      ['call-1', 'call-1', 'call-1'],
      ['call-1', 'call-1', 'call-1'],
    ]);
  });

  it('answers an outcome from the broker that knows the call while another has not answered its query yet', async () => {
    const { a, b, platform, link } = await pair();
    const callId = randomUUID();
    // The first broker of the list takes the query and keeps it unanswered (black-holed); the second knows the call.
    a.script.set('#outcome', { hold: true });
    b.script.set('#outcome', { reply: { ok: true, data: { state: 'settled', result: { ok: true, data: 8 } } } });
    const asked = { brokerUrls: [a.url, b.url], platform, callId, timeoutMs: 60_000 };
    expect(plain(await link.outcome(asked))).toStrictEqual({ state: 'settled', result: { ok: true, data: 8 } });
    // Both were asked, and the first broker's query is still held by it: the answer did not wait for it.
    expect(a.held.map((q) => q.callId)).toStrictEqual([callId]);
    expect(b.queries.map((q) => q.callId)).toStrictEqual([callId]);

    // A broker that says it still runs the call answers too ("in progress"); the one that does not know it is not waited for.
    const running = randomUUID();
    b.script.set('#outcome', { reply: { ok: true, data: { state: 'pending' } } });
    expect(plain(await link.outcome({ ...asked, callId: running }))).toStrictEqual({ state: 'pending' });
    expect(a.held.map((q) => q.callId)).toStrictEqual([callId, running]);

    // No broker knows the call: the answer waits for every broker, and is `unknown` only when each said so.
    const forgotten = randomUUID();
    b.script.set('#outcome', { reply: { ok: true, data: { state: 'unknown' } } });
    const unknown = link.outcome({ ...asked, callId: forgotten }).then(plain);
    await until(() => a.held.length === 3 && b.queries.length === 3, 'the third query at both brokers');
    expect(a.answerHeld({ ok: true, data: { state: 'unknown' } })).toBe(3);
    expect(await unknown).toStrictEqual({ state: 'unknown' });
  }, 20_000);
});
