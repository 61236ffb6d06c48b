/**
 * The catalog routes in real workerd against a scripted broker: envelope shape, input validation, time budgets,
 * confirm=true, manager code naming, v1 statuses, tenant isolation and family checks.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { PF4_A, PF4_B, PF5_A, type TestEdge } from '../support/edge.js';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';
import { edgeWithFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;
let token: string;

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const v2 = `/api/v2/PF4/${PF4_A}`;
const v1 = `/api/PF4/${PF4_A}`;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(options.body !== undefined || options.raw !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, headers: res.headers, body };
}
const get = (path: string, headers?: Record<string, string>) => call('GET', path, { headers });

const setup = edgeWithFakeBroker();
beforeAll(() => {
  ({ edge, broker, token } = setup);
});

describe('v2 envelope', () => {
  it('answers data with error present and null, and the incoming trace id as activityId', async () => {
    broker.script.set('ServerTime', { reply: { ok: true, data: '2030-01-02T03:04:05Z' } });
    const res = await get(`${v2}/ServerTime`, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ data: '2030-01-02T03:04:05Z', error: null, meta: { activityId: TRACE } });
    expect(res.headers.get('traceparent')).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(res.headers.get('x-request-timeout-applied')).toBe('10');
    const [frame] = broker.framesFor('ServerTime');
    expect(frame).toMatchObject({ platform: PF4_A, op: 'ServerTime', args: {}, timeoutMs: 10_000, traceId: TRACE });
  });

  it('makes a new trace id when traceparent is missing or malformed', async () => {
    const a = await get(`${v2}/ServerTime`);
    const b = await get(`${v2}/ServerTime`, { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` });
    for (const r of [a, b]) {
      expect(r.body.meta.activityId).toMatch(/^[0-9a-f]{32}$/);
      expect(r.body.meta.activityId).not.toBe('0'.repeat(32));
      expect(r.headers.get('traceparent')).toContain(r.body.meta.activityId);
    }
    expect(a.body.meta.activityId).not.toBe(b.body.meta.activityId);
  });

  it('adds paging from the broker on paged lists only, passing limit and cursor through', async () => {
    broker.script.set('PF4.UsersRequest', {
      reply: { ok: true, data: [{ login: 7 }], paging: { nextCursor: 'abc', hasMore: true } },
    });
    const res = await get(`${v2}/UsersRequest?limit=1&cursor=xyz&unknown=1`);
    expect(res.body).toStrictEqual({
      data: [{ login: 7 }],
      error: null,
      meta: { activityId: expect.any(String), paging: { nextCursor: 'abc', hasMore: true } },
    });
    expect(broker.framesFor('PF4.UsersRequest')[0].args).toStrictEqual({ limit: 1, cursor: 'xyz' });

    broker.script.set('PF4.UsersRequest', { reply: { ok: true, data: [] } });
    const last = await get(`${v2}/UsersRequest`);
    expect(last.body.meta.paging).toStrictEqual({ nextCursor: null, hasMore: false });

    broker.script.set('PF4.UserRecordGet', {
      reply: { ok: true, data: { login: 5 }, paging: { nextCursor: 'x', hasMore: true } },
    });
    const single = await get(`${v2}/UserRecordGet/5`);
    expect(single.body.meta).not.toHaveProperty('paging');
    expect(broker.framesFor('PF4.UserRecordGet')[0].args).toStrictEqual({ login: 5 });
  });

  it('names manager codes of the platform family, and leaves unknown codes as numbers', async () => {
    broker.script.set('PF4.UserRecordGet', {
      reply: { ok: false, error: { code: 'NotFound', managerCode: 3, message: 'login 9 not found' } },
    });
    const known = await get(`${v2}/UserRecordGet/9`);
    expect(known.body).toStrictEqual({
      data: null,
      error: { code: 'NotFound', managerCode: 'InvalidData', message: 'login 9 not found' },
      meta: { activityId: expect.any(String) },
    });
    broker.script.set('PF4.UserRecordGet', {
      reply: { ok: false, error: { code: 'PF4Error', managerCode: 9999, message: 'odd' } },
    });
    const unknown = await get(`${v2}/UserRecordGet/9`);
    expect(unknown.body.error).toStrictEqual({ code: 'PF4Error', managerCode: 9999, message: 'odd' });
    broker.script.set('PF5.UserGet', {
      reply: { ok: false, error: { code: 'NotFound', managerCode: 13, message: 'no user' } },
    });
    const pf5 = await get(`/api/v2/PF5/${PF5_A}/UserGet/9`);
    expect(pf5.body.error).toStrictEqual({ code: 'NotFound', managerCode: 'ErrNotfound', message: 'no user' });
  });
});

describe('validation', () => {
  const expectValidation = (r: Answer, message: string | RegExp) => {
    expect(r.status).toBe(200);
    expect(r.body.data).toBeNull();
    expect(r.body.error.code).toBe('Validation');
    expect(r.body.error.managerCode).toBeNull();
    if (typeof message === 'string') expect(r.body.error.message).toBe(message);
    else expect(r.body.error.message).toMatch(message);
    expect(typeof r.body.meta.activityId).toBe('string');
  };

  it('refuses logins that are not positive 32-bit integers, naming the field and the rule', async () => {
    expectValidation(await get(`${v2}/UserRecordGet/0`), 'login: login must be at least 1');
    expectValidation(await get(`${v2}/UserRecordGet/-1`), 'login: login must be a positive integer');
    expectValidation(await get(`${v2}/UserRecordGet/abc`), 'login: login must be a positive integer');
    expectValidation(await get(`${v2}/UserRecordGet/2147483648`), 'login: login must be at most 2147483647');
    expect(broker.frames).toHaveLength(0);
  });

  it('refuses a symbol over 12 characters, limits out of range and an over-long cursor', async () => {
    expectValidation(await get(`${v2}/TickInfoLast/ABCDEFGHIJKLM`), 'symbol: symbol must be at most 12 characters');
    expectValidation(await get(`${v2}/UsersRequest?limit=0`), 'limit: limit must be at least 1');
    expectValidation(await get(`${v2}/UsersRequest?limit=5001`), 'limit: limit must be at most 5000');
    expectValidation(
      await get(`${v2}/UsersRequest?cursor=${'c'.repeat(513)}`),
      'cursor: cursor must be at most 512 characters',
    );
    expect(broker.frames).toHaveLength(0);
  });

  it('answers v1 validation failures with 400 and the v1 error body', async () => {
    const res = await get(`${v1}/TradesGet/0`);
    expect(res.status).toBe(400);
    expect(res.body).toStrictEqual({
      errorType: 'Validation',
      errorCode: 'Validation',
      errorDescription: 'ticket: ticket must be at least 1',
    });
    expect(res.headers.get('x-request-timeout-applied')).toBe('10');
  });

  it('names body fields and malformed JSON', async () => {
    const missing = await call('POST', `${v2}/UserRecordNew`, { body: { name: 'x' } });
    expectValidation(missing, /^body\.group: /);
    const malformed = await call('POST', `${v2}/UserRecordNew`, { raw: '{"group":' });
    expectValidation(malformed, 'body: must be well-formed JSON');
    const absent = await call('POST', `${v2}/UserRecordNew`);
    expectValidation(absent, /^body: /);
    expect(broker.frames).toHaveLength(0);
  });

  it('refuses a tradePlatform that is not a uuid', async () => {
    expectValidation(await get('/api/v2/PF4/not-a-uuid/ServerTime'), 'tradePlatform: must be a uuid');
  });

  it('refuses bodies over 1 MiB', async () => {
    const big = JSON.stringify({ group: 'g', name: 'n', comment: 'x'.repeat(1024 * 1024) });
    const res = await postUnread(`${v2}/UserRecordNew`, big);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).error).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'body: must be at most 1048576 bytes',
    });
    const v1res = await postUnread(`/api/PF4/${PF4_A}/TradesGet/1`, big);
    expect(v1res.status).toBe(413);
    expect(broker.frames).toHaveLength(0);
  });
});

/**
 * POSTs a body the edge refuses by its declared length. The edge reads the refused body out (up to 16 MiB) before it
 * answers, so the upload ends before the answer; node:http on a connection of its own still takes an answer that
 * comes first, should a reset follow it.
 */
