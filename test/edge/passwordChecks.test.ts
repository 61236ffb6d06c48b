/**
 * Password checks through the real worker against a scripted broker: every UserPasswordCheck route needs the write
 * scope (a read-only token is refused before anything reaches the broker), and the broker's refusal of a check past
 * its bound of failures is answered v1 429 with `Retry-After` and v2 as its envelope with the same header.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';
import { PF4_A, PF5_A } from '../support/edge.js';
import { edgeWithFakeBroker } from './gatewayFakeBroker.js';

const t = edgeWithFakeBroker();

const ROUTES = [
  { op: 'PF4.UserPasswordCheck', path: `/api/v2/PF4/${PF4_A}/UserPasswordCheck/7`, v2: true },
  { op: 'PF4.UserPasswordCheck', path: `/api/PF4/${PF4_A}/UserPasswordCheck/7`, v2: false },
  { op: 'PF5.UserPasswordCheck', path: `/api/PF5/${PF5_A}/UserPasswordCheck/7/Main`, v2: false },
];

async function check(token: string, path: string) {
  const res = await fetch(new URL(path, t.edge.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify('Guess123x'),
  });
  return {
    status: res.status,
    body: await res.json(),
    retryAfter: res.headers.get('retry-after'),
    challenge: res.headers.get('www-authenticate'),
  };
}

describe('the scope of a password check', () => {
  it('refuses a read-only token on every UserPasswordCheck route, sending nothing to the broker', async () => {
    const reader = await t.edge.token({ client_id: 'password-reader', scope: 'webapi' });
    for (const route of ROUTES) {
      const r = await check(reader, route.path);
      const message = 'the access token lacks the webapi.write scope this operation needs';
      if (route.v2) {
        expect(r.status, route.path).toBe(200);
        expect(r.body, route.path).toMatchObject({
          data: null,
          error: { code: 'Forbidden', managerCode: null, message },
        });
      } else {
        expect(r.status, route.path).toBe(403);
      }
      expect(r.challenge, route.path).toContain('error="insufficient_scope"');
      expect(r.challenge, route.path).toContain('scope="webapi.write"');
    }
    expect(t.broker.frames).toHaveLength(0);
  });

  it('passes a check with the write scope to the broker', async () => {
    const writer = await t.edge.token({ client_id: 'password-writer', scope: 'webapi webapi.write' });
    t.broker.script.set('PF4.UserPasswordCheck', { reply: { ok: true, data: true } });
    t.broker.script.set('PF5.UserPasswordCheck', { reply: { ok: true, data: true } });
    for (const route of ROUTES) {
      const r = await check(writer, route.path);
      expect(route.v2 ? r.body.data : r.body, route.path).toBe(true);
    }
    expect(t.broker.frames.map((f) => [f.op, f.args])).toStrictEqual([
      ['PF4.UserPasswordCheck', { login: 7, body: 'Guess123x' }],
      ['PF4.UserPasswordCheck', { login: 7, body: 'Guess123x' }],
      ['PF5.UserPasswordCheck', { login: 7, type: 'Main', body: 'Guess123x' }],
    ]);
  });
});

describe('a check past the bound of failures', () => {
  const message = 'too many failed password checks of login 7: at most 5 per 60 s; retry after 37 s';

  it("answers v1 429 with Retry-After and the platform's too-frequent code, v2 the envelope with the header", async () => {
    const token = await t.edge.token();
    t.broker.script.set('PF4.UserPasswordCheck', {
      reply: {
        ok: false,
        retryAfterSeconds: 37,
        error: { code: 'PF4Error', managerCode: PF4_RESULT.TooFrequent, message },
      },
    });
    t.broker.script.set('PF5.UserPasswordCheck', {
      reply: {
        ok: false,
        retryAfterSeconds: 37,
        error: { code: 'PF5Error', managerCode: PF5_RESULT.ErrFrequent, message },
      },
    });
    const [v2, v1, v1Pf5] = await Promise.all(ROUTES.map((route) => check(token, route.path)));
    expect(v2).toMatchObject({ status: 200, retryAfter: '37' });
    expect(v2.body).toStrictEqual({
      data: null,
      error: { code: 'PF4Error', managerCode: 'TooFrequent', message },
      meta: { activityId: expect.any(String) },
    });
    expect(v1).toMatchObject({ status: 429, retryAfter: '37' });
    expect(v1.body).toStrictEqual({ errorType: 'PF4API', errorCode: 'TooFrequent', errorDescription: message });
    expect(v1Pf5).toMatchObject({ status: 429, retryAfter: '37' });
    expect(v1Pf5.body).toStrictEqual({
      errorType: 'PF5API',
      errorCode: 'ErrFrequent',
      errorDescription: message,
      requestId: expect.any(String),
    });
  });
});
