/**
 * The idempotency ledger's handling of keys whose outcome is not known at once, in workerd: the real
 * IdempotencyLedger beside stand-in link objects that answer sends and outcome queries as each test scripts them
 * (test/support/workers/clockedLedger.ts), on a clock the test moves. Covered: what each kind of answer does to the key
 * (stored, released, left in flight with a follow-up), what a retry of a key in flight does with each report of the
 * broker, duplicates waiting for a first call still on its way, late outcomes handed over by a link object, the
 * follow-up alarm's schedule and its end, the stored-answer size cap, and how the alarm is kept.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { GatewayCall, GatewayResponse, LedgerStats, LinkAnswer } from '../../workers/gateway/messages.js';
import type { LinkLog, QueryPlan, SendPlan } from '../support/workers/linkScript.js';
import type { OutcomeReport } from '../../shared/frames.js';
import { startTestingWorker, type TestingWorker } from '../support/testingWorker.js';
import { until } from '../support/until.js';
import { LOCAL_HOME } from '../support/edge.js';

const IN_PROGRESS_MESSAGE =
  'Idempotency-Key: the first request with this key is still in progress; repeat it to get its outcome';
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

interface ClockedLedger {
  call(input: GatewayCall): Promise<GatewayResponse>;
  settle(callId: string, report: OutcomeReport): Promise<void>;
  stats(key?: string): Promise<LedgerStats>;
  advanceClock(ms: number): Promise<number>;
  planLink(plan: { sends?: SendPlan[]; queries?: QueryPlan[] }): Promise<void>;
  linkLog(): Promise<LinkLog>;
  release(answer: LinkAnswer): Promise<void>;
  runAlarm(): Promise<void>;
  clearPlans(): Promise<void>;
  refusal(input: GatewayCall): Promise<string | null>;
}

/** What the tests use of the audit trail (workers/audit/auditTrail.ts, Workers-typed). */
interface AuditTrailStub {
  record(rows: unknown[]): Promise<void>;
  settle(clientId: string, idempotencyKey: string, outcome: string, code: string | null): Promise<void>;
  page(
    filter: object,
    after: number,
    limit: number,
  ): Promise<{ events: Array<Record<string, unknown>>; next: number | null }>;
}

let worker: TestingWorker;

beforeAll(async () => {
  worker = await startTestingWorker('clockedLedger.ts', [
    {
      name: 'ledger',
      bindings: { LINKS_PER_PLATFORM: '2' },
      durableObjects: {
        IDEMPOTENCY: { className: 'ClockedLedger', useSQLite: true },
        LINKS: { className: 'CountingLink', useSQLite: true },
        AUDIT: { className: 'AuditTrail', useSQLite: true },
      },
    },
  ]);
  // A week ahead: every alarm the ledgers arm (expiries, follow-ups) is then days away in real time, so only
  // `runAlarm` runs one, when a test says.
  await (await worker.object<ClockedLedger>('IDEMPOTENCY', 'clock')).advanceClock(7 * 24 * HOUR);
}, 60_000);
afterAll(async () => {
  await worker?.close();
});
// Each test scripts the stand-in from empty, whatever an earlier one left.
beforeEach(async () => {
  await (await worker.object<ClockedLedger>('IDEMPOTENCY', 'clock')).clearPlans();
});

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** A ledger of its own for one test, and the calls of one key through it. */
async function fresh(retentionHours = 24) {
  const name = `client-a#${randomUUID()}`;
  const ledger = await worker.object<ClockedLedger>('IDEMPOTENCY', name);
  const key = `client-a:${randomUUID()}`;
  const platform = randomUUID();
  const input = (over: Partial<GatewayCall> = {}): GatewayCall => ({
    operationId: 'v2.PF4.UserRecordNew',
    op: 'PF4.UserRecordNew',
    platform,
    family: 'PF4',
    args: { body: { group: 'demo', name: 'Alice' } },
    timeoutMs: 5_000,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    brokerUrls: ['http://127.0.0.1:1'],
    mutating: true,
    home: LOCAL_HOME,
    place: LOCAL_HOME,
    idempotency: { key, ledger: name, requestHash: 'hash-1', retentionHours },
    ...over,
  });
  const log = async () => plain(await ledger.linkLog());
  return {
    ledger,
    key,
    input,
    send: async (over: Partial<GatewayCall> = {}) => plain(await ledger.call(input(over))),
    stats: async () => plain(await ledger.stats(key)),
    now: () => ledger.advanceClock(0),
    log,
    /** The log's counts now, to compare with after. */
    counts: async () => {
      const l = await log();
      return { sends: l.sends.length, queries: l.queries.length };
    },
  };
}