function postUnread(path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // A fresh connection each: one whose upload was refused unread cannot carry another request.
    const req = request(
      new URL(path, edge.url),
      {
        agent: false,
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        answered = true;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.end(body);
  });
}

describe('time budget', () => {
  it('applies the header or the query value and rejects values outside 1 to 300 seconds', async () => {
    const header = await get(`${v2}/ServerTime`, { 'x-request-timeout': '2.5' });
    expect(header.body.error).toBeNull();
    expect(header.headers.get('x-request-timeout-applied')).toBe('2.5');
    expect(broker.frames.at(-1)!.timeoutMs).toBe(2500);
    const query = await get(`${v2}/ServerTime?requestTimeout=300`);
    expect(query.headers.get('x-request-timeout-applied')).toBe('300');
    expect(broker.frames.at(-1)!.timeoutMs).toBe(300_000);
    for (const bad of ['0.5', '301', 'abc', '']) {
      const r = await get(`${v2}/ServerTime`, { 'x-request-timeout': bad });
      expect(r.body.error).toMatchObject({
        code: 'Validation',
        message: 'X-Request-Timeout: must be a number of seconds from 1 to 300',
      });
      expect(r.headers.get('x-request-timeout-applied')).toBe('10');
    }
    const q = await get(`${v2}/ServerTime?requestTimeout=301`);
    expect(q.body.error.message).toBe('requestTimeout: must be a number of seconds from 1 to 300');
    expect(broker.frames).toHaveLength(2);
  });

  it('defaults by class: read 10, change 15, maintenance 60, on failures too', async () => {
    expect((await get(`${v2}/UserRecordGet/0`)).headers.get('x-request-timeout-applied')).toBe('10');
    expect((await call('POST', `${v2}/UserRecordNew`, { body: {} })).headers.get('x-request-timeout-applied')).toBe(
      '15',
    );
    expect((await call('POST', `${v2}/SrvRestart`)).headers.get('x-request-timeout-applied')).toBe('60');
    expect((await get(`/api/v2/PF4/${randomUUID()}/ServerTime`)).headers.get('x-request-timeout-applied')).toBe('10');
    expect((await get(`${v1}/TradesGet/0`)).headers.get('x-request-timeout-applied')).toBe('10');
  });
});

