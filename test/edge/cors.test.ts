/**
 * CORS through the real worker in workerd, under the three shapes of CORS_ORIGINS: unset (no origin may call), a list
 * of origins, and `*`. A preflight is answered 204 before the token check (no Authorization, no 401), allowing the
 * methods and headers a web terminal sends only to an allowed origin; every other answer to an allowed origin, the
 * guard's and the rate limiter's refusals included, carries Access-Control-Allow-Origin and exposes the gateway's
 * own headers; another origin gets no CORS header at all, so its browser keeps the answer from the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';

const TERMINAL = 'https://terminal.example.com';
const LOCAL_PAGE = 'http://127.0.0.1:5173';
const STRANGER = 'https://stranger.example.net';

/** What a web terminal sends besides the safelisted headers, as a browser lists them in a preflight (lower case). */
const TERMINAL_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'x-request-timeout', 'traceparent'];
/** The gateway's own response headers a page must be able to read. */
const GATEWAY_HEADERS = [
  'X-Request-Timeout-Applied',
  'X-Request-Outcome',
  'Idempotency-Replayed',
  'Retry-After',
  'traceparent',
  'WWW-Authenticate',
];

let closed: TestEdge;
let listed: TestEdge;
let any: TestEdge;

beforeAll(async () => {
  [closed, listed, any] = await Promise.all([
    startTestEdge(),
    // Spelled as people write them: upper case, a default port, a trailing slash, commas and spaces.
    startTestEdge({
      vars: { CORS_ORIGINS: `HTTPS://Terminal.Example.com:443/, ${LOCAL_PAGE}`, TOKEN_FAILURE_LIMIT: '2' },
    }),
    startTestEdge({ vars: { CORS_ORIGINS: '*' } }),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([closed?.close(), listed?.close(), any?.close()]);
});

const userNew = `/api/v2/PF4/${PF4_A}/UserRecordNew`;

function preflight(edge: TestEdge, path: string, origin: string, method = 'POST', headers = TERMINAL_HEADERS) {
  return fetch(new URL(path, edge.url), {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers.join(',') },
  });
}

const list = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

describe('CORS_ORIGINS unset', () => {
  it('answers a preflight before the token check, without allowing the origin', async () => {
    const res = await preflight(closed, userNew, TERMINAL);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-headers')).toBeNull();
  });

  it('puts no CORS header on answers, whatever the origin', async () => {
    const token = await closed.token();
    const res = await fetch(new URL('/api/TradePlatforms', closed.url), {
      headers: { origin: TERMINAL, authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-expose-headers')).toBeNull();
    expect(res.headers.get('vary')).toBeNull();
  });
});

describe('CORS_ORIGINS listing origins', () => {
  it("answers an allowed origin's preflight 204 before the token check, with the methods and headers a web terminal sends", async () => {
    for (const origin of [TERMINAL, LOCAL_PAGE]) {
      const res = await preflight(listed, userNew, origin);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(list(res.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(TERMINAL_HEADERS));
      expect(list(res.headers.get('access-control-allow-methods'))).toEqual(
        expect.arrayContaining(['get', 'post', 'patch', 'delete']),
      );
      expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(list(res.headers.get('vary'))).toContain('origin');
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(await res.text()).toBe('');
    }
    // The token endpoint and a PATCH too.
    expect(
      (await preflight(listed, '/connect/token', TERMINAL, 'POST', ['authorization', 'content-type'])).headers.get(
        'access-control-allow-origin',
      ),
    ).toBe(TERMINAL);
    expect(
      list(
        (await preflight(listed, `/api/v2/PF4/${PF4_A}/UserRecord/1001`, TERMINAL, 'PATCH')).headers.get(
          'access-control-allow-methods',
        ),
      ),
    ).toContain('patch');
  });

  it("answers another origin's preflight without allowing it", async () => {
    const res = await preflight(listed, userNew, STRANGER);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toBeNull();
    expect(list(res.headers.get('vary'))).toContain('origin');
  });

  it("lets an allowed origin read an answer and the gateway's own headers", async () => {
    const token = await listed.token();
    const res = await fetch(new URL('/api/TradePlatforms', listed.url), {
      headers: { origin: TERMINAL, authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(TERMINAL);
    expect(list(res.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(GATEWAY_HEADERS.map((h) => h.toLowerCase())),
    );
    expect(list(res.headers.get('vary'))).toContain('origin');
    expect(res.headers.get('x-request-timeout-applied')).not.toBeNull();
  });

  it('lets an allowed origin read a refusal: 401 with its challenge, 429 with Retry-After', async () => {
    const unauthorized = await fetch(new URL(userNew, listed.url), { method: 'POST', headers: { origin: LOCAL_PAGE } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(LOCAL_PAGE);
    expect(unauthorized.headers.get('www-authenticate')).toMatch(/^Bearer/);

    const tokenRequest = () =>
      fetch(new URL('/connect/token', listed.url), {
        method: 'POST',
        headers: { origin: TERMINAL, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'cors-probe',
          client_secret: 'wrong',
        }),
      });
    const answers = [await tokenRequest(), await tokenRequest(), await tokenRequest()];
    const limited = answers.find((r) => r.status === 429);
    expect(limited, `statuses ${answers.map((r) => r.status).join(',')}`).toBeDefined();
    expect(limited!.headers.get('retry-after')).toMatch(/^\d+$/);
    for (const res of answers) expect(res.headers.get('access-control-allow-origin')).toBe(TERMINAL);
  });

  it('gives another origin, or a caller without Origin, no CORS header', async () => {
    const token = await listed.token();
    const callers: Array<Record<string, string>> = [
      { origin: STRANGER },
      {},
      { origin: 'https://terminal.example.com.evil.example' },
      { origin: 'null' },
    ];
    for (const headers of callers) {
      const res = await fetch(new URL('/api/TradePlatforms', listed.url), {
        headers: { ...headers, authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-expose-headers')).toBeNull();
      expect(list(res.headers.get('vary'))).toContain('origin');
    }
  });

  it('does not take a request that is not a preflight for one: OPTIONS without Access-Control-Request-Method reaches the guard', async () => {
    const res = await fetch(new URL(userNew, listed.url), { method: 'OPTIONS', headers: { origin: TERMINAL } });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe(TERMINAL);
  });
});

describe('CORS_ORIGINS=*', () => {
  it('allows any origin with *, preflight and answer alike, and varies on nothing', async () => {
    const pre = await preflight(any, userNew, STRANGER);
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(pre.headers.get('access-control-allow-headers'))).toEqual(expect.arrayContaining(TERMINAL_HEADERS));
    expect(pre.headers.get('vary')).toBeNull();

    const token = await any.token();
    const res = await fetch(new URL('/api/TradePlatforms', any.url), {
      headers: { origin: STRANGER, authorization: `Bearer ${token}` },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(res.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(GATEWAY_HEADERS.map((h) => h.toLowerCase())),
    );
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });
});
