/**
 * The edge's access log and `Retry-After`, in workerd against a scripted broker: one JSON line per request with the
 * trace id the caller sees, the client, the operation addressed, the status, the outcome (v2 error codes included)
 * and the duration, never a token or a secret; `Retry-After` on every 503 and 504 (v1 unreachable and time-out,
 * /healthz with the broker down), and not on other answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, PF4_A, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;
const lines: string[] = [];
const errors: string[] = [];

interface Line {
  msg: string;
  traceId: string;
  clientId: string | null;
  method: string;
  operation: string | null;
  status: number;
  outcome: string;
  ms: number;
}

beforeAll(async () => {
  broker = await startFakeBroker();
  edge = await startTestEdge({
    vars: { BROKER_URL: broker.url },
    log: (line, stream) => (stream === 'stdout' ? lines : errors).push(line),
  });
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

/** The access-log line of the answer `res` (matched by the trace id of its `traceparent`), once workerd has written it. */
async function lineOf(res: Response): Promise<Line> {
  const traceId = res.headers.get('traceparent')!.split('-')[1];
  for (let i = 0; i < 100; i++) {
    const found = lines.map((l) => JSON.parse(l) as Line).find((l) => l.msg === 'request' && l.traceId === traceId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no access-log line for trace ${traceId}; lines: ${lines.join('\n')}`);
}

const get = (path: string, headers: Record<string, string> = {}) => fetch(new URL(path, edge.url), { headers });

describe('access log', () => {
  it('writes one line per request with trace id, client, operation, status, outcome and duration', async () => {
    broker.script.set('ServerTime', { reply: { ok: true, data: { time: '2026-01-01T00:00:00Z' } } });
    const token = await edge.token();
    const before = lines.length;
    const res = await get(`/api/v2/PF4/${PF4_A}/ServerTime`, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    const line = await lineOf(res);
    expect(line).toStrictEqual({
      msg: 'request',
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      clientId: 'client-a',
      method: 'GET',
      operation: 'v2.PF4.ServerTime',
      status: 200,
      outcome: 'ok',
      ms: expect.any(Number),
    });
    expect(line.ms).toBeGreaterThanOrEqual(0);
    expect(lines.length - before).toBe(1);
  });

  it('names a v2 error by its code though the status is 200, and a v1 one by its status', async () => {
    broker.script.set('ServerTime', {
      reply: { ok: false, error: { code: 'NoConnect', managerCode: null, message: 'server down' } },
    });
    const token = await edge.token();
    const v2 = await get(`/api/v2/PF4/${PF4_A}/ServerTime`, { authorization: `Bearer ${token}` });
    expect(await lineOf(v2)).toMatchObject({ operation: 'v2.PF4.ServerTime', status: 200, outcome: 'NoConnect' });
    const v1 = await get(`/api/PF4/${PF4_A}/ServerTime`, { authorization: `Bearer ${token}` });
    expect(await lineOf(v1)).toMatchObject({ operation: 'v1.PF4.ServerTime', status: 503, outcome: 'NoConnect' });
  });

  it("logs refusals before the token is known, unknown routes and the edge's own v2 refusals", async () => {
    const anonymous = await get(`/api/v2/PF4/${PF4_A}/ServerTime`);
    expect(await lineOf(anonymous)).toMatchObject({
      clientId: null,
      operation: 'v2.PF4.ServerTime',
      status: 401,
      outcome: 'Unauthorized',
    });
    const token = await edge.token();
    const unknown = await get(`/api/v2/PF4/${PF4_A}/NoSuchOperation`, { authorization: `Bearer ${token}` });
    expect(await lineOf(unknown)).toMatchObject({
      clientId: 'client-a',
      operation: null,
      status: 200,
      outcome: 'NotFound',
    });
    const livez = await get('/livez');
    expect(await lineOf(livez)).toMatchObject({ clientId: null, operation: 'GET /livez', status: 200, outcome: 'ok' });
  });

  it('never carries a token, a client secret or a path parameter', async () => {
    await edge.seedClient('client-log', 'client-secret-value-42', '0a000000-0000-4000-8000-00000000000a', 'webapi');
    const issued = await fetch(new URL('/connect/token', edge.url), {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa('client-log:client-secret-value-42')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=webapi',
    });
    expect(issued.status).toBe(200);
    const { access_token: token } = (await issued.json()) as { access_token: string };
    expect(await lineOf(issued)).toMatchObject({ operation: 'POST /connect/token', status: 200, outcome: 'ok' });
    broker.script.set('ServerTime', { reply: { ok: true, data: { time: '2026-01-01T00:00:00Z' } } });
    const called = await get(`/api/v2/PF4/${PF4_A}/ServerTime`, { authorization: `Bearer ${token}` });
    expect(await lineOf(called)).toMatchObject({ clientId: 'client-log', outcome: 'ok' });
    const all = lines.join('\n');
    expect(all).not.toContain('client-secret-value-42');
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.split('.')[2]);
    expect(all).not.toContain(PF4_A);
  });
});

describe('Retry-After', () => {
  it('is 5 s on a v1 503 (broker or server unreachable) and absent on a v1 success or refusal', async () => {
    const token = await edge.token();
    broker.script.set('ServerTime', {
      reply: { ok: false, error: { code: 'NoConnect', managerCode: null, message: 'server down' } },
    });
    const unreachable = await get(`/api/PF4/${PF4_A}/ServerTime`, { authorization: `Bearer ${token}` });
    expect(unreachable.status).toBe(503);
    expect(unreachable.headers.get('retry-after')).toBe('5');
    broker.script.set('ServerTime', { reply: { ok: true, data: '2026-01-01T00:00:00Z' } });
    const fine = await get(`/api/PF4/${PF4_A}/ServerTime`, { authorization: `Bearer ${token}` });
    expect(fine.status).toBe(200);
    expect(fine.headers.get('retry-after')).toBeNull();
    const refused = await get(`/api/PF4/${PF4_A}/ServerTime`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('retry-after')).toBeNull();
  });

  it('is 1 s on a v1 504 (the call passed its deadline)', async () => {
    broker.script.set('ServerTime', { hang: true });
    const res = await get(`/api/PF4/${PF4_A}/ServerTime`, {
      authorization: `Bearer ${await edge.token()}`,
      'x-request-timeout': '1',
    });
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await lineOf(res)).toMatchObject({ status: 504, outcome: 'Timeout' });
  });

  it('is on /healthz when a part is down', async () => {
    broker.health = { status: 503, body: { status: 'degraded', platforms: {} } };
    const res = await get('/healthz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    broker.health = { status: 200, body: { status: 'ok', platforms: {} } };
  });
});
