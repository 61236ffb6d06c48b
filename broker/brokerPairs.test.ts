/**
 * The broker's side of brokers in pairs, through real brokers against a fake trading server: heartbeats answered at
 * once (never behind a slow call) with the platform's state; the drain (the frame pushed on every link, new calls,
 * subscriptions and links refused, running calls finished, a keyed outcome nobody received keeping the broker up until
 * an `#outcome` query delivers it, the bound); failover notices and moved calls counted on /metrics; and a cold
 * standby platform that logs in on its first call, answers it, and logs out again once idle.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NOT_TAKEN_MESSAGE } from './link/edgeLinkServer.js';
import { SUBSCRIBE_OP, UNSUBSCRIBE_OP } from '../shared/frames.js';
import { REPLICATE_OP } from '../shared/replication.js';
import { parsePlatforms } from './platforms/platformsFile.js';
import { drainTimeoutFor, startBroker, type BrokerOptions, type RunningBroker } from './broker.js';
import type { LogFields, Logger, LogLevel } from './observability/log.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../test/support/broker/fakeManagerServer.js';
import { eventually, failed, ok, TestLink } from '../test/support/broker/linkClient.js';

const SECRET = 'pairs-link-secret';
const PF4_ID = '7d1e5a90-1b2c-4d3e-8f40-5a6b7c8d9e01';
const ABSENT_ID = '7d1e5a90-1b2c-4d3e-8f40-5a6b7c8d9eff';
/** The quiet time of the drain that waits for a link: shorter than the product's `DRAIN_QUIET_MS`, same behaviour. */
const QUIET_MS = 600;

/** The value of one series in a /metrics text, or undefined when absent. */
function series(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

function capturingLog(): { log: Logger; lines: LogFields[] } {
  const lines: LogFields[] = [];
  const log = Object.assign(
    (_level: LogLevel, fields: LogFields) => {
      lines.push(fields);
    },
    { minLevel: 'info' as const },
  );
  return { log, lines };
}

let fake: FakeManagerServer;
const brokers: RunningBroker[] = [];
const links: TestLink[] = [];

async function broker(options: Partial<BrokerOptions> = {}, standby: 'hot' | 'cold' = 'hot'): Promise<RunningBroker> {
  const running = await startBroker({
    secret: SECRET,
    brokerId: 'broker-b',
    platforms: [{ id: PF4_ID, family: 'PF4', server: fake.url, login: FAKE_MANAGER, password: FAKE_PASSWORD, standby }],
    session: { backoff: { baseMs: 20, capMs: 200 }, pingIntervalMs: 1000 },
    ...options,
  });
  brokers.push(running);
  return running;
}

async function link(port: number): Promise<TestLink> {
  const opened = await TestLink.open(port, SECRET);
  links.push(opened);
  return opened;
}

beforeAll(async () => {
  fake = await FakeManagerServer.start('PF4');
});
afterEach(async () => {
  fake.delays.clear();
  fake.refuseLogin = false;
  fake.resyncDelayMs = 0;
  await Promise.all(links.splice(0).map((l) => l.close()));
  await Promise.all(brokers.splice(0).map((b) => b.close()));
});
afterAll(async () => {
  await fake?.close();
});

describe('heartbeats', () => {
  it('answers a ping at once while a slow call is in flight, with the platform state', async () => {
    const running = await broker();
    const edge = await link(running.port);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'up');
    const before = fake.count('ServerTime');
    fake.delays.set('ServerTime', 800);
    let slowAnswered = false;
    const slow = edge.call(PF4_ID, 'ServerTime').then((r) => {
      slowAnswered = true;
      return r;
    });
    await eventually(() => fake.count('ServerTime') === before + 1);
    expect(await edge.ping(PF4_ID)).toStrictEqual({ broker: 'broker-b', draining: false, platform: 'up' });
    expect(await edge.ping(ABSENT_ID)).toStrictEqual({ broker: 'broker-b', draining: false, platform: 'absent' });
    // Both pings were answered before the slow call.
    expect(slowAnswered).toBe(false);
    expect(ok(await slow).data).toEqual(expect.any(String));
  });

  it('reports a platform whose trading server refuses the login as down', async () => {
    fake.refuseLogin = true;
    const running = await broker();
    const edge = await link(running.port);
    expect(await edge.ping(PF4_ID)).toStrictEqual({ broker: 'broker-b', draining: false, platform: 'down' });
  });
});

