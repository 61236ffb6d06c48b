/**
 * The gateway objects in real workerd against a scripted broker: Idempotency-Key replay, conflicts and concurrent
 * duplicates; keys of calls past their deadline kept bound and resolved from the broker's outcome (asked on a retry,
 * or pushed late), never sent twice; link objects spreading a platform's calls, answering every call in flight when
 * links drop, and reconnecting; the Forbidden result, the link's shared secret, and key retention. (That the link
 * outlives its 5 s handshake bound is shown on fake timers in workers/gateway/brokerLink.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestEdge, LOCAL_HOME, ORG_A, PF4_A, type TestEdge } from '../support/edge.js';
import { edgeWithFakeBroker, startFakeBroker, type FakeBroker, type Reply } from './gatewayFakeBroker.js';
import {
  DEFAULT_IDEMPOTENCY_SHARDS,
  DEFAULT_LINKS_PER_PLATFORM,
  ledgerName,
  linkName,
} from '../../workers/gateway/names.js';
import type { OutcomeReport } from '../../shared/frames.js';
import { until } from '../support/until.js';
import { objectCall } from '../../launcher/edge.js';

/** What `IdempotencyLedger.stats()` and `PlatformLink.stats()` answer (workers/gateway/messages.ts, Workers-typed). */
interface LedgerStats {
  records: number;
  inflight: number;
  unknown: number;
  storedBytes: number;
  nextAlarm: number | null;
  keyState: string | null;
}
interface LinkStats {
  calls: number;
  pending: number;
  connected: boolean;
  lateRoutes: number;
}

let edge: TestEdge;
let broker: FakeBroker;
let token: string;

const v2 = `/api/v2/PF4/${PF4_A}`;
const user = { group: 'demo', name: 'Alice' };

interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

