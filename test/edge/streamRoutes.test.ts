/**
 * The stream routes' refusals through the real worker, before any stream is opened: the SSE routes (under /api/v2/)
 * answer the v2 envelope with HTTP 200, or 429 past the client's API budget; the SignalR hubs' negotiate and upgrade
 * (outside /api/v2/) answer their HTTP status with the v1 error body, and a missing token with the RFC 6750 challenge.
 * A query value with a control character (the symbols and the event id go on to the stream object in headers) is a
 * validation refusal of the route's generation, never an internal error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { PF4_A, PF4_B, PF5_A, startTestEdge, type TestEdge } from '../support/edge.js';

const API_LIMIT = 10;
const METRICS_TOKEN = 'stream-routes-metrics';
let edge: TestEdge;
const errors: string[] = [];

beforeAll(async () => {
  edge = await startTestEdge({
    vars: { API_RATE_LIMIT: String(API_LIMIT), RATE_LIMIT_WINDOW_SECONDS: '3600', METRICS_TOKEN },
    log: (line, stream) => {
      if (stream === 'stderr') errors.push(line);
    },
  });
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

/** A token of a client of its own, so each test spends a budget no other test touches. */
const tokenOf = (clientId: string) => edge.token({ client_id: clientId });

async function call(path: string, init: { token?: string; method?: string } = {}) {
  const res = await fetch(new URL(path, edge.url), {
    method: init.method ?? 'GET',
    headers: init.token ? { authorization: `Bearer ${init.token}` } : {},
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const negotiate = (platform: string, token?: string, hub = 'pf4') =>
  call(`/hubs/${hub}/v2/negotiate?negotiateVersion=1&tradePlatform=${platform}`, { method: 'POST', token });

describe('SignalR hub refusals before the upgrade', () => {
  it('answers an unknown, foreign or other-family platform 404 with the v1 error body', async () => {
    const token = await tokenOf('hub-platforms');
    const unknown = randomUUID();
    for (const [platform, hub] of [
      [unknown, 'pf4'],
      [PF4_B, 'pf4'],
      [PF5_A, 'pf4'],
      ['not-a-uuid', 'pf5'],
    ]) {
      const res = await negotiate(platform, token, hub);
      expect(res.status).toBe(404);
      expect(res.body).toStrictEqual({
        errorType: 'NotFound',
        errorCode: 'NotFound',
        errorDescription: `trade platform ${platform} not found`,
      });
    }
    expect((await negotiate(PF4_A, token)).status).toBe(200);
  });

  it('answers a request to the hub that is not a WebSocket upgrade 400 with the v1 error body', async () => {
    const res = await call(`/hubs/pf4/v2?tradePlatform=${PF4_A}`, { token: await tokenOf('hub-plain') });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toStrictEqual({
      errorType: 'Validation',
      errorCode: 'Validation',
      errorDescription: 'this hub speaks the SignalR JSON protocol over WebSockets only: negotiate first',
    });
  });

  it('answers a missing token with the Bearer challenge, as the API does', async () => {
    const res = await negotiate(PF4_A);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect(res.body).toStrictEqual({ error: 'invalid_token', error_description: 'an access token is required' });
  });

  it("answers a negotiation past the client's API budget 429 with Retry-After and the v1 error body", async () => {
    const token = await tokenOf('hub-limited');
    for (let i = 0; i < API_LIMIT; i++) expect((await negotiate(PF4_A, token)).status).toBe(200);
    const res = await negotiate(PF4_A, token);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatchObject({ errorType: 'TooManyRequests', errorCode: 'TooManyRequests' });
    expect(res.body.errorDescription).toMatch(
      new RegExp(`^rate limit: at most ${API_LIMIT} calls per 3600 s for this client; retry after \\d+ s$`),
    );
  });
});

describe('SSE route refusals', () => {
  const sse = (platform: string, query: string, token: string) =>
    call(`/api/v2/PF4/${platform}/Stream?${query}`, { token });

  it('answers a bad platform id, an unknown platform, an unknown topic or no topic with HTTP 200 and the envelope', async () => {
    const token = await tokenOf('sse-refused');
    const unknown = randomUUID();
    const cases: [string, string, string, string][] = [
      ['not-a-uuid', 'ticks', 'Validation', 'tradePlatform: must be a uuid'],
      [unknown, 'ticks', 'NotFound', `trade platform ${unknown} not found`],
      [PF5_A, 'ticks', 'NotFound', `trade platform ${PF5_A} not found`],
    ];
    for (const [platform, query, code, message] of cases) {
      const res = await sse(platform, query, token);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({
        data: null,
        error: { code, managerCode: null, message },
        meta: { activityId: expect.any(String) },
      });
    }
    const topic = await sse(PF4_A, 'positions', token);
    expect([topic.status, (topic.body.error as { message: string }).message]).toEqual([
      200,
      expect.stringMatching(/^positions: not a topic of PF4 streams \(/),
    ]);
    const none = await sse(PF4_A, '', token);
    expect([none.status, (none.body.error as { message: string }).message]).toEqual([
      200,
      expect.stringMatching(/^name at least one topic: /),
    ]);
  });

  it("answers a stream past the client's API budget 429 with Retry-After and the Forbidden envelope", async () => {
    const token = await tokenOf('sse-limited');
    for (let i = 0; i < API_LIMIT; i++) expect((await sse('not-a-uuid', 'ticks', token)).status).toBe(200);
    const res = await sse(PF4_A, 'ticks', token);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatchObject({ data: null, error: { code: 'Forbidden', managerCode: null } });
  });
});

/** The edge's request counts of `operation` by outcome (its /metrics). */
async function outcomes(operation: string): Promise<Record<string, number>> {
  const text = await (
    await fetch(new URL('/metrics', edge.url), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  const counts: Record<string, number> = {};
  for (const [, op, outcome, n] of text.matchAll(
    /^edge_requests_total\{operation="([^"]*)",outcome="([^"]*)"\} (\d+)$/gm,
  )) {
    if (op === operation) counts[outcome] = Number(n);
  }
  return counts;
}

/** The internal errors the edge logged since line `from` of its standard error. */
const unhandled = (from: number) => errors.slice(from).filter((line) => line.includes('"unhandled edge error"'));

describe("control characters in a stream route's query", () => {
  it('refuses them in every SSE query value with HTTP 200 and the Validation envelope naming the field, logging no error', async () => {
    const cases: Array<[string, string, string]> = [
      ['PF4', 'ticks=A%0AB', 'ticks'],
      ['PF4', 'ticks=EURUSD%0D', 'ticks'],
      ['PF4', 'ticks=EURUSD,GBP%0D%0AUSD', 'ticks'],
      ['PF4', 'ticks=%09EURUSD', 'ticks'],
      ['PF4', 'ticks=EUR%00USD', 'ticks'],
      ['PF4', 'ticks=EUR%7FUSD', 'ticks'],
      ['PF4', 'ticks=EUR%C2%85USD', 'ticks'],
      ['PF4', 'ticks&lastEventId=a%0Db', 'lastEventId'],
      ['PF4', 'ticks&lastEventId=a%0Ab', 'lastEventId'],
      ['PF4', 'trades&lastEventId=%01', 'lastEventId'],
      ['PF4', 'ticks&trades=a%0Ab', 'trades'],
      ['PF5', 'ticks=A%0AB', 'ticks'],
      ['PF5', 'positions&lastEventId=a%0Db', 'lastEventId'],
      ['PF5', 'ticks&orders=%0A', 'orders'],
    ];
    const logged = errors.length;
    const routes = ['GET /api/v2/PF4/:tradePlatform/Stream', 'GET /api/v2/PF5/:tradePlatform/Stream'];
    const before = await Promise.all(routes.map(outcomes));
    for (const [i, [family, query, field]] of cases.entries()) {
      const platform = family === 'PF4' ? PF4_A : PF5_A;
      const res = await call(`/api/v2/${family}/${platform}/Stream?${query}`, {
        token: await tokenOf(`sse-control-${i}`),
      });
      expect([query, res.status, res.headers.get('content-type'), res.body]).toStrictEqual([
        query,
        200,
        'application/json; charset=utf-8',
        {
          data: null,
          error: { code: 'Validation', managerCode: null, message: `${field}: must not contain control characters` },
          meta: { activityId: expect.any(String) },
        },
      ]);
    }
    // Counted as validation refusals, the earlier tests' included; never as internal errors.
    const after = await Promise.all(routes.map(outcomes));
    expect(after.map((counts, i) => [counts.Validation - (before[i].Validation ?? 0), counts.Internal])).toStrictEqual([
      [11, undefined],
      [3, undefined],
    ]);
    expect(unhandled(logged)).toStrictEqual([]);
  });

  it("answers them in a hub's query with the hub's own refusals, logging no error", async () => {
    const logged = errors.length;
    const token = await tokenOf('hub-control');
    const lf = await negotiate(`${PF4_A}%0A`, token);
    expect([lf.status, lf.body]).toStrictEqual([
      404,
      { errorType: 'NotFound', errorCode: 'NotFound', errorDescription: `trade platform ${PF4_A}\n not found` },
    ]);
    const cr = await negotiate(`${PF5_A}%0D`, token, 'pf5');
    expect([cr.status, cr.body]).toStrictEqual([
      404,
      { errorType: 'NotFound', errorCode: 'NotFound', errorDescription: `trade platform ${PF5_A}\r not found` },
    ]);
    const version = await call(`/hubs/pf4/v2/negotiate?negotiateVersion=1%0A&tradePlatform=${PF4_A}`, {
      method: 'POST',
      token,
    });
    expect([version.status, version.body.negotiateVersion]).toStrictEqual([200, 1]);
    const queryToken = await call(
      `/hubs/pf4/v2/negotiate?negotiateVersion=1&tradePlatform=${PF4_A}&access_token=${token}%0D%0Ax`,
      { method: 'POST' },
    );
    expect([queryToken.status, queryToken.body]).toStrictEqual([
      400,
      { error: 'invalid_request', error_description: 'the Authorization header is not a valid Bearer credential' },
    ]);

    // The upgrade itself, with the token in the query as a browser sends it.
    const upgrade = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(
        `${edge.url.toString().replace(/^http/, 'ws').replace(/\/$/, '')}/hubs/pf4/v2?tradePlatform=${PF4_A}%0D%0A&access_token=${token}`,
      );
      ws.on('error', () => {});
      ws.once('open', () => {
        ws.terminate();
        reject(new Error('the upgrade was accepted'));
      });
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString('utf8');
        });
        res.on('end', () => {
          ws.terminate();
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
    });
    expect([upgrade.status, JSON.parse(upgrade.body)]).toStrictEqual([
      404,
      {
        errorType: 'NotFound',
        errorCode: 'NotFound',
        errorDescription: `trade platform ${PF4_A}\r\n not found`,
      },
    ]);
    expect(await outcomes('POST /hubs/pf4/v2/negotiate')).not.toHaveProperty('Internal');
    expect(await outcomes('GET /hubs/pf4/v2')).not.toHaveProperty('Internal');
    expect(unhandled(logged)).toStrictEqual([]);
  });
});
