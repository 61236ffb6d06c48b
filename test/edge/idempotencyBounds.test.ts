/**
 * The bounds of what an idempotency ledger stores, in workerd: the real IdempotencyLedger beside stand-in link objects
 * (test/support/workers/clockedLedger.ts), on a clock the test moves, with small bounds (IDEMPOTENCY_ANSWER_MAX_BYTES 4,000,
 * IDEMPOTENCY_LEDGER_MAX_MB 0.01: 10,000 bytes). Covered: the stored bytes counted in UTF-8, an answer above the
 * per-answer bound returned once and replayed as a note, a new key refused before anything is sent once the ledger's
 * answers reach its bound (with the time until enough expire), taken again once they have, and answers that arrive
 * once the ledger is full; then both bounds as a caller of the real edge meets them, against a scripted broker.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { GatewayCall, GatewayResponse, LedgerStats, LinkAnswer } from '../../workers/gateway/messages.js';
import type { LinkLog, QueryPlan, SendPlan } from '../support/workers/linkScript.js';
import type { OutcomeReport } from '../../shared/frames.js';
import { startTestingWorker, type TestingWorker } from '../support/testingWorker.js';
import { until } from '../support/until.js';
import { LOCAL_HOME, PF4_A } from '../support/edge.js';
import { edgeWithFakeBroker } from './gatewayFakeBroker.js';

const ANSWER_MAX = 4_000;
const LEDGER_MAX = 10_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

interface ClockedLedger {
  call(input: GatewayCall): Promise<GatewayResponse>;
  settle(callId: string, report: OutcomeReport): Promise<void>;
  stats(key?: string): Promise<LedgerStats>;
  advanceClock(ms: number): Promise<number>;
  planLink(plan: { sends?: SendPlan[]; queries?: QueryPlan[] }): Promise<void>;
  linkLog(): Promise<LinkLog>;
  release(answer: LinkAnswer): Promise<void>;
  clearPlans(): Promise<void>;
  storedOnDisk(): Promise<{ rows: number; counted: number }>;
}

let worker: TestingWorker;

beforeAll(async () => {
  worker = await startTestingWorker('clockedLedger.ts', [
    {
      name: 'bounds',
      bindings: {
        LINKS_PER_PLATFORM: '1',
        IDEMPOTENCY_ANSWER_MAX_BYTES: String(ANSWER_MAX),
        IDEMPOTENCY_LEDGER_MAX_MB: '0.01',
      },
      durableObjects: {
        IDEMPOTENCY: { className: 'ClockedLedger', useSQLite: true },
        LINKS: { className: 'CountingLink', useSQLite: true },
      },
    },
  ]);
  // A week ahead: the alarms the ledgers arm are then days away in real time, so none runs during a test.
  await (await worker.object<ClockedLedger>('IDEMPOTENCY', 'clock')).advanceClock(7 * 24 * HOUR);
}, 60_000);
afterAll(async () => {
  await worker?.close();
});
beforeEach(async () => {
  await (await worker.object<ClockedLedger>('IDEMPOTENCY', 'clock')).clearPlans();
});

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const body = (r: GatewayResponse) =>
  JSON.parse(r.body) as {
    data: unknown;
    error: { code: string; managerCode: string | null; message: string } | null;
    meta: unknown;
  };
const replayed = (r: GatewayResponse) => r.headers['Idempotency-Replayed'] ?? null;
/** The UTF-8 bytes a ledger stores for an answer: the response as it went out, without the replay's header. */
const storedBytesOf = (r: GatewayResponse) => {
  const { 'Idempotency-Replayed': _replayed, ...headers } = r.headers;
  return Buffer.byteLength(JSON.stringify({ status: r.status, body: r.body, headers }));
};
/** A success whose stored answer takes about `bytes` (its data padded with `char`). */
const answerOf = (bytes: number, char = 'x'): SendPlan => ({ answer: { ok: true, data: { pad: char.repeat(bytes) } } });