const body = (r: GatewayResponse) =>
  JSON.parse(r.body) as { data: unknown; error: { code: string; managerCode: string | null; message: string } | null };
const replayed = (r: GatewayResponse) => r.headers['Idempotency-Replayed'] ?? null;

const UNKNOWN: SendPlan = {
  answer: {
    ok: false,
    error: { code: 'NoConnect', managerCode: null, message: 'no answer from the trading platform within 5 s' },
    outcome: 'unknown',
  },
};
const settledOk = (data: unknown): OutcomeReport => ({ state: 'settled', result: { ok: true, data } });

function expectInProgress(r: GatewayResponse): void {
  expect(body(r)).toMatchObject({
    data: null,
    error: { code: 'NoConnect', managerCode: null, message: IN_PROGRESS_MESSAGE },
  });
  expect(r.headers).toMatchObject({ 'Retry-After': '1', 'X-Request-Outcome': 'unknown' });
  expect(replayed(r)).toBeNull();
}

describe('a key whose first call has an unknown outcome', () => {
  it('stays in flight with its first follow-up 5 s later, and a retry asks the broker instead of sending again', async () => {
    const k = await fresh();
    await k.ledger.planLink({ sends: [UNKNOWN] });
    const before = await k.now();
    const first = await k.send();
    const after = await k.now();
    expect(body(first).error).toStrictEqual({
      code: 'NoConnect',
      managerCode: null,
      message: 'no answer from the trading platform within 5 s',
    });
    const stats = await k.stats();
    expect(stats).toMatchObject({ records: 1, inflight: 1, unknown: 0, keyState: 'inflight' });
    // The alarm was armed for the key's expiry, then moved earlier, to the follow-up.
    expect(stats.nextAlarm).toBeGreaterThanOrEqual(before + 5 * SECOND);
    expect(stats.nextAlarm).toBeLessThanOrEqual(after + 5 * SECOND);

    const callId = (await k.log()).sends.at(-1)!;
    const was = await k.counts();
    await k.ledger.planLink({ queries: [{ state: 'pending' }] });
    expectInProgress(await k.send({ timeoutMs: 3_000 }));
    const log = await k.log();
    expect(log.sends.length).toBe(was.sends);
    // One query, about the key's own call, waiting at most the retry's budget.
    expect(log.queries.length).toBe(was.queries + 1);
    expect(log.queries.at(-1)!.callId).toBe(callId);
    expect(log.queries.at(-1)!.timeoutMs).toBeLessThanOrEqual(3_000);
    expect(log.queries.at(-1)!.timeoutMs).toBeGreaterThan(2_000);

    await k.ledger.planLink({ queries: [{ state: 'unreachable', message: 'broker unreachable' }] });
    expectInProgress(await k.send());
    expect(await k.counts()).toStrictEqual({ sends: was.sends, queries: was.queries + 2 });

    await k.ledger.planLink({ queries: [{ throws: 'link object reset' }] });
    expectInProgress(await k.send());
    expect(await k.counts()).toStrictEqual({ sends: was.sends, queries: was.queries + 3 });
    expect((await k.stats()).keyState).toBe('inflight');

    // The broker settles it: the retry answers the call's own result, as a replay, and stores it.
    await k.ledger.planLink({ queries: [settledOk({ login: 7 })] });
    const settled = await k.send();
    expect(replayed(settled)).toBe('true');
    expect(body(settled)).toMatchObject({ data: { login: 7 }, error: null });
    expect(await k.counts()).toStrictEqual({ sends: was.sends, queries: was.queries + 4 });
    expect(await k.stats()).toMatchObject({ records: 1, inflight: 0, unknown: 0, keyState: 'done' });
    // Stored: the next retry asks nothing.
    const again = await k.send();
    expect(again.body).toBe(settled.body);
    expect(await k.counts()).toStrictEqual({ sends: was.sends, queries: was.queries + 4 });
  });

  it('becomes final as unknown when the broker says the outcome was lost, with the reason, and is never sent again', async () => {
    const k = await fresh();
    await k.ledger.planLink({
      sends: [UNKNOWN],
      queries: [{ state: 'lost', reason: 'the trading platform restarted' }],
    });
    await k.send();
    const was = await k.counts();
    const lost = await k.send();
    const message =
      'Idempotency-Key: the outcome of the first request with this key cannot be known (the trading platform restarted); it is not sent again under this key';
    expect(body(lost)).toMatchObject({ data: null, error: { code: 'NoConnect', managerCode: null, message } });
    expect(lost.headers['X-Request-Outcome']).toBe('unknown');
    expect(replayed(lost)).toBe('true');
    expect(await k.stats()).toMatchObject({ records: 1, inflight: 0, unknown: 1, keyState: 'unknown' });
    expect((await k.send()).body).toBe(lost.body);
    expect(await k.counts()).toStrictEqual({ sends: was.sends, queries: was.queries + 1 });
  });

  it('becomes final as unknown when the broker no longer knows the call', async () => {
    const k = await fresh();
    await k.ledger.planLink({ sends: [UNKNOWN], queries: [{ state: 'unknown' }] });
    await k.send();
    expect(body(await k.send()).error!.message).toBe(
      'Idempotency-Key: the outcome of the first request with this key cannot be known (the broker no longer knows the call); it is not sent again under this key',
    );
    expect((await k.stats()).keyState).toBe('unknown');
  });

  it('answers a retry whose budget is already spent as in progress without asking', async () => {
    const k = await fresh();
    await k.ledger.planLink({ sends: [UNKNOWN] });
    await k.send();
    const was = await k.counts();
    await k.ledger.planLink({ queries: [settledOk({ late: true })] });
    expectInProgress(await k.send({ timeoutMs: 0 }));
    expect(await k.counts()).toStrictEqual(was);
    // The scripted report is still there for the next retry with a budget.
    expect(body(await k.send())).toMatchObject({ data: { late: true }, error: null });
  });

  it('asks at most 4 times in one retry while each report still leaves the outcome open', async () => {
    const k = await fresh();
    const stillOpen: QueryPlan = { state: 'settled', result: UNKNOWN.answer };
    await k.ledger.planLink({
      sends: [UNKNOWN],
      queries: [stillOpen, stillOpen, stillOpen, stillOpen, stillOpen, { state: 'unknown' }],
    });
    await k.send();
    const was = await k.counts();
    expectInProgress(await k.send());
    expect(await k.counts()).toStrictEqual({ sends: was.sends, queries: was.queries + 4 });
    expect((await k.stats()).keyState).toBe('inflight');
    // The next retry goes on with the reports left.
    await k.send();
    expect((await k.stats()).keyState).toBe('unknown');
  });

  it('is stored as unknown when the link object fails with the call possibly sent, and followed up', async () => {
    const k = await fresh();
    await k.ledger.planLink({ sends: [{ throws: 'link object reset' }] });
    const before = await k.now();
    const r = await k.send();
    expect(body(r).error).toStrictEqual({ code: 'NoConnect', managerCode: null, message: 'broker link failed' });
    expect(r.headers['X-Request-Outcome']).toBe('unknown');
    const stats = await k.stats();
    expect(stats).toMatchObject({ inflight: 1, keyState: 'inflight' });
    expect(stats.nextAlarm! - before).toBeGreaterThanOrEqual(5 * SECOND);
    expect(stats.nextAlarm! - before).toBeLessThan(6 * SECOND);
  });
});