async function call(
  target: TestEdge,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  bearer = token,
): Promise<Answer> {
  const res = await fetch(new URL(path, target.url), {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
const create = (body: unknown, key?: string, query = '', target = edge) =>
  call(target, 'POST', `${v2}/UserRecordNew${query}`, body, key === undefined ? {} : { 'idempotency-key': key });

/**
 * The figures of the ledger that owns `key`, with that key's own state, read through Miniflare (the test client is
 * `client-a`). The ledger is shared with other keys of the file, so a test waits on `keyState`, never on the counts.
 */
async function ledgerStats(target: TestEdge, key: string): Promise<LedgerStats> {
  return objectCall<LedgerStats>(
    target.miniflare,
    'IDEMPOTENCY',
    ledgerName('client-a', key, DEFAULT_IDEMPOTENCY_SHARDS),
    'stats',
    `client-a:${key}`,
  );
}

/** Every link object's figures for one platform. */
async function linkStats(target: TestEdge, platform: string): Promise<LinkStats[]> {
  return Promise.all(
    Array.from({ length: DEFAULT_LINKS_PER_PLATFORM }, (_, n) =>
      objectCall<LinkStats>(target.miniflare, 'LINKS', linkName(platform, LOCAL_HOME.region, n), 'stats'),
    ),
  );
}

/** A fresh PF4 platform of ORG_A, served by `brokerUrl` (null: the edge's BROKER_URL). */
async function addPlatform(target: TestEdge, brokerUrl: string | null = null): Promise<string> {
  const id = randomUUID();
  await (await target.db())
    .prepare(
      'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .bind(id, 'fresh PF4', 'PF4', ORG_A, brokerUrl, new Date(0).toISOString())
    .run();
  return id;
}

const timedOutUnknown: Reply = {
  ok: false,
  error: { code: 'NoConnect', managerCode: null, message: 'timed out' },
  outcome: 'unknown',
  timedOut: true,
};
const outcomeIs = (report: OutcomeReport) => ({ reply: { ok: true as const, data: report } });

let nextLogin = 1000;
const createdReply = {
  reply: (f: { args: Record<string, unknown> }) => ({
    ok: true as const,
    data: { login: nextLogin++, ...(f.args.body as object) },
  }),
};

const setup = edgeWithFakeBroker();
beforeAll(() => {
  ({ edge, broker, token } = setup);
});

describe('Idempotency-Key', () => {
  it('replays the first answer to a repeated call without reaching the broker again', async () => {
    broker.script.set('PF4.UserRecordNew', createdReply);
    const key = randomUUID();
    const first = await create(user, key);
    const second = await create({ name: 'Alice', group: 'demo' }, key); // same body, other key order
    expect(first.body).toMatchObject({ data: { login: expect.any(Number), name: 'Alice' }, error: null });
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect(second.text).toBe(first.text);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.headers.get('x-request-timeout-applied')).toBe('15');
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
    expect(broker.frames[0].args).toStrictEqual({ body: user });
  });

  it('refuses a key reused with a different request, forwarding nothing', async () => {
    broker.script.set('PF4.UserRecordNew', createdReply);
    const key = randomUUID();
    await create(user, key);
    const other = await create({ ...user, name: 'Bob' }, key);
    expect(other.body).toStrictEqual({
      data: null,
      error: {
        code: 'Validation',
        managerCode: null,
        message: 'Idempotency-Key: already used with a different request',
      },
      meta: { activityId: expect.any(String) },
    });
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
  });

  it('lets a concurrent duplicate wait for the first call, so the change applies once', async () => {
    broker.script.set('PF4.UserRecordNew', { ...createdReply, delayMs: 300 });
    const key = randomUUID();
    const [a, b] = await Promise.all([create(user, key), create(user, key)]);
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
    expect(a.body.data).toStrictEqual(b.body.data);
    expect([a.headers.get('idempotency-replayed'), b.headers.get('idempotency-replayed')].sort()).toEqual(
      [null, 'true'].sort(),
    );
  });

  it('keeps keys apart per client', async () => {
    broker.script.set('PF4.UserRecordNew', createdReply);
    const key = randomUUID();
    const mine = await create(user, key);
    const otherToken = await edge.token({ client_id: 'client-other' });
    const theirs = await call(edge, 'POST', `${v2}/UserRecordNew`, user, { 'idempotency-key': key }, otherToken);
    expect(theirs.headers.get('idempotency-replayed')).toBeNull();
    expect(theirs.body.data.login).not.toBe(mine.body.data.login);
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(2);
  });

  it('stores platform refusals but not link failures or validation failures', async () => {
    broker.script.set('PF4.UserRecordNew', {
      reply: { ok: false, error: { code: 'PF4Error', managerCode: 3, message: 'login exists' } },
    });
    const key = randomUUID();
    const refused = await create(user, key);
    const again = await create(user, key);
    expect(again.text).toBe(refused.text);
    expect(again.body.error).toStrictEqual({ code: 'PF4Error', managerCode: 'InvalidData', message: 'login exists' });
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);

    broker.script.set('PF4.UserRecordNew', {
      reply: { ok: false, error: { code: 'NoConnect', managerCode: null, message: 'session down' } },
    });
    const key2 = randomUUID();
    await create(user, key2);
    broker.script.set('PF4.UserRecordNew', createdReply);
    const retried = await create(user, key2);
    expect(retried.body.error).toBeNull();
    expect(retried.headers.get('idempotency-replayed')).toBeNull();

    const key3 = randomUUID();
    const invalid = await create({ name: 'no group' }, key3);
    expect(invalid.body.error.code).toBe('Validation');
    const valid = await create({ name: 'no group', group: 'g' }, key3);
    expect(valid.body.error).toBeNull();
  });

  it('checks the key form', async () => {
    for (const key of ['x'.repeat(256), 'has space', 'tab\there']) {
      const res = await call(edge, 'POST', `${v2}/UserRecordNew`, user, { 'idempotency-key': key });
      expect(res.body.error).toMatchObject({
        code: 'Validation',
        message: 'Idempotency-Key: must be 1 to 255 visible ASCII characters',
      });
    }
    expect(broker.frames).toHaveLength(0);
  });
});

describe('deadlines and outcomes', () => {
  it('keeps the key of a change the broker reports past its deadline bound: a retry asks for the outcome and replays it, never sending the change again', async () => {
    broker.script.set('PF4.UserRecordNew', { reply: timedOutUnknown });
    const key = randomUUID();
    const res = await create(user, key);
    expect(res.headers.get('x-request-outcome')).toBe('unknown');
    expect(res.body.error).toMatchObject({ code: 'NoConnect', message: 'timed out' });
    const [sent] = broker.framesFor('PF4.UserRecordNew');
    expect(sent.callId).toEqual(expect.any(String));

    broker.script.set(
      '#outcome',
      outcomeIs({ state: 'settled', result: { ok: true, data: { login: 4242, ...user } } }),
    );
    const retry = await create(user, key);
    expect(retry.body).toMatchObject({ data: { login: 4242, name: 'Alice' }, error: null });
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.headers.get('x-request-outcome')).toBeNull();
    const again = await create(user, key);
    expect(again.text).toBe(retry.text);
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
    // One query settled the key; the next retry replays the stored answer.
    expect(broker.queries.filter((q) => q.callId === sent.callId)).toHaveLength(1);
    expect(broker.queries[0]).toMatchObject({ platform: PF4_A, op: '#outcome', args: {} });
  });

  it('answers every retry of a change whose outcome can never be known with that, and never sends it again', async () => {
    for (const report of [
      { state: 'lost', reason: 'the manager connection dropped before the trading server answered' },
      { state: 'unknown' },
    ] as const) {
      broker.script.set('PF4.UserRecordNew', { reply: timedOutUnknown });
      const key = randomUUID();
      await create(user, key);
      broker.script.set('#outcome', outcomeIs(report));
      const why = report.state === 'lost' ? report.reason : 'the broker no longer knows the call';
      for (let i = 0; i < 2; i++) {
        const retry = await create(user, key);
        expect(retry.body.error).toStrictEqual({
          code: 'NoConnect',
          managerCode: null,
          message: `Idempotency-Key: the outcome of the first request with this key cannot be known (${why}); it is not sent again under this key`,
        });
        expect(retry.headers.get('x-request-outcome')).toBe('unknown');
        expect(retry.headers.get('idempotency-replayed')).toBe('true');
      }
    }
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(2);
    expect(broker.queries).toHaveLength(2);
  });

  it('tells a retry that the change is still in progress while the broker waits for it', async () => {
    broker.script.set('PF4.UserRecordNew', { reply: timedOutUnknown });
    const key = randomUUID();
    await create(user, key);
    broker.script.set('#outcome', outcomeIs({ state: 'pending' }));
    const busy = await create(user, key);
    expect(busy.body).toStrictEqual({
      data: null,
      error: {
        code: 'NoConnect',
        managerCode: null,
        message: 'Idempotency-Key: the first request with this key is still in progress; repeat it to get its outcome',
      },
      meta: { activityId: expect.any(String) },
    });
    expect(busy.headers.get('x-request-outcome')).toBe('unknown');
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.headers.get('idempotency-replayed')).toBeNull();
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
    // The query waits on the broker within the retry's own budget.
    expect(broker.queries.at(-1)!.timeoutMs).toBeGreaterThan(10_000);
    expect(broker.queries.at(-1)!.timeoutMs).toBeLessThanOrEqual(15_000);
  });

  it('frees the key when the outcome says the change was never sent: the retry sends it afresh under a new call id', async () => {
    broker.script.set('PF4.UserRecordNew', { reply: timedOutUnknown });
    const key = randomUUID();
    await create(user, key);
    broker.script.set(
      '#outcome',
      outcomeIs({
        state: 'settled',
        result: {
          ok: false,
          timedOut: true,
          error: {
            code: 'NoConnect',
            managerCode: null,
            message: 'the call was not sent: its deadline passed before the manager session was ready',
          },
        },
      }),
    );
    broker.script.set('PF4.UserRecordNew', createdReply);
    const retry = await create(user, key);
    expect(retry.body).toMatchObject({ data: { name: 'Alice' }, error: null });
    expect(retry.headers.get('idempotency-replayed')).toBeNull();
    const [first, second] = broker.framesFor('PF4.UserRecordNew');
    expect(second.callId).toEqual(expect.any(String));
    expect(second.callId).not.toBe(first.callId);
  });

  it('completes the stored record with a late outcome pushed on the link, so a retry replays it without asking', async () => {
    broker.script.set('PF4.UserRecordNew', {
      reply: timedOutUnknown,
      late: { afterMs: 50, report: { state: 'settled', result: { ok: true, data: { login: 777, ...user } } } },
    });
    const key = randomUUID();
    const first = await create(user, key);
    expect(first.headers.get('x-request-outcome')).toBe('unknown');
    await until(async () => (await ledgerStats(edge, key)).keyState === 'done', 'the late outcome to reach the ledger');
    const retry = await create(user, key);
    expect(retry.body).toMatchObject({ data: { login: 777 }, error: null });
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(broker.queries).toHaveLength(0);
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
  });

  it('gives up on a hung broker after the budget: unknown outcome for a change, none for a read', async () => {
    const v1 = await call(edge, 'GET', `/api/PF4/${PF4_A}/UserRecordGet/1?requestTimeout=1`);
    expect(v1.status).toBe(200); // unscripted op: the default reply
    broker.script.set('PF4.UserRecordNew', { hang: true });
    broker.script.set('ServerTime', { hang: true });
    broker.script.set('PF4.UserRecordGet', { hang: true });
    // The three budgets run out side by side.
    const [change, read, v1Slow] = await Promise.all([
      create(user, randomUUID(), '?requestTimeout=1'),
      call(edge, 'GET', `${v2}/ServerTime`, undefined, { 'x-request-timeout': '1' }),
      call(edge, 'GET', `/api/PF4/${PF4_A}/UserRecordGet/1?requestTimeout=1`),
    ]);
    expect(change.headers.get('x-request-outcome')).toBe('unknown');
    expect(change.headers.get('x-request-timeout-applied')).toBe('1');
    expect(change.body.error).toMatchObject({ code: 'NoConnect', managerCode: null });
    expect(read.headers.get('x-request-outcome')).toBeNull();
    expect(read.body.error.code).toBe('NoConnect');
    expect(v1Slow.status).toBe(504);
  });

  it("spreads a platform's calls over its link objects, each sharing one link among its calls", async () => {
    const fresh = await addPlatform(edge);
    const before = broker.links;
    broker.script.set('ServerTime', { reply: { ok: true, data: 't' }, delayMs: 50 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call(edge, 'GET', `/api/v2/PF4/${fresh}/ServerTime`)),
    );
    expect(answers.map((a) => a.body.data)).toEqual(Array(20).fill('t'));
    const stats = await linkStats(edge, fresh);
    expect(stats.reduce((n, s) => n + s.calls, 0)).toBe(20);
    const used = stats.filter((s) => s.calls > 0);
    expect(used.length).toBeGreaterThan(1);
    expect(used.every((s) => s.connected)).toBe(true);
    expect(broker.links - before).toBe(used.length);
    // Within each link, every call has its own id.
    const byLink = new Map<number, number[]>();
    broker.frames.forEach((f, i) =>
      byLink.set(broker.frameLinks[i], [...(byLink.get(broker.frameLinks[i]) ?? []), f.id]),
    );
    expect(byLink.size).toBe(used.length);
    for (const ids of byLink.values()) expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers every call in flight on every link object when the broker drops its links', async () => {
    broker.script.set('ServerTime', { hang: true });
    broker.script.set('PF4.UserRecordNew', { hang: true });
    const keys = [randomUUID(), randomUUID(), randomUUID()];
    const reads = Array.from({ length: 12 }, () => call(edge, 'GET', `${v2}/ServerTime`));
    const changes = keys.map((key) => create(user, key));
    await until(() => broker.frames.length === 15, 'every call to reach the broker');
    expect(new Set(broker.frameLinks).size).toBeGreaterThan(1);
    broker.dropLinks();
    for (const read of await Promise.all(reads)) {
      expect(read.status).toBe(200);
      expect(read.body.error).toStrictEqual({ code: 'NoConnect', managerCode: null, message: 'broker link lost' });
      expect(read.headers.get('x-request-outcome')).toBeNull();
    }
    for (const change of await Promise.all(changes)) {
      expect(change.body.error).toStrictEqual({ code: 'NoConnect', managerCode: null, message: 'broker link lost' });
      expect(change.headers.get('x-request-outcome')).toBe('unknown');
    }
    // The keys stay bound: a retry asks the broker rather than sending the change again.
    broker.script.set('#outcome', outcomeIs({ state: 'unknown' }));
    const retry = await create(user, keys[0]);
    expect(retry.body.error.message).toMatch(/cannot be known/);
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(3);
  });
});

