/**
 * The bounded token endpoint and the per-client rate limits through the real worker: a chunked token request is
 * refused once it passes the size limit, without waiting for (or holding) the rest; tokens issued per client id and
 * API calls per client are limited per window (HTTP 429 with Retry-After, the count shared by every isolate through
 * one Durable Object per client), one client's excess never limits another, a client's token and API budgets are
 * separate counters (spending either whole leaves the other whole), and a new window admits again. The token
 * endpoint's failure and verification budgets are in tokenLimits.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORG_A, PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

const TOKEN_LIMIT = 5;
const API_LIMIT = 40;
const WINDOW_SECONDS = 5;
let edge: TestEdge;
let broker: FakeBroker;

beforeAll(async () => {
  broker = await startFakeBroker();
  edge = await startTestEdge({
    vars: {
      BROKER_URL: broker.url,
      TOKEN_RATE_LIMIT: String(TOKEN_LIMIT),
      API_RATE_LIMIT: String(API_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    },
  });
  // Hashed cheaply: what is limited here is tokens issued, not what checking a secret costs (auth.test.ts).
  for (const id of ['limited', 'bystander', 'both'])
    await edge.seedClient(id, `${id}-secret`, ORG_A, undefined, { iterations: 1_000 });
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const tokenRequest = (clientId: string, secret = `${clientId}-secret`) =>
  fetch(new URL('/connect/token', edge.url), {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });

/**
 * Waits for the start of the next rate-limit window (windows are aligned to multiples of their length). The tests of
 * the windows below spend the budgets of clients of their own, so they run side by side, waiting for the same windows;
 * a window is long enough for the three tests' calls on a loaded machine.
 */
async function nextWindow() {
  const ms = WINDOW_SECONDS * 1000;
  await new Promise((r) => setTimeout(r, ms - (Date.now() % ms) + 100));
}

describe('the token endpoint body', () => {
  it('refuses a chunked body as soon as it passes the limit, while the client is still sending', async () => {
    let sent = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      // 1 KiB per pull, for ever: a body with no announced size and no end.
      async pull(controller) {
        await new Promise((r) => setTimeout(r, 5));
        sent += 1024;
        controller.enqueue(new TextEncoder().encode('a'.repeat(1024)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const started = Date.now();
    const res = await fetch(new URL('/connect/token', edge.url), {
      method: 'POST',
      headers: FORM,
      body: endless,
      duplex: 'half',
      signal: AbortSignal.timeout(10_000),
    } as RequestInit);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'the request body is too large' });
    expect(Date.now() - started).toBeLessThan(8_000);
    // Answered after a few KiB, not after the whole (endless) body.
    expect(sent).toBeLessThan(1024 * 1024);
    void cancelled;
  }, 15_000);
});

describe.concurrent('tokens per client id', () => {
  it('answers 429 with Retry-After past TOKEN_RATE_LIMIT right-secret requests in a window; wrong secrets and other ids spend none of it', async () => {
    await nextWindow();
    const statuses: number[] = [];
    for (let i = 0; i < TOKEN_LIMIT; i++)
      statuses.push((await tokenRequest('limited', i % 2 ? 'wrong' : 'limited-secret')).status);
    expect(statuses).toEqual([200, 401, 200, 401, 200]);
    // Three tokens so far: two more fit.
    expect([(await tokenRequest('limited')).status, (await tokenRequest('limited')).status]).toEqual([200, 200]);
    const refused = await tokenRequest('limited');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(await refused.json()).toEqual({
      error: 'too_many_requests',
      error_description: `too many token requests for this client; retry after ${retryAfter} s`,
    });
    // A wrong secret is answered as one, not as the holder's spent budget; an unknown id has no budget to spend.
    expect(await (await tokenRequest('limited', 'wrong')).json()).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
    for (let i = 0; i < TOKEN_LIMIT + 1; i++) expect((await tokenRequest('nobody')).status).toBe(401);
    expect((await tokenRequest('bystander')).status).toBe(200);

    await nextWindow();
    expect((await tokenRequest('limited')).status).toBe(200);
  }, 30_000);
});

describe.concurrent('API calls per client', () => {
  it('answers 429 with Retry-After past API_RATE_LIMIT in a window, shaped per generation, and admits again in the next', async () => {
    const limited = await edge.token({ client_id: 'api-limited' });
    const bystander = await edge.token({ client_id: 'api-bystander' });
    const get = (token: string, path: string) =>
      fetch(new URL(path, edge.url), { headers: { authorization: `Bearer ${token}` } });
    const v2 = `/api/v2/PF4/${PF4_A}/ServerTime`;
    await nextWindow();
    const answers = await Promise.all(Array.from({ length: API_LIMIT + 10 }, () => get(limited, v2)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(API_LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);

    const v2Refused = await get(limited, v2);
    expect(v2Refused.status).toBe(429);
    expect(Number(v2Refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await v2Refused.json()).toMatchObject({
      data: null,
      error: {
        code: 'Forbidden',
        message: expect.stringMatching(new RegExp(`^rate limit: at most ${API_LIMIT} calls per ${WINDOW_SECONDS} s`)),
      },
    });
    const v1Refused = await get(limited, `/api/PF4/${PF4_A}/UserRecordGet/5`);
    expect(v1Refused.status).toBe(429);
    expect(v1Refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await v1Refused.json()).toMatchObject({ errorType: 'TooManyRequests' });
    expect((await get(limited, '/api/Organizations')).status).toBe(429);

    expect((await get(bystander, v2)).status).toBe(200);
    await nextWindow();
    expect((await get(limited, v2)).status).toBe(200);
  }, 30_000);
});

describe.concurrent("one client's token and API budgets", () => {
  it('are separate counters: a spent API budget leaves every token of the window, a spent token budget every API call', async () => {
    const get = (token: string) =>
      fetch(new URL(`/api/v2/PF4/${PF4_A}/ServerTime`, edge.url), { headers: { authorization: `Bearer ${token}` } });
    const issue = async () => {
      const res = await tokenRequest('both');
      return {
        status: res.status,
        token: res.status === 200 ? ((await res.json()) as { access_token: string }).access_token : '',
      };
    };
    // One window: one token, the whole API budget and one call past it, then the rest of the token budget.
    await nextWindow();
    const first = await issue();
    expect(first.status).toBe(200);
    const calls = (await Promise.all(Array.from({ length: API_LIMIT + 1 }, () => get(first.token)))).map(
      (r) => r.status,
    );
    expect(calls.filter((s) => s === 200)).toHaveLength(API_LIMIT);
    expect(calls.filter((s) => s === 429)).toHaveLength(1);
    const tokens: number[] = [];
    for (let i = 1; i <= TOKEN_LIMIT; i++) tokens.push((await issue()).status);
    expect(tokens).toEqual([...Array(TOKEN_LIMIT - 1).fill(200), 429]);

    // The next window the other way round: the whole token budget first, then every API call of the window.
    await nextWindow();
    const issued: Array<{ status: number; token: string }> = [];
    for (let i = 0; i <= TOKEN_LIMIT; i++) issued.push(await issue());
    expect(issued.map((t) => t.status)).toEqual([...Array(TOKEN_LIMIT).fill(200), 429]);
    const after = (await Promise.all(Array.from({ length: API_LIMIT + 1 }, () => get(issued[0].token)))).map(
      (r) => r.status,
    );
    expect(after.filter((s) => s === 200)).toHaveLength(API_LIMIT);
    expect(after.filter((s) => s === 429)).toHaveLength(1);
  }, 30_000);
});