describe('answers that decide a key at once', () => {
  it('releases the key when the failure says nothing was applied (no connection, refused input), so a retry sends afresh', async () => {
    for (const error of [
      { code: 'Validation', managerCode: null, message: 'group: not found' },
      { code: 'NoConnect', managerCode: null, message: 'broker unreachable: connection refused' },
    ] as const) {
      const k = await fresh();
      await k.ledger.planLink({ sends: [{ answer: { ok: false, error } }] });
      expect(body(await k.send()).error).toMatchObject({ code: error.code, message: error.message });
      expect(await k.stats()).toMatchObject({ records: 0, inflight: 0, keyState: null });
      const was = await k.counts();
      const retry = await k.send();
      expect(replayed(retry)).toBeNull();
      expect(body(retry)).toMatchObject({ data: { send: was.sends + 1 }, error: null });
      expect((await k.counts()).sends).toBe(was.sends + 1);
    }
  });

  it('stores a refusal the platform decided and replays it', async () => {
    const k = await fresh();
    const error = { code: 'PF4Error', managerCode: 3, message: 'login 7 already exists' } as const;
    await k.ledger.planLink({ sends: [{ answer: { ok: false, error } }] });
    const first = await k.send();
    expect(body(first).error).toStrictEqual({
      code: 'PF4Error',
      managerCode: 'InvalidData',
      message: 'login 7 already exists',
    });
    expect((await k.stats()).keyState).toBe('done');
    const was = await k.counts();
    const again = await k.send();
    expect(replayed(again)).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await k.counts()).toStrictEqual(was);
  });

  it('replays a decided answer to repeats from the moment it goes out, whether or not it is written yet, and never asks', async () => {
    const k = await fresh();
    await k.ledger.planLink({ sends: [{ answer: { ok: true, data: { login: 11 } } }] });
    const was = await k.counts();
    const first = await k.send();
    expect(body(first)).toMatchObject({ data: { login: 11 }, error: null });
    // At once (replayed from memory while its write waits to share a commit), then after `stats` has written it.
    const soon = await k.send();
    expect((await k.stats()).keyState).toBe('done');
    const later = await k.send();
    for (const again of [soon, later]) {
      expect(replayed(again)).toBe('true');
      expect(again.body).toBe(first.body);
      expect(again.status).toBe(first.status);
    }
    expect(await k.counts()).toStrictEqual({ sends: was.sends + 1, queries: was.queries });
  });

  it('replays a note instead of an answer too large to store, and never sends the call again', async () => {
    const k = await fresh();
    const big = 'x'.repeat(1_600_000);
    await k.ledger.planLink({ sends: [{ answer: { ok: true, data: { big } } }] });
    const first = await k.send();
    expect(body(first)).toMatchObject({ data: { big }, error: null });
    const was = await k.counts();
    const again = await k.send();
    expect(replayed(again)).toBe('true');
    expect(body(again)).toMatchObject({
      data: null,
      error: {
        code: 'Internal',
        managerCode: null,
        message:
          'Idempotency-Key: the first request with this key completed, but its answer is larger than the 1500000 bytes kept for a replay; it is not sent again under this key',
      },
    });
    expect(await k.counts()).toStrictEqual(was);
    expect((await k.stats()).keyState).toBe('done');
  });

  it('stores an answer just under the cap as it is', async () => {
    const k = await fresh();
    const data = { big: 'y'.repeat(1_400_000) };
    await k.ledger.planLink({ sends: [{ answer: { ok: true, data } }] });
    const first = await k.send();
    const again = await k.send();
    expect(replayed(again)).toBe('true');
    expect(again.body).toBe(first.body);
  });
});