/**
 * A second edge on the same broker, for the cases of one link object per platform and of a one-second idempotency
 * retention: the two settings touch different objects, so one edge serves both. The link cases call as a client of
 * their own, so the retention case's client ledger holds only its own key.
 */
let single: TestEdge;
let singleToken: string;
beforeAll(async () => {
  single = await startTestEdge({
    vars: { BROKER_URL: broker.url, LINKS_PER_PLATFORM: '1', IDEMPOTENCY_RETENTION_HOURS: String(1 / 3600) },
  });
  singleToken = await single.token({ client_id: 'client-one-link' });
}, 60_000);
afterAll(async () => {
  await single?.close();
});

describe('one link object per platform (LINKS_PER_PLATFORM=1)', () => {
  const get = (path: string) => call(single, 'GET', path, undefined, {}, singleToken);

  it('fails calls in flight when the link drops, and reconnects on the next call', async () => {
    const create = (body: unknown, key: string) =>
      call(single, 'POST', `${v2}/UserRecordNew`, body, { 'idempotency-key': key }, singleToken);
    broker.script.set('ServerTime', { reply: { ok: true, data: 'now' } });
    await get(`${v2}/ServerTime`);
    const linksBefore = broker.links;
    broker.script.set('PF4.UserRecordNew', { hang: true });
    broker.script.set('ServerTime', { drop: true });
    const change = create(user, randomUUID());
    await until(() => broker.framesFor('PF4.UserRecordNew').length > 0, 'the change to reach the broker');
    const read = await get(`${v2}/ServerTime`);
    expect(read.body.error).toStrictEqual({ code: 'NoConnect', managerCode: null, message: 'broker link lost' });
    expect(read.headers.get('x-request-outcome')).toBeNull();
    const lost = await change;
    expect(lost.body.error).toStrictEqual({ code: 'NoConnect', managerCode: null, message: 'broker link lost' });
    expect(lost.headers.get('x-request-outcome')).toBe('unknown');

    broker.script.set('ServerTime', { reply: { ok: true, data: 'again' } });
    const next = await get(`${v2}/ServerTime`);
    expect(next.body).toMatchObject({ data: 'again', error: null });
    // A new link was opened after the drop (the lost change's ledger may open one too when it asks for the outcome).
    expect(broker.links).toBeGreaterThan(linksBefore);
  });

  it('shares one link between concurrent calls', async () => {
    // A platform registered just now: its link object has no link yet, so the 20 calls below must open exactly one.
    const fresh = await addPlatform(single);
    const before = broker.links;
    broker.script.set('ServerTime', { reply: { ok: true, data: 't' }, delayMs: 50 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(`/api/v2/PF4/${fresh}/ServerTime`)));
    expect(answers.map((a) => a.body.data)).toEqual(Array(20).fill('t'));
    expect(broker.frames.map((f) => f.platform)).toEqual(Array(20).fill(fresh));
    // All 20 came on one link, opened for them (another platform's link reconnecting meanwhile does not count).
    expect(new Set(broker.frameLinks)).toStrictEqual(new Set([broker.frameLinks[0]]));
    expect(broker.frameLinks[0]).toBeGreaterThan(before);
    expect(new Set(broker.frames.map((f) => f.id)).size).toBe(20);
  });
});