describe('drain', () => {
  it('tells every link, new ones too, refuses new calls and subscriptions, finishes the running call, and closes once its links are let go', async () => {
    const { log, lines } = capturingLog();
    const running = await broker({ log });
    const edge = await link(running.port);
    const other = await link(running.port);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'up');
    const ranId = randomUUID();
    const ran = ok(
      await edge.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Before' } }, 2000, ranId),
    );
    const before = fake.count('ServerTime');
    fake.delays.set('ServerTime', 1500);
    const inFlight = edge.call(PF4_ID, 'ServerTime');
    await eventually(() => fake.count('ServerTime') === before + 1);

    const creates = fake.count('UserRecordNew');
    let drained = false;
    const drain = running.drain().then(() => {
      drained = true;
    });
    await eventually(() => edge.drains.length === 1 && other.drains.length === 1);
    expect(edge.drains).toStrictEqual([{ broker: 'broker-b' }]);

    const refused = failed(await other.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 }));
    expect(refused).toStrictEqual({
      id: refused.id,
      ok: false,
      error: { code: 'NoConnect', managerCode: null, message: NOT_TAKEN_MESSAGE },
      notTaken: true,
    });
    const keyed = failed(
      await other.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Never' } }, 2000, randomUUID()),
    );
    expect(keyed).toMatchObject({ notTaken: true, error: { code: 'NoConnect' } });
    // A call id this broker already ran is answered from its first run, not refused: the next broker does not know it.
    expect(
      ok(await other.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Before' } }, 2000, ranId)).data,
    ).toStrictEqual(ran.data);
    expect(failed(await other.call(PF4_ID, SUBSCRIBE_OP, { topics: ['users'] }))).toMatchObject({ notTaken: true });
    expect(failed(await other.call(PF4_ID, REPLICATE_OP, { rep: 1, maxRows: 100 }))).toMatchObject({ notTaken: true });
    expect(ok(await other.call(PF4_ID, UNSUBSCRIBE_OP, { sub: 99 })).data).toBe(false);
    expect(await other.outcome(PF4_ID, randomUUID())).toStrictEqual({ state: 'unknown' });
    expect(await other.ping(PF4_ID)).toStrictEqual({ broker: 'broker-b', draining: true, platform: 'up' });
    expect(fake.count('UserRecordNew')).toBe(creates);

    // A link opened now is taken, told at once, and serves outcome queries only.
    const late = await link(running.port);
    await eventually(() => late.drains.length === 1);
    expect(failed(await late.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 }))).toMatchObject({ notTaken: true });
    expect(await late.outcome(PF4_ID, ranId)).toMatchObject({ state: 'settled', result: { ok: true } });
    const ready = await fetch(`http://127.0.0.1:${running.port}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'draining', links: 3 });
    const metrics = await running.metrics.text();
    expect(series(metrics, 'broker_draining')).toBe(1);
    expect(series(metrics, 'broker_drains_total')).toBe(1);
    expect(series(metrics, 'broker_calls_not_taken_total')).toBe(5);
    expect(drained).toBe(false);

    // The call that was running when the drain began is answered; the broker closes once every link is let go.
    expect(ok(await inFlight).data).toEqual(expect.any(String));
    await other.close();
    await late.close();
    await edge.close();
    await drain;
    const draining = lines.find((l) => l.msg === 'broker draining');
    expect(draining).toMatchObject({ links: 2, runningCalls: 1, undeliveredOutcomes: 0, boundMs: drainTimeoutFor() });
    expect(lines.find((l) => l.msg === 'broker drained')).toMatchObject({ runningCalls: 0, undeliveredOutcomes: 0 });
  });

  it('stays up while a keyed outcome was never delivered, and closes once an #outcome query delivers it', async () => {
    const running = await broker({ idempotentCalls: { lateAnswerMs: 5000 } });
    const carrier = await link(running.port);
    const asker = await link(running.port);
    await eventually(async () => (await carrier.ping(PF4_ID)).platform === 'up');
    const callId = randomUUID();
    fake.delays.set('UserRecordNew', 800);
    const timedOut = failed(
      await carrier.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Late' } }, 100, callId),
    );
    expect(timedOut).toMatchObject({ timedOut: true, outcome: 'unknown' });
    // The link that carried it goes away: its late frame can reach nobody.
    await carrier.close();

    let drained = false;
    const drain = running.drain().then(() => {
      drained = true;
    });
    await eventually(() => running.pending().runningCalls === 0);
    expect(running.pending()).toStrictEqual({ runningCalls: 0, undeliveredOutcomes: 1 });
    expect(await asker.ping(PF4_ID)).toMatchObject({ draining: true });
    expect(drained).toBe(false);

    const report = await asker.outcome(PF4_ID, callId);
    expect(report).toMatchObject({
      state: 'settled',
      result: { ok: true, data: { name: 'Late', group: 'demo', login: expect.any(Number) } },
    });
    expect(running.pending()).toStrictEqual({ runningCalls: 0, undeliveredOutcomes: 0 });
    await asker.close();
    await drain;
  });

  it('counts an outcome delivered when its answer or its late frame went out on an open link', async () => {
    const running = await broker({ idempotentCalls: { lateAnswerMs: 5000 } });
    const edge = await link(running.port);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'up');
    ok(await edge.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'InTime' } }, 2000, randomUUID()));
    expect(running.pending()).toStrictEqual({ runningCalls: 0, undeliveredOutcomes: 0 });
    const lateId = randomUUID();
    fake.delays.set('UserRecordNew', 300);
    failed(await edge.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'LateFrame' } }, 50, lateId));
    await eventually(() => edge.lates.some((l) => l.callId === lateId));
    expect(running.pending()).toStrictEqual({ runningCalls: 0, undeliveredOutcomes: 0 });
    const drain = running.drain();
    await eventually(() => edge.drains.length === 1);
    await edge.close();
    await drain;
  });

  it('closes at its bound when a call still runs', async () => {
    const { log, lines } = capturingLog();
    const running = await broker({ log, drainTimeoutMs: 200 });
    const edge = await link(running.port);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'up');
    const before = fake.count('ServerTime');
    fake.delays.set('ServerTime', 10_000);
    const stuck = edge.call(PF4_ID, 'ServerTime', {}, 20_000);
    await eventually(() => fake.count('ServerTime') === before + 1);
    await running.drain();
    expect(lines.find((l) => l.msg === 'broker drain bound reached')).toMatchObject({
      runningCalls: 1,
      undeliveredOutcomes: 0,
    });
    expect(lines.find((l) => l.msg === 'broker drained')).toBeUndefined();
    await eventually(() => edge.closeCode !== null);
    void stuck;
  });
});

describe("a drain's links", () => {
  it('waits for a link that stays open until nothing but heartbeats came on it for the quiet time', async () => {
    const { log, lines } = capturingLog();
    const running = await broker({ log, drainQuietMs: QUIET_MS });
    const edge = await link(running.port);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'up');
    let drained = false;
    const drain = running.drain().then(() => {
      drained = true;
    });
    await eventually(() => edge.drains.length === 1);
    // Calls still come (an edge that did not hear of the drain yet): each one starts the quiet time again.
    for (let i = 0; i < 3; i++) {
      expect(failed(await edge.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 }))).toMatchObject({ notTaken: true });
      // Half the quiet time between calls is the behaviour here: the drain must not end while calls keep coming.
      await new Promise((r) => setTimeout(r, QUIET_MS / 2));
      expect(await edge.ping(PF4_ID)).toMatchObject({ draining: true });
      expect(drained).toBe(false);
    }
    await drain;
    expect(lines.find((l) => l.msg === 'broker drained')).toMatchObject({ runningCalls: 0, undeliveredOutcomes: 0 });
    await eventually(() => edge.closeCode !== null);
  });
});

describe('failover notices and moved calls', () => {
  it('answers a failover notice and counts it per reason and kind, unknown values as other, and counts moved calls', async () => {
    const running = await broker();
    const edge = await link(running.port);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'up');
    const notice = ok(await edge.failover(PF4_ID, { reason: 'hung', kind: 'link' }));
    expect(notice).toStrictEqual({ id: notice.id, ok: true, data: true });
    ok(await edge.failover(PF4_ID, { reason: 'hung', kind: 'link' }));
    ok(await edge.failover(PF4_ID, { reason: 'draining', kind: 'stream' }));
    ok(await edge.failover(PF4_ID, { reason: 'https://secret.example/x', kind: 42 }));
    const moved = ok(await edge.call(PF4_ID, 'PF4.UserRecordGet', { login: 100002 }, 2000, undefined, { moved: true }));
    expect(moved.data).toMatchObject({ login: 100002, name: 'User 100002' });
    ok(await edge.call(PF4_ID, 'PF4.UserRecordGet', { login: 100002 }));

    const text = await running.metrics.text();
    expect(series(text, 'broker_failovers_total{reason="hung",kind="link"}')).toBe(2);
    expect(series(text, 'broker_failovers_total{reason="draining",kind="stream"}')).toBe(1);
    expect(series(text, 'broker_failovers_total{reason="other",kind="other"}')).toBe(1);
    expect(text).not.toContain('secret.example');
    expect(series(text, 'broker_calls_moved_total')).toBe(1);
    expect(series(text, 'broker_draining')).toBe(0);
    expect(series(text, 'broker_drains_total')).toBe(0);
    expect(series(text, 'broker_calls_not_taken_total')).toBe(0);
  });
});

describe('cold standby', () => {
  it('reads standby from the platform file, hot by default', () => {
    const entry = { id: PF4_ID, family: 'PF4', server: 'ws://127.0.0.1:1/x', login: 1, password: 'p' };
    expect(parsePlatforms(JSON.stringify({ platforms: [entry] }))[0].standby).toBeUndefined();
    expect(parsePlatforms(JSON.stringify({ platforms: [{ ...entry, standby: 'cold' }] }))[0].standby).toBe('cold');
    expect(parsePlatforms(JSON.stringify({ platforms: [{ ...entry, standby: 'hot' }] }))[0].standby).toBeUndefined();
    expect(() => parsePlatforms(JSON.stringify({ platforms: [{ ...entry, standby: 'warm' }] }))).toThrow(
      /platforms\.0\.standby/,
    );
  });

  it('logs in on the first call, answers it with data, logs out when idle and in again on the next call', async () => {
    const logins = fake.logins;
    fake.resyncDelayMs = 150;
    const running = await broker({ coldIdleMs: 200 }, 'cold');
    const edge = await link(running.port);
    expect(await edge.ping(PF4_ID)).toStrictEqual({ broker: 'broker-b', draining: false, platform: 'cold' });
    expect(fake.logins).toBe(logins);
    const ready = await fetch(`http://127.0.0.1:${running.port}/readyz`);
    expect(ready.status).toBe(200);
    const health = await fetch(`http://127.0.0.1:${running.port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'ok',
      platforms: { [PF4_ID]: { up: false, standby: 'cold', asleep: true } },
    });

    // A cached read waits for the login and the resync, then answers from the fresh cache.
    const first = ok(await edge.call(PF4_ID, 'PF4.UserRecordGet', { login: 100004 }, 5000));
    expect(first.data).toMatchObject({ login: 100004, name: 'User 100004', group: 'demo' });
    expect(fake.logins).toBe(logins + 1);
    expect(await edge.ping(PF4_ID)).toMatchObject({ platform: 'up' });

    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'cold');
    const platform = running.platforms.get(PF4_ID)!;
    expect(platform.session.up).toBe(false);
    expect(platform.cache.ready).toBe(false);
    expect(await (await fetch(`http://127.0.0.1:${running.port}/healthz`)).json()).toMatchObject({
      status: 'ok',
      platforms: { [PF4_ID]: { up: false, standby: 'cold', asleep: true } },
    });

    // A write on the sleeping platform wakes it too, and runs once it is logged in.
    const created = ok(await edge.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Woken' } }, 5000));
    expect(created.data).toMatchObject({ name: 'Woken', group: 'demo' });
    expect(fake.logins).toBe(logins + 2);
    expect(platform.wakes).toBe(2);
    const loginAt = fake.received.map((r) => r.cmd).lastIndexOf('login');
    expect(fake.received.slice(loginAt).map((r) => r.cmd)).toContain('UserRecordNew');
  });

  it('stays logged in while a subscription is open', async () => {
    const running = await broker({ coldIdleMs: 100 }, 'cold');
    const edge = await link(running.port);
    const platform = running.platforms.get(PF4_ID)!;
    const sub = ok(await edge.call(PF4_ID, SUBSCRIBE_OP, { topics: ['users'] }));
    expect(platform.inUse).toBe(1);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'up');
    // Calls come and go; the subscription keeps the use, so no idle timer runs.
    ok(await edge.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 }));
    expect(platform.inUse).toBe(1);
    expect(platform.asleep).toBe(false);
    expect(ok(await edge.call(PF4_ID, UNSUBSCRIBE_OP, { sub: (sub.data as { sub: number }).sub })).data).toBe(true);
    expect(platform.inUse).toBe(0);
    await eventually(async () => (await edge.ping(PF4_ID)).platform === 'cold');
    expect(platform.wakes).toBe(1);
  });

  it('logs in for a replication, which holds it in use until its link closes', async () => {
    const logins = fake.logins;
    const running = await broker({ coldIdleMs: 100 }, 'cold');
    const edge = await link(running.port);
    const platform = running.platforms.get(PF4_ID)!;
    expect(ok(await edge.call(PF4_ID, REPLICATE_OP, { rep: 3, maxRows: 1000 })).data).toMatchObject({ rep: 3 });
    expect(platform.inUse).toBe(1);
    // The snapshot follows the login's resync: its last frame is `end`.
    const end = await eventually(() =>
      edge.hellos.find(
        (f) => (f as { rep?: number; end?: boolean }).rep === 3 && (f as { end?: boolean }).end === true,
      ),
    );
    expect(end).toMatchObject({ rep: 3, end: true });
    const users = edge.hellos.filter((f) => (f as { table?: string }).table === 'users') as Array<{
      rows: Array<[number, string]>;
    }>;
    expect(users.flatMap((f) => f.rows).map(([key]) => key)).toContain(100001);
    expect(fake.logins).toBe(logins + 1);
    await edge.close();
    await eventually(() => platform.inUse === 0);
    await eventually(() => platform.asleep);
    expect(platform.state).toBe('cold');
  });

  it('answers a read a time-out, and a write not sent, when the cold standby cannot log in within its budget', async () => {
    fake.refuseLogin = true;
    const creates = fake.count('UserRecordNew');
    const running = await broker({}, 'cold');
    const edge = await link(running.port);
    const read = failed(await edge.call(PF4_ID, 'PF4.UserRecordGet', { login: 100001 }, 300));
    expect(read).toMatchObject({
      timedOut: true,
      error: { code: 'NoConnect', message: 'the trading server did not answer within 0.3s' },
    });
    expect(read.outcome).toBeUndefined();
    const keyed = failed(
      await edge.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'X' } }, 300, randomUUID()),
    );
    expect(keyed).toMatchObject({
      timedOut: true,
      error: {
        code: 'NoConnect',
        message: 'the call was not sent: its deadline passed before the manager session was ready',
      },
    });
    expect(keyed.outcome).toBeUndefined();
    const unkeyed = failed(await edge.call(PF4_ID, 'PF4.UserRecordNew', { body: { group: 'demo', name: 'Y' } }, 300));
    expect(unkeyed).toMatchObject({
      timedOut: true,
      error: {
        code: 'NoConnect',
        message: 'the call was not sent: its deadline passed before the manager session was ready',
      },
    });
    expect(unkeyed.outcome).toBeUndefined();
    expect(await edge.ping(PF4_ID)).toMatchObject({ platform: 'down' });
    expect(fake.count('UserRecordNew')).toBe(creates);
  });
});