/** A ledger of its own for one test, and the keys sent through it (each its own request). */
async function fresh(retentionHours = 1) {
  const name = `client-a#${randomUUID()}`;
  const ledger = await worker.object<ClockedLedger>('IDEMPOTENCY', name);
  const platform = randomUUID();
  const input = (key: string): GatewayCall => ({
    operationId: 'v2.PF4.UserRecordNew',
    op: 'PF4.UserRecordNew',
    platform,
    family: 'PF4',
    args: { body: { group: 'demo', name: key } },
    timeoutMs: 5_000,
    traceId: TRACE,
    brokerUrls: ['http://127.0.0.1:1'],
    mutating: true,
    home: LOCAL_HOME,
    place: LOCAL_HOME,
    idempotency: { key: `client-a:${key}`, ledger: name, requestHash: `hash-${key}`, retentionHours },
  });
  return {
    ledger,
    send: async (key: string) => plain(await ledger.call(input(key))),
    stats: async (key?: string) => plain(await ledger.stats(key === undefined ? undefined : `client-a:${key}`)),
    sends: async () => plain(await ledger.linkLog()).sends.length,
    now: () => ledger.advanceClock(0),
    disk: async () => plain(await ledger.storedOnDisk()),
  };
}

describe('the bytes a ledger stores', () => {
  it('counts every stored answer in UTF-8, as storage holds it, and replays an answer up to the bound as it is', async () => {
    const l = await fresh();
    await l.ledger.planLink({ sends: [answerOf(1_000), answerOf(1_000, 'é')] });
    const ascii = await l.send('a');
    const accented = await l.send('b');
    expect(body(accented).data).toStrictEqual({ pad: 'é'.repeat(1_000) });
    const stored = storedBytesOf(ascii) + storedBytesOf(accented);
    // Two bytes per é: the accented answer takes 1,000 bytes more than the plain one.
    expect(storedBytesOf(accented) - storedBytesOf(ascii)).toBe(1_000);
    expect((await l.stats()).storedBytes).toBe(stored);
    expect(await l.disk()).toStrictEqual({ rows: stored, counted: stored });
    const again = await l.send('b');
    expect(replayed(again)).toBe('true');
    expect(again.body).toBe(accented.body);
  });

  it('returns an answer above IDEMPOTENCY_ANSWER_MAX_BYTES once, stores a note in its place, and never sends it again', async () => {
    const l = await fresh();
    // 3,000 characters that take 6,000 bytes: measured in bytes, not characters.
    await l.ledger.planLink({ sends: [answerOf(3_000, 'é')] });
    const first = await l.send('big');
    expect(body(first)).toMatchObject({ data: { pad: 'é'.repeat(3_000) }, error: null });
    expect(replayed(first)).toBeNull();
    const sent = await l.sends();
    const again = await l.send('big');
    expect(replayed(again)).toBe('true');
    expect(again.status).toBe(200);
    expect(body(again)).toStrictEqual({
      data: null,
      error: {
        code: 'Internal',
        managerCode: null,
        message: `Idempotency-Key: the first request with this key completed, but its answer is larger than the ${ANSWER_MAX} bytes kept for a replay; it is not sent again under this key`,
      },
      meta: { activityId: TRACE },
    });
    expect(await l.sends()).toBe(sent);
    // What is stored is the note, not the answer.
    expect(await l.stats('big')).toMatchObject({ records: 1, keyState: 'done', storedBytes: storedBytesOf(again) });
    expect(storedBytesOf(again)).toBeLessThan(ANSWER_MAX);
  });
});

