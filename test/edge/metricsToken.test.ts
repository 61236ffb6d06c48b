/**
 * The edge's `GET /metrics` with `METRICS_TOKEN` set, through the real worker: only `Authorization: Bearer
 * <METRICS_TOKEN>` gets the exposition text. A request without the header, with another scheme, with an empty or
 * wrong bearer, or with an API client's token is refused 401 with the Bearer challenge, and the token is never told.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, type TestEdge } from '../support/edge.js';

const METRICS_TOKEN = 'metrics-token-test-value';
let edge: TestEdge;

beforeAll(async () => {
  edge = await startTestEdge({ vars: { METRICS_TOKEN } });
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

async function metrics(authorization?: string) {
  const res = await fetch(new URL('/metrics', edge.url), {
    headers: authorization === undefined ? {} : { authorization },
  });
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    challenge: res.headers.get('www-authenticate'),
    body: await res.text(),
  };
}

const REFUSED = {
  status: 401,
  contentType: 'text/plain; charset=UTF-8',
  challenge: 'Bearer realm="metrics"',
  body: 'a bearer of METRICS_TOKEN is required',
};

describe("the edge's /metrics with METRICS_TOKEN set", () => {
  it('refuses a request without credentials, with malformed ones or with a wrong token, 401 with the Bearer challenge', async () => {
    const apiToken = await edge.token();
    const refused: Array<[string, string | undefined]> = [
      ['no Authorization header', undefined],
      ['an empty header', ''],
      ['another scheme', 'Basic x'],
      ['another scheme carrying the token', `Basic ${METRICS_TOKEN}`],
      ['the scheme alone', 'Bearer'],
      ['the scheme and a space', 'Bearer '],
      ['the token without the scheme', METRICS_TOKEN],
      ['a wrong token', 'Bearer wrong'],
      ['a prefix of the token', `Bearer ${METRICS_TOKEN.slice(0, -1)}`],
      ['the token and more', `Bearer ${METRICS_TOKEN}x`],
      ["an API client's token", `Bearer ${apiToken}`],
    ];
    for (const [what, authorization] of refused) {
      expect([what, await metrics(authorization)]).toStrictEqual([what, REFUSED]);
    }
  });

  it('answers the bearer of METRICS_TOKEN with the exposition text, counting the refusals', async () => {
    const res = await metrics(`Bearer ${METRICS_TOKEN}`);
    expect([res.status, res.contentType, res.challenge]).toStrictEqual([
      200,
      'text/plain; version=0.0.4; charset=utf-8',
      null,
    ]);
    expect(res.body).toMatch(/^# HELP edge_requests_total /);
    expect(res.body).toContain('# TYPE edge_requests_total counter\n');
    expect(res.body).toMatch(/^edge_isolate_start_time_seconds \d+(\.\d+)?$/m);
    // The previous test's 11 refusals, counted as the access log saw them.
    expect(res.body).toMatch(/^edge_requests_total\{operation="GET \/metrics",outcome="[^"]+"\} 11$/m);
    expect(res.body).not.toContain(METRICS_TOKEN);
    // The scheme is case-insensitive (RFC 9110 §11.1).
    expect((await metrics(`bearer ${METRICS_TOKEN}`)).status).toBe(200);
  });
});