describe('duplicates while the first call is on its way', () => {
  it('wait for its answer within their own budget, else hear it is in progress; none asks the broker', async () => {
    const k = await fresh();
    await k.ledger.planLink({ sends: [{ hold: true }] });
    const was = await k.counts();
    const first = k.send();
    await until(async () => (await k.log()).held === 1, 'the first send held');

    // The held send is not released within this duplicate's budget.
    expectInProgress(await k.send({ timeoutMs: 150 }));
    const waiting = k.send({ timeoutMs: 10_000 });
    await k.ledger.release({ ok: true, data: { login: 9 } });
    const answer = await first;
    expect(replayed(answer)).toBeNull();
    expect(body(answer)).toMatchObject({ data: { login: 9 }, error: null });
    const duplicate = await waiting;
    expect(replayed(duplicate)).toBe('true');
    expect(duplicate.body).toBe(answer.body);
    expect(await k.counts()).toStrictEqual({ sends: was.sends + 1, queries: was.queries });
  });
});

describe('late outcomes handed over by a link object', () => {
  it('settle the key in flight under that call id; pending reports and unknown call ids change nothing', async () => {
    const k = await fresh();
    await k.ledger.planLink({ sends: [UNKNOWN] });
    await k.send();
    const callId = (await k.log()).sends.at(-1)!;

    await k.ledger.settle(callId, { state: 'pending' });
    await k.ledger.settle(randomUUID(), settledOk({ other: true }));
    expect(await k.stats()).toMatchObject({ records: 1, inflight: 1, keyState: 'inflight' });

    await k.ledger.settle(callId, settledOk({ login: 11 }));
    expect(await k.stats()).toMatchObject({ inflight: 0, keyState: 'done' });
    const was = await k.counts();
    const r = await k.send();
    expect(replayed(r)).toBe('true');
    expect(body(r)).toMatchObject({ data: { login: 11 }, error: null });
    expect(await k.counts()).toStrictEqual(was);
    // A second late outcome of the same call is ignored: the key is decided.
    await k.ledger.settle(callId, { state: 'lost', reason: 'late' });
    expect((await k.stats()).keyState).toBe('done');
  });
});