describe('destructive operations', () => {
  it('need confirm=true; without it nothing reaches the broker', async () => {
    broker.script.set('PF4.SrvRestart', { reply: { ok: true, data: true } });
    for (const q of ['', '?confirm=false', '?confirm=yes']) {
      const r = await call('POST', `${v2}/SrvRestart${q}`);
      expect(r.body.error).toStrictEqual({
        code: 'Validation',
        managerCode: null,
        message: 'confirm: must be true for this destructive operation',
      });
    }
    expect(broker.frames).toHaveLength(0);
    const ok = await call('POST', `${v2}/SrvRestart?confirm=true`);
    expect(ok.body).toMatchObject({ data: true, error: null });
    expect(ok.headers.get('x-request-timeout-applied')).toBe('60');
    expect(broker.framesFor('PF4.SrvRestart')).toHaveLength(1);
    expect(broker.frames[0].args).toStrictEqual({});
  });

  it("take confirm=true in any case, as a client's generated code writes it (True)", async () => {
    broker.script.set('PF4.SrvRestart', { reply: { ok: true, data: true } });
    const before = broker.framesFor('PF4.SrvRestart').length;
    for (const q of ['?confirm=True', '?confirm=TRUE'])
      expect((await call('POST', `${v2}/SrvRestart${q}`)).body).toMatchObject({ data: true, error: null });
    expect(broker.framesFor('PF4.SrvRestart')).toHaveLength(before + 2);
    expect((await call('POST', `${v2}/SrvRestart?confirm=False`)).body.error).toMatchObject({
      message: 'confirm: must be true for this destructive operation',
    });
    expect(broker.framesFor('PF4.SrvRestart')).toHaveLength(before + 2);
  });
});