describe('a ledger whose stored answers reach IDEMPOTENCY_LEDGER_MAX_MB', () => {
  it('refuses a new key before writing or sending anything, says when to retry, and takes it once old answers expire', async () => {
    const l = await fresh(1);
    await l.ledger.planLink({
      sends: [answerOf(2_900), answerOf(2_900), answerOf(2_900), answerOf(2_900), answerOf(2_900)],
    });
    const oldest = await l.send('k1');
    const oldestAt = await l.now();
    await l.ledger.advanceClock(10 * MINUTE);
    const answers = [oldest, await l.send('k2'), await l.send('k3')];
    const before = answers.reduce((n, r) => n + storedBytesOf(r), 0);
    expect(before).toBeLessThan(LEDGER_MAX);
    // Under the bound: taken, and its answer kept in full, which takes the ledger past it.
    const last = await l.send('k4');
    expect(body(last).error).toBeNull();
    const full = before + storedBytesOf(last);
    expect(full).toBeGreaterThanOrEqual(LEDGER_MAX);
    expect((await l.stats()).storedBytes).toBe(full);

    const sent = await l.sends();
    const asked = await l.now();
    const refused = await l.send('k5');
    // Freeing the oldest answer brings the ledger under its bound: the retry is due when it expires.
    const retryAfter = Math.ceil((oldestAt + HOUR - asked) / 1000);
    expect(retryAfter).toBeGreaterThan(49 * 60);
    expect(refused.status).toBe(429);
    expect(refused.headers).toStrictEqual({ 'Retry-After': String(retryAfter) });
    expect(body(refused)).toStrictEqual({
      data: null,
      error: {
        code: 'Forbidden',
        managerCode: null,
        message: `Idempotency-Key: this client's answers stored for replay in the ledger of this key have reached its ${LEDGER_MAX} bytes; the request was not sent; retry after ${retryAfter} s, when older keys expire`,
      },
      meta: { activityId: TRACE },
    });
    expect(await l.sends()).toBe(sent);
    expect(await l.stats('k5')).toMatchObject({ records: 4, inflight: 0, keyState: null, storedBytes: full });
    // Keys it holds still replay.
    const replay = await l.send('k2');
    expect(replayed(replay)).toBe('true');
    expect(replay.body).toBe(answers[1].body);

    // Past the oldest key's expiry, before any purge alarm: the key is taken and sent, the expired answer uncounted.
    await l.ledger.advanceClock(oldestAt + HOUR - (await l.now()) + 1_000);
    const taken = await l.send('k5');
    expect(body(taken).error).toBeNull();
    expect(replayed(taken)).toBeNull();
    expect(await l.sends()).toBe(sent + 1);
    const now = full - storedBytesOf(oldest) + storedBytesOf(taken);
    expect(await l.stats('k1')).toMatchObject({ records: 4, keyState: null, storedBytes: now });
    expect(await l.disk()).toStrictEqual({ rows: now, counted: now });
  });

  it('keeps an answer that arrives once the ledger is full as a note, so it holds at most its bound and one answer', async () => {
    const l = await fresh();
    await l.ledger.planLink({
      sends: [answerOf(2_900), answerOf(2_900), answerOf(2_900), { hold: true }, { hold: true }],
    });
    const filled = [await l.send('k1'), await l.send('k2'), await l.send('k3')].reduce(
      (n, r) => n + storedBytesOf(r),
      0,
    );
    // Two keys taken while the ledger is under its bound, their calls still on their way.
    const a = l.send('a');
    await until(async () => plain(await l.ledger.linkLog()).held === 1, 'the first held send');
    const b = l.send('b');
    await until(async () => plain(await l.ledger.linkLog()).held === 2, 'the second held send');
    await l.ledger.release({ ok: true, data: { pad: 'a'.repeat(2_900) } });
    const answerA = await a;
    await l.ledger.release({ ok: true, data: { pad: 'b'.repeat(2_900) } });
    const answerB = await b;
    // Both callers get their answer once.
    expect(body(answerA).data).toStrictEqual({ pad: 'a'.repeat(2_900) });
    expect(body(answerB).data).toStrictEqual({ pad: 'b'.repeat(2_900) });

    const replayA = await l.send('a');
    expect(replayA.body).toBe(answerA.body);
    const replayB = await l.send('b');
    expect(replayed(replayB)).toBe('true');
    expect(body(replayB).error).toStrictEqual({
      code: 'Internal',
      managerCode: null,
      message: `Idempotency-Key: the first request with this key completed, but its answer was not kept for a replay: this client's answers stored in the ledger of this key had reached its ${LEDGER_MAX} bytes; it is not sent again under this key`,
    });
    const stored = filled + storedBytesOf(answerA) + storedBytesOf(replayB);
    expect((await l.stats()).storedBytes).toBe(stored);
    expect(stored - storedBytesOf(replayB)).toBeLessThan(LEDGER_MAX + ANSWER_MAX);
    expect(await l.disk()).toStrictEqual({ rows: stored, counted: stored });
  });

  it('still records an outcome that cannot be known for a key it holds, full or not', async () => {
    const l = await fresh();
    await l.ledger.planLink({
      sends: [
        {
          answer: {
            ok: false,
            error: { code: 'NoConnect', managerCode: null, message: 'no answer from the trading platform within 5 s' },
            outcome: 'unknown',
          },
        },
        answerOf(2_900),
        answerOf(2_900),
        answerOf(2_900),
        answerOf(2_900),
      ],
    });
    await l.send('open');
    const callId = plain(await l.ledger.linkLog()).sends.at(-1)!;
    for (const key of ['k1', 'k2', 'k3', 'k4']) await l.send(key);
    expect((await l.stats()).storedBytes).toBeGreaterThanOrEqual(LEDGER_MAX);
    await l.ledger.settle(callId, { state: 'lost', reason: 'the manager connection dropped under the call' });
    const replay = await l.send('open');
    expect(replayed(replay)).toBe('true');
    expect(body(replay).error).toStrictEqual({
      code: 'NoConnect',
      managerCode: null,
      message:
        'Idempotency-Key: the outcome of the first request with this key cannot be known (the manager connection dropped under the call); it is not sent again under this key',
    });
    expect(await l.stats('open')).toMatchObject({ unknown: 1, keyState: 'unknown' });
    const { rows, counted } = await l.disk();
    expect(counted).toBe(rows);
  });
});

