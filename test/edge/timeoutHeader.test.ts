/**
 * `X-Request-Timeout-Applied` on every answer under /api/, in real workerd against a scripted broker: the operation
 * routes (successes, the broker's time-out, validation refusals, an unknown platform), the registry routes (which
 * also take and check the budget), and the answers the edge makes before any operation runs (the token guard's
 * 401/403/400, an oversize body, an unknown route). The value is the budget that applied: the valid requested one,
 * else the addressed operation's class default. Routes outside /api/ carry none.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ORG_A, PF4_A, PF4_B, type TestEdge } from '../support/edge.js';
import { edgeWithFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;
let token: string;

const APPLIED = 'x-request-timeout-applied';
/** The edge's body bound (workers/app.ts MAX_BODY_BYTES; that module only loads inside workerd). */
const MAX_BODY_BYTES = 1024 * 1024;
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
  options: { token?: string | null; headers?: Record<string, string>; raw?: string } = {},
): Promise<Answer> {
  const auth: Record<string, string> =
    options.token === null ? {} : { authorization: `Bearer ${options.token ?? token}` };
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      ...auth,
      ...(options.raw !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.raw,
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
const get = (path: string, options?: Parameters<typeof call>[2]) => call('GET', path, options);

const setup = edgeWithFakeBroker();
beforeAll(() => {
  ({ edge, broker, token } = setup);
});

describe('X-Request-Timeout-Applied on operation routes', () => {
  it('answers the budget a forwarded call ran with, and the broker received the same', async () => {
    broker.script.set('ServerTime', { reply: { ok: true, data: '2030-01-02T03:04:05Z' } });
    const plain = await get(`${v2}/ServerTime`);
    expect(plain.body).toMatchObject({ data: '2030-01-02T03:04:05Z', error: null });
    expect(plain.headers.get(APPLIED)).toBe('10');
    const asked = await get(`${v2}/ServerTime?requestTimeout=2.5`);
    expect(asked.headers.get(APPLIED)).toBe('2.5');
    expect(broker.frames.map((f) => f.timeoutMs)).toEqual([10_000, 2_500]);
  });

  it('answers it on a call that ran out of time', async () => {
    broker.script.set('ServerTime', { hang: true });
    const res = await get(`${v2}/ServerTime`, { headers: { 'x-request-timeout': '1' } });
    expect(res.body.error).toMatchObject({ code: 'NoConnect' });
    expect(res.headers.get(APPLIED)).toBe('1');
  }, 20_000);

  it('answers it on validation refusals and on an unknown or foreign platform, without calling the broker', async () => {
    const badLogin = await get(`${v2}/UserRecordGet/0`, { headers: { 'x-request-timeout': '3' } });
    expect(badLogin.body.error).toMatchObject({ code: 'Validation' });
    expect(badLogin.headers.get(APPLIED)).toBe('3');
    const badBudget = await get(`${v2}/ServerTime?requestTimeout=0`);
    expect(badBudget.body.error).toMatchObject({
      code: 'Validation',
      message: 'requestTimeout: must be a number of seconds from 1 to 300',
    });
    expect(badBudget.headers.get(APPLIED)).toBe('10');
    for (const platform of [randomUUID(), PF4_B]) {
      const res = await get(`/api/v2/PF4/${platform}/ServerTime`);
      expect(res.body.error).toMatchObject({ code: 'NotFound' });
      expect(res.headers.get(APPLIED)).toBe('10');
    }
    const v1Bad = await get(`${v1}/TradesGet/0`);
    expect(v1Bad.status).toBe(400);
    expect(v1Bad.headers.get(APPLIED)).toBe('10');
    expect(broker.frames).toEqual([]);
  });
});

describe('X-Request-Timeout-Applied on registry routes', () => {
  it('answers the class default, or the valid requested budget, on every registry read', async () => {
    for (const path of ['/api/TradePlatforms', `/api/TradePlatforms/${PF4_A}`, '/api/Organizations']) {
      const plain = await get(path);
      expect(plain.status, path).toBe(200);
      expect(plain.headers.get(APPLIED), path).toBe('10');
      expect((await get(path, { headers: { 'x-request-timeout': '2.5' } })).headers.get(APPLIED), path).toBe('2.5');
      expect((await get(`${path}?requestTimeout=300`)).headers.get(APPLIED), path).toBe('300');
    }
    expect((await get('/api/Organizations')).body).toEqual([expect.objectContaining({ id: ORG_A })]);
  });

  it('refuses a budget outside 1 to 300 s with a v1 Validation error naming the field', async () => {
    for (const [path, headers, field] of [
      ['/api/TradePlatforms', { 'x-request-timeout': 'soon' }, 'X-Request-Timeout'],
      ['/api/Organizations?requestTimeout=301', {}, 'requestTimeout'],
      [`/api/TradePlatforms/${PF4_A}`, { 'x-request-timeout': '0.5' }, 'X-Request-Timeout'],
    ] as const) {
      const res = await get(path, { headers });
      expect(res.status, path).toBe(400);
      expect(res.body).toEqual({
        errorType: 'Validation',
        errorCode: 'Validation',
        errorDescription: `${field}: must be a number of seconds from 1 to 300`,
      });
      expect(res.headers.get(APPLIED), path).toBe('10');
    }
  });

  it("answers it on the registry's own refusals", async () => {
    const badId = await get('/api/TradePlatforms/not-a-uuid', { headers: { 'x-request-timeout': '4' } });
    expect(badId.status).toBe(400);
    expect(badId.headers.get(APPLIED)).toBe('4');
    const foreign = await get(`/api/TradePlatforms/${PF4_B}`);
    expect(foreign.status).toBe(404);
    expect(foreign.headers.get(APPLIED)).toBe('10');
  });
});

describe('X-Request-Timeout-Applied on answers the edge makes before any operation runs', () => {
  it("answers the addressed operation's budget on the token guard's 401, 403 and 400", async () => {
    const none = await get(`${v2}/ServerTime`, { token: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect(none.headers.get(APPLIED)).toBe('10');
    // The class of the operation the request addresses: maintenance 60, change 15; a valid requested one wins.
    expect((await call('POST', `${v2}/SrvRestart?confirm=true`, { token: null })).headers.get(APPLIED)).toBe('60');
    expect((await call('POST', `${v2}/UserRecordNew`, { token: null })).headers.get(APPLIED)).toBe('15');
    expect(
      (await get('/api/TradePlatforms', { token: null, headers: { 'x-request-timeout': '7' } })).headers.get(APPLIED),
    ).toBe('7');
    expect((await get(`${v2}/ServerTime?requestTimeout=999`, { token: null })).headers.get(APPLIED)).toBe('10');

    const expired = await get(`${v2}/ServerTime`, { token: 'not.a.jwt' });
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(expired.headers.get(APPLIED)).toBe('10');

    const scopeless = await get(`${v1}/TradesGet`, { token: await edge.token({ scope: 'other' }) });
    expect(scopeless.status).toBe(403);
    expect(scopeless.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(scopeless.headers.get(APPLIED)).toBe('10');

    const malformed = await get(`${v2}/ServerTime`, { token: null, headers: { authorization: 'Bearer a b' } });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get(APPLIED)).toBe('10');
    expect(broker.frames).toEqual([]);
  });

  it('answers it on an oversize body and on an unknown route under /api/', async () => {
    const big = `"${'x'.repeat(MAX_BODY_BYTES)}"`;
    const v2Big = await call('POST', `${v2}/UserRecordNew`, { raw: big });
    expect(v2Big.body.error).toMatchObject({ code: 'Validation' });
    expect(v2Big.headers.get(APPLIED)).toBe('15');
    // Any other path under /api/ is refused the v1 way before routing; no operation: a valid requested budget wins.
    const v1Big = await call('POST', `${v1}/UserRecordNew`, { raw: big, headers: { 'x-request-timeout': '12' } });
    expect(v1Big.status).toBe(413);
    expect(v1Big.headers.get(APPLIED)).toBe('12');
    const unknown = await get('/api/NoSuchThing');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get(APPLIED)).toBe('10');
    expect(broker.frames).toEqual([]);
  });

  it('leaves routes outside /api/ alone', async () => {
    for (const path of ['/livez', '/openapi.json', '/.well-known/jwks.json']) {
      const res = await get(path, { token: null });
      expect(res.status, path).toBe(200);
      expect(res.headers.has(APPLIED), path).toBe(false);
    }
  });
});
