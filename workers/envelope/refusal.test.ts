/**
 * The edge's one refusal path: each kind of refusal in both generations, byte for byte, with its HTTP status (v2 is
 * HTTP 200 except 429; an unready registry and an internal error keep their status and the v1 body on every path), and
 * `refuse` choosing the generation by the request's path while keeping headers the route already set.
 */
import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { failure } from './envelope.js';
import { generationOf, refusal, refuse, unknownPlatform, type RefusalKind } from './refusal.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const v1 = { generation: 'v1' as const, traceId: TRACE };
const v2 = { generation: 'v2' as const, traceId: TRACE };

const envelope = (code: string, message: string) =>
  JSON.stringify({ data: null, error: { code, managerCode: null, message }, meta: { activityId: TRACE } });
const v1Body = (errorType: string, errorCode: string, errorDescription: string) =>
  JSON.stringify({ errorType, errorCode, errorDescription });

describe('refusal', () => {
  it('answers each kind on v1 with its status and the general error body', () => {
    const expected: Record<RefusalKind, [number, string]> = {
      Validation: [400, 'Validation'],
      PayloadTooLarge: [413, 'Validation'],
      Forbidden: [403, 'Forbidden'],
      NotFound: [404, 'NotFound'],
      TooManyRequests: [429, 'TooManyRequests'],
      RegistryNotReady: [503, 'Unavailable'],
      Internal: [500, 'Internal'],
    };
    for (const [kind, [status, errorType]] of Object.entries(expected) as [RefusalKind, [number, string]][]) {
      expect(refusal(v1, { kind, message: 'why' })).toStrictEqual({
        status,
        body: v1Body(errorType, kind, 'why'),
        headers: {},
      });
    }
  });

  it('answers v2 with HTTP 200 and the envelope, except the rate limit (429, Forbidden) and the refusals not about the call', () => {
    expect(refusal(v2, { kind: 'Validation', message: 'm' })).toStrictEqual({
      status: 200,
      body: envelope('Validation', 'm'),
      headers: {},
    });
    expect(refusal(v2, { kind: 'PayloadTooLarge', message: 'm' })).toStrictEqual({
      status: 200,
      body: envelope('Validation', 'm'),
      headers: {},
    });
    expect(refusal(v2, { kind: 'Forbidden', message: 'm' })).toStrictEqual({
      status: 200,
      body: envelope('Forbidden', 'm'),
      headers: {},
    });
    expect(refusal(v2, { kind: 'NotFound', message: 'm' })).toStrictEqual({
      status: 200,
      body: envelope('NotFound', 'm'),
      headers: {},
    });
    expect(refusal(v2, { kind: 'TooManyRequests', message: 'm', headers: { 'Retry-After': '7' } })).toStrictEqual({
      status: 429,
      body: envelope('Forbidden', 'm'),
      headers: { 'Retry-After': '7' },
    });
    expect(refusal(v2, { kind: 'RegistryNotReady', message: 'm' })).toStrictEqual({
      status: 503,
      body: v1Body('Unavailable', 'RegistryNotReady', 'm'),
      headers: {},
    });
    expect(refusal(v2, { kind: 'Internal', message: 'm' })).toStrictEqual({
      status: 500,
      body: v1Body('Internal', 'Internal', 'm'),
      headers: {},
    });
  });

  it('shapes a v2 refusal as the envelope of a failure with no manager code', () => {
    const shaped = failure(
      { generation: 'v2', family: 'PF5', paged: true, traceId: TRACE },
      { code: 'Validation', managerCode: null, message: 'm' },
    );
    expect(refusal(v2, { kind: 'Validation', message: 'm' }).body).toBe(shaped.body);
  });

  it('names an unknown platform alike in both generations', () => {
    expect(unknownPlatform('p')).toStrictEqual({ kind: 'NotFound', message: 'trade platform p not found' });
  });
});

describe('refuse', () => {
  const app = new Hono<{ Variables: { traceId: string } }>();
  app.use('*', async (c, next) => {
    c.set('traceId', TRACE);
    await next();
  });
  app.get('*', (c) => {
    c.header('X-Request-Timeout-Applied', '10');
    return refuse(c, { kind: 'TooManyRequests', message: 'slow down', headers: { 'Retry-After': '3' } });
  });

  it("takes the generation from the path: v2 under /api/v2/, v1 everywhere else (the v1 API, the hubs, the edge's own routes)", async () => {
    expect([
      generationOf('/api/v2/PF4/x/ServerTime'),
      generationOf('/api/PF4/x/ServerTime'),
      generationOf('/hubs/pf4/v2'),
      generationOf('/api/v2'),
    ]).toEqual(['v2', 'v1', 'v1', 'v1']);
    const onV2 = await app.request('/api/v2/PF4/x/ServerTime');
    expect(onV2.status).toBe(429);
    expect(await onV2.text()).toBe(envelope('Forbidden', 'slow down'));
    for (const path of ['/api/PF4/x/ServerTime', '/hubs/pf4/v2/negotiate']) {
      const res = await app.request(path);
      expect(res.status).toBe(429);
      expect(await res.text()).toBe(v1Body('TooManyRequests', 'TooManyRequests', 'slow down'));
    }
  });

  it("sends JSON with the refusal's headers and those the route set before", async () => {
    const res = await app.request('/api/PF4/x/ServerTime');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('x-request-timeout-applied')).toBe('10');
  });
});