describe('the bounds as a caller of the edge meets them', () => {
  // One ledger per client, so every key of the test is in the same one.
  const t = edgeWithFakeBroker({
    IDEMPOTENCY_SHARDS: '1',
    IDEMPOTENCY_ANSWER_MAX_BYTES: String(ANSWER_MAX),
    IDEMPOTENCY_LEDGER_MAX_MB: '0.01',
  });
  const create = async (key: string) => {
    const res = await fetch(new URL(`/api/v2/PF4/${PF4_A}/UserRecordNew`, t.edge.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ group: 'demo', name: 'Alice' }),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      replayed: res.headers.get('idempotency-replayed'),
      body: (await res.json()) as ReturnType<typeof body>,
    };
  };
  const answering = (pad: number) =>
    t.broker.script.set('PF4.UserRecordNew', { reply: { ok: true, data: { login: 7, pad: 'x'.repeat(pad) } } });

  it('replays a note for an answer above the bound, and refuses a new key with 429 and Retry-After once the ledger is full', async () => {
    const run = randomUUID();
    answering(5_000);
    const big = await create(`${run}-big`);
    expect(big).toMatchObject({
      status: 200,
      replayed: null,
      body: { data: { login: 7, pad: 'x'.repeat(5_000) }, error: null },
    });
    const note = await create(`${run}-big`);
    expect(note).toMatchObject({
      status: 200,
      replayed: 'true',
      body: {
        data: null,
        error: {
          code: 'Internal',
          managerCode: null,
          message: `Idempotency-Key: the first request with this key completed, but its answer is larger than the ${ANSWER_MAX} bytes kept for a replay; it is not sent again under this key`,
        },
      },
    });
    expect(t.broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);

    answering(2_900);
    for (const n of [1, 2, 3, 4]) expect((await create(`${run}-${n}`)).body.error).toBeNull();
    expect(t.broker.framesFor('PF4.UserRecordNew')).toHaveLength(5);
    const refused = await create(`${run}-5`);
    expect(refused.status).toBe(429);
    // The oldest full answer expires 24 h (the default retention) after it was stored, a moment ago.
    const seconds = Number(refused.retryAfter);
    expect(seconds).toBeGreaterThan(23 * 3600);
    expect(seconds).toBeLessThanOrEqual(24 * 3600);
    expect(refused.body).toMatchObject({
      data: null,
      error: {
        code: 'Forbidden',
        managerCode: null,
        message: `Idempotency-Key: this client's answers stored for replay in the ledger of this key have reached its ${LEDGER_MAX} bytes; the request was not sent; retry after ${seconds} s, when older keys expire`,
      },
    });
    expect(t.broker.framesFor('PF4.UserRecordNew')).toHaveLength(5);
    // Keys the ledger holds still replay their answers.
    expect(await create(`${run}-2`)).toMatchObject({
      status: 200,
      replayed: 'true',
      body: { data: { pad: 'x'.repeat(2_900) }, error: null },
    });
  });
});