describe('the Forbidden result', () => {
  const forbidden = {
    ok: false as const,
    error: { code: 'Forbidden' as const, managerCode: null, message: 'not allowed for this manager' },
  };

  it('answers a v2 Forbidden envelope, stores it under an Idempotency-Key and replays it', async () => {
    broker.script.set('PF4.UserRecordNew', { reply: forbidden });
    const key = randomUUID();
    const first = await create(user, key);
    expect(first.status).toBe(200);
    expect(first.body).toStrictEqual({
      data: null,
      error: { code: 'Forbidden', managerCode: null, message: 'not allowed for this manager' },
      meta: { activityId: expect.any(String) },
    });
    const again = await create(user, key);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(1);
  });

  it('answers v1 with 403 and the v1 error body', async () => {
    broker.script.set('PF4.UserRecordGet', { reply: forbidden });
    const res = await call(edge, 'GET', `/api/PF4/${PF4_A}/UserRecordGet/5`);
    expect(res.status).toBe(403);
    expect(res.body).toStrictEqual({
      errorType: 'Forbidden',
      errorCode: 'Forbidden',
      errorDescription: 'not allowed for this manager',
    });
    expect(res.headers.get('x-request-timeout-applied')).toBe('10');
  });
});

describe('broker link authentication and idempotency retention', () => {
  it('sends the shared secret; a broker refusing it answers NoConnect without an unknown outcome', async () => {
    // A broker expecting another secret than the edge's BROKER_SECRET, serving a platform of its own.
    const other = await startFakeBroker('another-secret');
    try {
      const id = await addPlatform(edge, other.url);
      const res = await call(edge, 'POST', `/api/v2/PF4/${id}/UserRecordNew`, user);
      expect(res.body.error.code).toBe('NoConnect');
      expect(res.body.error.message).toMatch(/broker unreachable: link refused with HTTP 401/);
      expect(res.headers.get('x-request-outcome')).toBeNull();
      expect(other.refused).toBe(1);
      expect(other.frames).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('forgets keys after IDEMPOTENCY_RETENTION_HOURS', async () => {
    const short = single;
    const t = await short.token();
    broker.script.set('PF4.UserRecordNew', createdReply);
    const key = randomUUID();
    const send = () => call(short, 'POST', `${v2}/UserRecordNew`, user, { 'idempotency-key': key }, t);
    const first = await send();
    expect((await send()).headers.get('idempotency-replayed')).toBe('true');
    // Repeats replay the first answer until the one-second retention has passed; then the key is free again.
    const fresh = await until(async () => {
      const r = await send();
      return r.headers.get('idempotency-replayed') === null ? r : null;
    }, 'the key to expire');
    expect(fresh.body.data.login).not.toBe(first.body.data.login);
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(2);
    // The alarm purges the record once it expires, and is not armed again while the ledger holds none.
    const stats = () => ledgerStats(short, key);
    expect(await stats()).toMatchObject({
      records: 1,
      inflight: 0,
      unknown: 0,
      nextAlarm: expect.any(Number),
      keyState: 'done',
    });
    await until(async () => (await stats()).records === 0, 'the purge alarm');
    await until(async () => (await stats()).nextAlarm === null, 'the alarm to stay off');
    expect(await stats()).toStrictEqual({
      records: 0,
      inflight: 0,
      unknown: 0,
      storedBytes: 0,
      nextAlarm: null,
      keyState: null,
    });
  });
});
