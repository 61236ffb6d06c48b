/**
 * CORS at the edge (workers/api/cors.ts) in a Hono app in this process, per CORS_ORIGINS: preflights answered with
 * the exact headers or refused without any, other answers marked for an allowed origin (refusals and passed-through
 * answers too), `Vary: Origin` only when the answer depends on the origin, and a changed CORS_ORIGINS taking effect.
 * (The policy parsing itself is shared/corsOrigins.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import type { AppEnv } from '../env.js';
import { cors, CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from './cors.js';

const ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const ALLOW_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, X-Request-Timeout, X-Gateway-Region, X-Gateway-Position, traceparent, tracestate, X-Requested-With, X-SignalR-User-Agent';
const EXPOSE =
  'X-Request-Timeout-Applied, X-Request-Outcome, Idempotency-Replayed, Retry-After, traceparent, WWW-Authenticate, X-Gateway-Region, X-Gateway-Position';
const A = 'https://a.example';
const LIST = `${A} http://localhost:5173`;

const app = new Hono<AppEnv>();
app.use('*', cors());
app.get('/data', (c) => c.text('data'));
app.get('/compressed', (c) => c.text('data', 200, { Vary: 'Accept-Encoding' }));
app.get('/refused', (c) => c.text('refused', 401));
app.options('/data', (c) => c.text('own options'));
// An answer passed through from a fetch: its headers cannot be changed.
app.get('/through', () => Response.redirect('http://127.0.0.1:9/elsewhere', 307));

async function call(
  corsOrigins: string | undefined,
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
) {
  const res = await app.request(path, { method, headers }, { CORS_ORIGINS: corsOrigins });
  // The content type is the route's own business: every other header is compared.
  const answered = Object.fromEntries([...res.headers].filter(([name]) => name !== 'content-type'));
  return { status: res.status, headers: answered, body: await res.text() };
}
const preflight = (corsOrigins: string | undefined, origin: string) =>
  call(corsOrigins, '/data', 'OPTIONS', {
    Origin: origin,
    'Access-Control-Request-Method': 'POST',
    'Access-Control-Request-Headers': 'authorization',
  });

describe('cors', () => {
  it('names the methods, request headers and response headers of the API, and a short preflight cache', () => {
    expect(CORS_ALLOW_METHODS.join(', ')).toBe(ALLOW_METHODS);
    expect(CORS_ALLOW_HEADERS.join(', ')).toBe(ALLOW_HEADERS);
    expect(CORS_EXPOSE_HEADERS.join(', ')).toBe(EXPOSE);
    expect(CORS_MAX_AGE_SECONDS).toBe(600);
  });

  it('adds nothing by default, and answers a preflight 204 without CORS headers', async () => {
    expect(await call(undefined, '/data', 'GET', { Origin: A })).toStrictEqual({
      status: 200,
      headers: {},
      body: 'data',
    });
    expect(await preflight(undefined, A)).toStrictEqual({ status: 204, headers: {}, body: '' });
    expect(await call('', '/data', 'OPTIONS', { Origin: A })).toStrictEqual({
      status: 200,
      headers: {},
      body: 'own options',
    });
  });

  it('answers a preflight from a listed origin with everything the API takes, varying by origin', async () => {
    expect(await preflight(LIST, A)).toStrictEqual({
      status: 204,
      headers: {
        vary: 'Origin',
        'access-control-allow-origin': A,
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': '600',
      },
      body: '',
    });
    expect(await preflight(LIST, 'http://localhost:5173')).toMatchObject({
      headers: { 'access-control-allow-origin': 'http://localhost:5173' },
    });
  });

  it('answers a preflight from another origin 204 with Vary only', async () => {
    expect(await preflight(LIST, 'https://b.example')).toStrictEqual({
      status: 204,
      headers: { vary: 'Origin' },
      body: '',
    });
  });

  it('passes an OPTIONS that is no preflight to the route, marked as any answer', async () => {
    expect(await call(LIST, '/data', 'OPTIONS', { Origin: A })).toStrictEqual({
      status: 200,
      headers: { vary: 'Origin', 'access-control-allow-origin': A, 'access-control-expose-headers': EXPOSE },
      body: 'own options',
    });
    expect(await call(LIST, '/data', 'OPTIONS', { 'Access-Control-Request-Method': 'POST' })).toStrictEqual({
      status: 200,
      headers: { vary: 'Origin' },
      body: 'own options',
    });
    // Only an OPTIONS is a preflight, whatever headers another method carries.
    expect(await call(LIST, '/data', 'GET', { Origin: A, 'Access-Control-Request-Method': 'POST' })).toStrictEqual({
      status: 200,
      headers: { vary: 'Origin', 'access-control-allow-origin': A, 'access-control-expose-headers': EXPOSE },
      body: 'data',
    });
  });

  it('marks every answer to a listed origin, refusals too, and only varies for the others', async () => {
    const marked = { vary: 'Origin', 'access-control-allow-origin': A, 'access-control-expose-headers': EXPOSE };
    expect(await call(LIST, '/data', 'GET', { Origin: A })).toStrictEqual({
      status: 200,
      headers: marked,
      body: 'data',
    });
    expect(await call(LIST, '/refused', 'GET', { Origin: A })).toStrictEqual({
      status: 401,
      headers: marked,
      body: 'refused',
    });
    expect(await call(LIST, '/data', 'GET', { Origin: 'https://b.example' })).toStrictEqual({
      status: 200,
      headers: { vary: 'Origin' },
      body: 'data',
    });
    expect(await call(LIST, '/data')).toStrictEqual({ status: 200, headers: { vary: 'Origin' }, body: 'data' });
    expect(await call(LIST, '/compressed', 'GET', { Origin: A })).toMatchObject({
      headers: { vary: 'Accept-Encoding, Origin' },
    });
  });

  it('allows any origin as * without varying, and adds nothing to a request without an origin', async () => {
    expect(await preflight('*', 'https://any.example')).toStrictEqual({
      status: 204,
      headers: {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': '600',
      },
      body: '',
    });
    expect(await call('*', '/data', 'GET', { Origin: 'https://any.example' })).toStrictEqual({
      status: 200,
      headers: { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSE },
      body: 'data',
    });
    expect(await call('*', '/data')).toStrictEqual({ status: 200, headers: {}, body: 'data' });
  });

  it('marks a copy of an answer whose headers cannot be changed', async () => {
    expect(await call(LIST, '/through', 'GET', { Origin: A })).toStrictEqual({
      status: 307,
      headers: {
        location: 'http://127.0.0.1:9/elsewhere',
        vary: 'Origin',
        'access-control-allow-origin': A,
        'access-control-expose-headers': EXPOSE,
      },
      body: '',
    });
    expect(await call('*', '/through', 'GET', { Origin: A })).toStrictEqual({
      status: 307,
      headers: {
        location: 'http://127.0.0.1:9/elsewhere',
        'access-control-allow-origin': '*',
        'access-control-expose-headers': EXPOSE,
      },
      body: '',
    });
  });

  it('follows a changed CORS_ORIGINS', async () => {
    expect(
      (await call('*', '/data', 'GET', { Origin: 'https://b.example' })).headers['access-control-allow-origin'],
    ).toBe('*');
    expect(
      (await call(A, '/data', 'GET', { Origin: 'https://b.example' })).headers['access-control-allow-origin'],
    ).toBeUndefined();
    expect((await call(A, '/data', 'GET', { Origin: A })).headers['access-control-allow-origin']).toBe(A);
    expect(
      (await call(undefined, '/data', 'GET', { Origin: A })).headers['access-control-allow-origin'],
    ).toBeUndefined();
  });
});