describe('the follow-up alarm', () => {
  it('asks about a key left in flight every 30 s while the broker says pending, for an hour, then leaves it to retries', async () => {
    const k = await fresh(24);
    await k.ledger.planLink({ sends: [UNKNOWN] });
    const created = await k.now();
    await k.send();
    const callId = (await k.log()).sends.at(-1)!;
    const expiresAbout = created + 24 * HOUR;

    // Before the follow-up is due the alarm asks nothing.
    let was = await k.counts();
    await k.ledger.runAlarm();
    expect(await k.counts()).toStrictEqual(was);

    await k.ledger.advanceClock(5 * SECOND);
    for (const report of [
      { state: 'pending' },
      { state: 'unreachable', message: 'broker unreachable' },
      { throws: 'link object reset' },
    ] as QueryPlan[]) {
      await k.ledger.planLink({ queries: [report] });
      was = await k.counts();
      const at = await k.now();
      await k.ledger.runAlarm();
      const log = await k.log();
      expect(log.queries.length).toBe(was.queries + 1);
      expect(log.queries.at(-1)).toStrictEqual({ callId, timeoutMs: 1_000 });
      const { nextAlarm, keyState } = await k.stats();
      expect(keyState).toBe('inflight');
      expect(nextAlarm! - at).toBeGreaterThanOrEqual(30 * SECOND);
      expect(nextAlarm! - at).toBeLessThan(31 * SECOND);
      await k.ledger.advanceClock(30 * SECOND);
    }

    // An hour after the key was bound, a pending answer ends the follow-ups: the alarm is left for the expiry.
    await k.ledger.advanceClock(HOUR);
    await k.ledger.planLink({ queries: [{ state: 'pending' }] });
    await k.ledger.runAlarm();
    const { nextAlarm } = await k.stats();
    expect(nextAlarm! - expiresAbout).toBeGreaterThanOrEqual(0);
    expect(nextAlarm! - expiresAbout).toBeLessThan(HOUR);
    was = await k.counts();
    await k.ledger.advanceClock(MINUTE);
    await k.ledger.runAlarm();
    expect(await k.counts()).toStrictEqual(was);
    // A retry still asks.
    await k.ledger.planLink({ queries: [settledOk({ login: 3 })] });
    expect(body(await k.send())).toMatchObject({ data: { login: 3 }, error: null });
  });

  it('stores the outcome a follow-up learns, and re-arms for the next expiry', async () => {
    const k = await fresh(24);
    await k.ledger.planLink({ sends: [UNKNOWN] });
    const created = await k.now();
    await k.send();
    await k.ledger.advanceClock(5 * SECOND);
    await k.ledger.planLink({ queries: [settledOk({ login: 5 })] });
    await k.ledger.runAlarm();
    const stats = await k.stats();
    expect(stats).toMatchObject({ inflight: 0, keyState: 'done' });
    expect(stats.nextAlarm! - (created + 24 * HOUR)).toBeGreaterThanOrEqual(0);
    expect(stats.nextAlarm! - (created + 24 * HOUR)).toBeLessThan(MINUTE);
    const was = await k.counts();
    expect(body(await k.send())).toMatchObject({ data: { login: 5 }, error: null });
    expect(await k.counts()).toStrictEqual(was);
  });

  it("completes the organization's audit rows of the key with the outcome a follow-up learns", async () => {
    const organization = randomUUID();
    const k = await fresh(24);
    const audited = (over: Partial<GatewayCall> = {}) =>
      k.send({ idempotency: { ...k.input().idempotency!, organization }, ...over });
    const trail = await worker.object<AuditTrailStub>('AUDIT', `audit:${organization}`);
    await k.ledger.planLink({ sends: [UNKNOWN] });
    await audited();
    // The edge recorded the call as its caller got it: unknown.
    const clientKey = k.key.slice(k.key.indexOf(':') + 1);
    await trail.record([
      {
        uid: randomUUID(),
        at: new Date().toISOString(),
        organizationId: organization,
        clientId: 'client-a',
        address: null,
        operation: 'v2.PF4.UserRecordNew',
        platform: null,
        traceId: 'trace-unknown',
        idempotencyKey: clientKey,
        outcome: 'unknown',
        code: 'NoConnect',
        args: '{}',
        sent: true,
      },
    ]);
    await k.ledger.advanceClock(5 * SECOND);
    await k.ledger.planLink({ queries: [settledOk({ login: 6 })] });
    await k.ledger.runAlarm();
    const completed = await until(async () => {
      const [row] = plain(await trail.page({}, 0, 10)).events;
      return row?.outcome === 'applied' ? row : null;
    }, 'the completed audit row');
    expect(completed).toMatchObject({
      traceId: 'trace-unknown',
      outcome: 'applied',
      code: null,
      idempotencyKey: clientKey,
    });
  });

  it('completes the audit row of a call whose answer came after the edge had stopped waiting for it', async () => {
    const organization = randomUUID();
    const k = await fresh(24);
    const trail = await worker.object<AuditTrailStub>('AUDIT', `audit:${organization}`);
    await k.ledger.planLink({ sends: [{ hold: true }] });
    const first = k.send({ timeoutMs: 1000, idempotency: { ...k.input().idempotency!, organization } });
    await until(async () => (await k.log()).held === 1, 'the first send held');
    // The edge gave up at the budget and its grace and recorded the call unknown; the answer comes 5 s later.
    const clientKey = k.key.slice(k.key.indexOf(':') + 1);
    await trail.record([
      {
        uid: randomUUID(),
        at: new Date().toISOString(),
        organizationId: organization,
        clientId: 'client-a',
        address: null,
        operation: 'v2.PF4.UserRecordNew',
        platform: null,
        traceId: 'trace-late',
        idempotencyKey: clientKey,
        outcome: 'unknown',
        code: 'NoConnect',
        args: '{}',
        replayed: false,
      },
    ]);
    await k.ledger.advanceClock(5 * SECOND);
    await k.ledger.release({ ok: true, data: { login: 11 } });
    expect(body(await first)).toMatchObject({ data: { login: 11 }, error: null });
    const completed = await until(async () => {
      const [row] = plain(await trail.page({}, 0, 10)).events;
      return row?.outcome === 'applied' ? row : null;
    }, 'the completed audit row');
    expect(completed).toMatchObject({ traceId: 'trace-late', code: null });
  });

  it("completes a key's unknown row that reaches the trail after its ledger vouched for the outcome", async () => {
    const organization = randomUUID();
    const trail = await worker.object<AuditTrailStub>('AUDIT', `audit:${organization}`);
    await trail.settle('client-a', 'late-key', 'refused', 'InvalidParam');
    const row = (traceId: string, idempotencyKey: string) => ({
      uid: randomUUID(),
      at: new Date().toISOString(),
      organizationId: organization,
      clientId: 'client-a',
      address: null,
      operation: 'v2.PF4.UserRecordNew',
      platform: null,
      traceId,
      idempotencyKey,
      outcome: 'unknown',
      code: 'NoConnect',
      args: '{}',
      replayed: false,
    });
    await trail.record([row('late', 'late-key'), row('other', 'other-key')]);
    const events = plain(await trail.page({}, 0, 10)).events;
    expect(events.map((e) => [e.traceId, e.outcome, e.code])).toEqual([
      ['late', 'refused', 'InvalidParam'],
      ['other', 'unknown', 'NoConnect'],
    ]);
  });

  it('is armed for the earliest expiry, purges what expired and is cleared when nothing is left', async () => {
    const k = await fresh(24);
    const start = await k.now();
    await k.send();
    const late = (await k.stats()).nextAlarm!;
    expect(late - (start + 24 * HOUR)).toBeGreaterThanOrEqual(0);
    expect(late - (start + 24 * HOUR)).toBeLessThan(MINUTE);
    // A key kept for an hour moves the alarm earlier; one kept longer than the first does not move it back.
    const early = await k.send({
      idempotency: { ...k.input().idempotency!, key: `client-a:${randomUUID()}`, retentionHours: 1 },
    });
    expect(body(early).error).toBeNull();
    const soon = (await k.stats()).nextAlarm!;
    expect(soon - (start + HOUR)).toBeGreaterThanOrEqual(0);
    expect(soon - (start + HOUR)).toBeLessThan(MINUTE);
    await k.send({ idempotency: { ...k.input().idempotency!, key: `client-a:${randomUUID()}`, retentionHours: 48 } });
    expect((await k.stats()).nextAlarm).toBe(soon);

    await k.ledger.advanceClock(2 * HOUR);
    await k.ledger.runAlarm();
    expect(await k.stats()).toMatchObject({ records: 2, nextAlarm: late });
    await k.ledger.advanceClock(47 * HOUR);
    await k.ledger.runAlarm();
    expect(plain(await k.ledger.stats())).toStrictEqual({
      records: 0,
      inflight: 0,
      unknown: 0,
      storedBytes: 0,
      nextAlarm: null,
    });
  });
});

describe('the ledger itself', () => {
  it('refuses a call without an Idempotency-Key or of an unknown operation', async () => {
    const k = await fresh();
    const { idempotency: _none, ...unkeyed } = k.input();
    const was = await k.counts();
    expect(await k.ledger.refusal(unkeyed)).toBe('not an idempotent call of a known operation: v2.PF4.UserRecordNew');
    expect(await k.ledger.refusal(k.input({ operationId: 'v2.PF4.NoSuchThing' }))).toBe(
      'not an idempotent call of a known operation: v2.PF4.NoSuchThing',
    );
    expect(await k.counts()).toStrictEqual(was);
    expect(await k.stats()).toMatchObject({ records: 0, keyState: null });
  });

  it("answers its figures, and a key's state only when asked about one", async () => {
    const k = await fresh();
    expect(plain(await k.ledger.stats())).toStrictEqual({
      records: 0,
      inflight: 0,
      unknown: 0,
      storedBytes: 0,
      nextAlarm: null,
    });
    expect(await k.stats()).toStrictEqual({
      records: 0,
      inflight: 0,
      unknown: 0,
      storedBytes: 0,
      nextAlarm: null,
      keyState: null,
    });
  });
});
