/**
 * The stream routes' refusals through the real worker, before any stream is opened: the SSE routes (under /api/v2/)
 * answer the v2 envelope with HTTP 200, or 429 past the client's API budget; the SignalR hubs' negotiate and upgrade
 * (outside /api/v2/) answer their HTTP status with the v1 error body, and a missing token with the RFC 6750 challenge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { PF4_A, PF4_B, PF5_A, startTestEdge, type TestEdge } from '../support/edge.js';

const API_LIMIT = 10;
let edge: TestEdge;

beforeAll(async () => {
  edge = await startTestEdge({ vars: { API_RATE_LIMIT: String(API_LIMIT), RATE_LIMIT_WINDOW_SECONDS: '3600' } });
}, 60_000);
afterAll(async () => { await edge?.close(); });

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
    for (const [platform, hub] of [[unknown, 'pf4'], [PF4_B, 'pf4'], [PF5_A, 'pf4'], ['not-a-uuid', 'pf5']]) {
      const res = await negotiate(platform, token, hub);
      expect(res.status).toBe(404);
      expect(res.body).toStrictEqual({ errorType: 'NotFound', errorCode: 'NotFound', errorDescription: `trade platform ${platform} not found` });
    }
    expect((await negotiate(PF4_A, token)).status).toBe(200);
  });

  it('answers a request to the hub that is not a WebSocket upgrade 400 with the v1 error body', async () => {
    const res = await call(`/hubs/pf4/v2?tradePlatform=${PF4_A}`, { token: await tokenOf('hub-plain') });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.body).toStrictEqual({
      errorType: 'Validation', errorCode: 'Validation',
      errorDescription: 'this hub speaks the SignalR JSON protocol over WebSockets only: negotiate first',
    });
  });

  it('answers a missing token with the Bearer challenge, as the API does', async () => {
    const res = await negotiate(PF4_A);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect(res.body).toStrictEqual({ error: 'invalid_token', error_description: 'an access token is required' });
  });

  it('answers a negotiation past the client\'s API budget 429 with Retry-After and the v1 error body', async () => {
    const token = await tokenOf('hub-limited');
    for (let i = 0; i < API_LIMIT; i++) expect((await negotiate(PF4_A, token)).status).toBe(200);
    const res = await negotiate(PF4_A, token);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatchObject({ errorType: 'TooManyRequests', errorCode: 'TooManyRequests' });
    expect(res.body.errorDescription).toMatch(new RegExp(`^rate limit: at most ${API_LIMIT} calls per 3600 s for this client; retry after \\d+ s$`));
  });
});

describe('SSE route refusals', () => {
  const sse = (platform: string, query: string, token: string) => call(`/api/v2/PF4/${platform}/Stream?${query}`, { token });

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
      expect(res.body).toStrictEqual({ data: null, error: { code, managerCode: null, message }, meta: { activityId: expect.any(String) } });
    }
    const topic = await sse(PF4_A, 'positions', token);
    expect([topic.status, (topic.body.error as { message: string }).message]).toEqual([200, expect.stringMatching(/^positions: not a topic of PF4 streams \(/)]);
    const none = await sse(PF4_A, '', token);
    expect([none.status, (none.body.error as { message: string }).message]).toEqual([200, expect.stringMatching(/^name at least one topic: /)]);
  });

  it('answers a stream past the client\'s API budget 429 with Retry-After and the Forbidden envelope', async () => {
    const token = await tokenOf('sse-limited');
    for (let i = 0; i < API_LIMIT; i++) expect((await sse('not-a-uuid', 'ticks', token)).status).toBe(200);
    const res = await sse(PF4_A, 'ticks', token);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatchObject({ data: null, error: { code: 'Forbidden', managerCode: null } });
  });
});