describe('v1', () => {
  it('answers the bare record on success', async () => {
    broker.script.set('PF4.TradesGetTicket', { reply: { ok: true, data: { order: 5, login: 1 } } });
    const res = await get(`${v1}/TradesGet/5`);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ order: 5, login: 1 });
  });

  it('answers a ticket that is not open with 404 and the HTTPError body', async () => {
    broker.script.set('PF4.TradesGetTicket', {
      reply: { ok: false, error: { code: 'NotFound', managerCode: 3, message: 'ticket 77 is not open' } },
    });
    const res = await get(`${v1}/TradesGet/77`);
    expect(res.status).toBe(404);
    expect(res.body).toStrictEqual({
      errorType: 'PF4API',
      errorCode: 'InvalidData',
      errorDescription: 'ticket 77 is not open',
    });
  });

  it('maps failures to statuses and v1 error bodies: platform refusal 400, link down 503, time-out 504, internal 500', async () => {
    const cases: Array<[unknown, number, unknown]> = [
      [
        { ok: false, error: { code: 'PF4Error', managerCode: PF4_RESULT.NotEnoughRights, message: 'rights' } },
        400,
        { errorType: 'PF4API', errorCode: 'NotEnoughRights', errorDescription: 'rights' },
      ],
      [
        { ok: false, error: { code: 'NoConnect', managerCode: null, message: 'down' } },
        503,
        { errorType: 'NoConnect', errorCode: 'NoConnect', errorDescription: 'down' },
      ],
      [
        { ok: false, error: { code: 'NoConnect', managerCode: null, message: 'slow' }, timedOut: true },
        504,
        { errorType: 'Timeout', errorCode: 'NoConnect', errorDescription: 'slow' },
      ],
      [
        { ok: false, error: { code: 'Internal', managerCode: null, message: 'bug' } },
        500,
        { errorType: 'Internal', errorCode: 'Internal', errorDescription: 'bug' },
      ],
    ];
    for (const [reply, status, body] of cases) {
      broker.script.set('PF4.UserRecordGet', { reply: reply as never });
      const res = await get(`${v1}/UserRecordGet/5`);
      expect({ status: res.status, body: res.body }).toStrictEqual({ status, body });
      expect(res.headers.get('x-request-timeout-applied')).toBe('10');
    }
  });

  it('answers a PF5 platform refusal with the PF5Error body carrying the trace as requestId', async () => {
    broker.script.set('PF5.UserGet', {
      reply: { ok: false, error: { code: 'PF5Error', managerCode: PF5_RESULT.ErrPermissions, message: 'no rights' } },
    });
    const res = await get(`/api/PF5/${PF5_A}/UserGet/500001`, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` });
    expect(res.status).toBe(400);
    expect(res.body).toStrictEqual({
      errorDescription: 'no rights',
      errorCode: 'ErrPermissions',
      errorType: 'PF5API',
      requestId: '4bf92f35-77b3-4da6-a3ce-929d0e0e4736',
    });
  });
});

describe('platform scoping', () => {
  it("answers another organization's platform exactly like an unknown one", async () => {
    const stranger = randomUUID();
    const foreign = await get(`/api/v2/PF4/${PF4_B}/ServerTime`, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` });
    const unknown = await get(`/api/v2/PF4/${stranger}/ServerTime`, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` });
    expect(foreign.body).toStrictEqual({
      data: null,
      error: { code: 'NotFound', managerCode: null, message: `trade platform ${PF4_B} not found` },
      meta: { activityId: TRACE },
    });
    expect(JSON.stringify(foreign.body).replace(PF4_B, 'X')).toBe(JSON.stringify(unknown.body).replace(stranger, 'X'));
    const v1Foreign = await get(`/api/PF4/${PF4_B}/TradesGet/1`);
    const v1Unknown = await get(`/api/PF4/${stranger}/TradesGet/1`);
    expect(v1Foreign.status).toBe(404);
    expect(v1Unknown.status).toBe(404);
    expect(v1Foreign.body).toStrictEqual({
      errorType: 'NotFound',
      errorCode: 'NotFound',
      errorDescription: `trade platform ${PF4_B} not found`,
    });
    expect(JSON.stringify(v1Foreign.body).replace(PF4_B, 'X')).toBe(
      JSON.stringify(v1Unknown.body).replace(stranger, 'X'),
    );
    expect(broker.frames).toHaveLength(0);
  });

  it('answers a platform of the other family as not found', async () => {
    const res = await get(`/api/v2/PF4/${PF5_A}/ServerTime`);
    expect(res.body.error).toStrictEqual({
      code: 'NotFound',
      managerCode: null,
      message: `trade platform ${PF5_A} not found`,
    });
    const v1res = await get(`/api/PF4/${PF5_A}/UserRecordGet/1`);
    expect(v1res.status).toBe(404);
    expect(v1res.body).toStrictEqual({
      errorType: 'NotFound',
      errorCode: 'NotFound',
      errorDescription: `trade platform ${PF5_A} not found`,
    });
    expect(broker.frames).toHaveLength(0);
  });

  it('pings a platform of either family through the registry route', async () => {
    broker.script.set('Ping', { reply: { ok: true, data: { roundTripMs: 3 } } });
    for (const id of [PF4_A, PF5_A]) {
      const res = await get(`/api/TradePlatforms/${id}/Ping`);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ roundTripMs: 3 });
    }
    expect(broker.framesFor('Ping').map((f) => f.platform)).toEqual([PF4_A, PF5_A]);
    expect((await get(`/api/TradePlatforms/${PF4_B}/Ping`)).status).toBe(404);
  });

  it('needs a token on catalog routes, and answers unknown routes with JSON: a v2 envelope under /api/v2/, else 404', async () => {
    const res = await fetch(new URL(`${v2}/ServerTime`, edge.url));
    expect(res.status).toBe(401);
    const missing = await get('/api/v2/PF4/nothing/here/at/all');
    expect(missing.status).toBe(200);
    expect(missing.body).toMatchObject({ data: null, error: { code: 'NotFound' } });
    const v1Missing = await get('/api/PF4/nothing/here/at/all');
    expect(v1Missing.status).toBe(404);
    expect(v1Missing.body).toMatchObject({ errorType: 'NotFound' });
  });

  it("names each request's region in X-Gateway-Region: its own on the local edge, else EDGE_REGION; a wrong one refused", async () => {
    const named = await fetch(new URL('/livez', edge.url), { headers: { 'x-gateway-region': 'Apac' } });
    expect(named.headers.get('x-gateway-region')).toBe('apac');
    const unnamed = await get(`${v2}/ServerTime`);
    expect(unnamed.headers.get('x-gateway-region')).toBe('weur');
    const wrong = await fetch(new URL(`${v2}/ServerTime`, edge.url), { headers: { 'x-gateway-region': 'eu' } });
    expect(wrong.status).toBe(200);
    expect(await wrong.json()).toMatchObject({
      data: null,
      error: {
        code: 'Validation',
        message: 'X-Gateway-Region: must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me',
      },
    });
    const v1Wrong = await fetch(new URL('/livez', edge.url), { headers: { 'x-gateway-region': 'eu' } });
    expect(v1Wrong.status).toBe(400);
  });

  it('serves /livez without a token', async () => {
    const res = await fetch(new URL('/livez', edge.url));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
  });
});
