/** Response shaping of both generations: v2 envelopes, v1 statuses and bodies, manager code naming. */
import { describe, expect, it } from 'vitest';
import { failure, outcomeOf, statusOutcome, success, traceToUuid, v1Status, type ShapeContext } from './envelope.js';
import { platformNotFound } from './refusal.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const v2: ShapeContext = { generation: 'v2', family: 'PF4', paged: false, traceId: TRACE };
const v1: ShapeContext = { ...v2, generation: 'v1' };

describe('v2 envelope', () => {
  it('keeps error present and null on success, paging only on paged lists', () => {
    expect(JSON.parse(success(v2, { a: 1 }).body)).toStrictEqual({
      data: { a: 1 },
      error: null,
      meta: { activityId: TRACE },
    });
    expect(JSON.parse(success({ ...v2, paged: true }, [], { nextCursor: 'n', hasMore: true }).body).meta).toStrictEqual(
      { activityId: TRACE, paging: { nextCursor: 'n', hasMore: true } },
    );
    expect(JSON.parse(success({ ...v2, paged: true }, []).body).meta.paging).toStrictEqual({
      nextCursor: null,
      hasMore: false,
    });
    expect(JSON.parse(success(v2, undefined).body).data).toBeNull();
  });

  it('answers failures with HTTP 200, null data and the named manager code', () => {
    const r = failure(v2, { code: 'NotFound', managerCode: 3, message: 'no such login' });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toStrictEqual({
      data: null,
      error: { code: 'NotFound', managerCode: 'InvalidData', message: 'no such login' },
      meta: { activityId: TRACE },
    });
    expect(JSON.parse(failure(v2, { code: 'PF4Error', managerCode: 9999, message: 'x' }).body).error.managerCode).toBe(
      9999,
    );
    expect(
      JSON.parse(failure({ ...v2, family: 'PF5' }, { code: 'PF5Error', managerCode: 3004, message: 'x' }).body).error
        .managerCode,
    ).toBe('UsrLoginExist');
    expect(r.headers).toStrictEqual({});
  });

  it('sets X-Request-Outcome only for an unknown outcome', () => {
    expect(
      failure(v2, { code: 'NoConnect', managerCode: null, message: 't', outcome: 'unknown' }).headers,
    ).toStrictEqual({ 'X-Request-Outcome': 'unknown' });
    expect(
      failure(v1, { code: 'NoConnect', managerCode: null, message: 't', outcome: 'unknown', timedOut: true }).headers,
    ).toStrictEqual({ 'X-Request-Outcome': 'unknown', 'Retry-After': '1' });
  });
});

describe('Retry-After and outcomes', () => {
  it('tells a v1 caller when to retry a 503 or a 504, and no other answer', () => {
    expect(failure(v1, { code: 'NoConnect', managerCode: null, message: 'down' })).toMatchObject({
      status: 503,
      headers: { 'Retry-After': '5' },
    });
    expect(failure(v1, { code: 'NoConnect', managerCode: null, message: 'late', timedOut: true })).toMatchObject({
      status: 504,
      headers: { 'Retry-After': '1' },
    });
    for (const code of ['Validation', 'NotFound', 'PF4Error', 'Internal'] as const) {
      expect(failure(v1, { code, managerCode: null, message: 'x' }).headers).toStrictEqual({});
    }
    // v2 answers 200 whatever happened: nothing to retry at the HTTP level.
    expect(failure(v2, { code: 'NoConnect', managerCode: null, message: 'down' }).headers).toStrictEqual({});
  });

  it('reads the outcome of an answer for the access log', () => {
    expect(outcomeOf(200, success(v2, { a: 1 }).body, 'v2')).toBe('ok');
    // A record whose own fields are called "error" does not confuse it: the envelope's comes last.
    expect(outcomeOf(200, success(v2, [{ error: 'x', note: '"error":{"code":"Fake"}' }]).body, 'v2')).toBe('ok');
    expect(
      outcomeOf(200, failure(v2, { code: 'PF4Error', managerCode: 3, message: 'has "error": in it' }).body, 'v2'),
    ).toBe('PF4Error');
    expect(outcomeOf(200, success({ ...v2, paged: true }, [], { nextCursor: 'n', hasMore: true }).body, 'v2')).toBe(
      'ok',
    );
    const v1Failure = failure(v1, { code: 'NotFound', managerCode: null, message: 'x' });
    expect(outcomeOf(v1Failure.status, v1Failure.body, 'v1')).toBe('NotFound');
    expect(outcomeOf(200, '{"order":1}', 'v1')).toBe('ok');
    expect(statusOutcome(429)).toBe('RateLimited');
    expect(statusOutcome(418)).toBe('HTTP418');
  });
});

describe('v1', () => {
  it('answers the bare data on success', () => {
    expect(success(v1, { order: 1 })).toStrictEqual({ status: 200, body: '{"order":1}', headers: {} });
  });

  it('maps codes to statuses', () => {
    const s = (code: Parameters<typeof v1Status>[0]['code'], timedOut?: boolean) =>
      v1Status({ code, managerCode: null, message: '', timedOut });
    expect([
      s('Validation'),
      s('NotFound'),
      s('Forbidden'),
      s('PF4Error'),
      s('PF5Error'),
      s('NoConnect'),
      s('NoConnect', true),
      s('Internal'),
    ]).toEqual([400, 404, 403, 400, 400, 503, 504, 500]);
    // A refusal that says when to retry is too many requests, whatever its code.
    expect([
      v1Status({ code: 'PF4Error', managerCode: 8, message: '', retryAfterSeconds: 30 }),
      v1Status({ code: 'PF5Error', managerCode: 12, message: '', retryAfterSeconds: 1 }),
    ]).toEqual([429, 429]);
  });

  it('uses PF4API bodies for PF4 platform failures and PF5Error bodies for PF5 ones', () => {
    expect(
      JSON.parse(failure(v1, { code: 'NotFound', managerCode: 3, message: 'ticket 7 not open' }).body),
    ).toStrictEqual({ errorType: 'PF4API', errorCode: 'InvalidData', errorDescription: 'ticket 7 not open' });
    const pf5 = failure({ ...v1, family: 'PF5' }, { code: 'PF5Error', managerCode: 3004, message: 'exists' });
    expect(pf5.status).toBe(400);
    expect(JSON.parse(pf5.body)).toStrictEqual({
      errorDescription: 'exists',
      errorCode: 'UsrLoginExist',
      errorType: 'PF5API',
      requestId: traceToUuid(TRACE),
    });
    expect(traceToUuid(TRACE)).toBe('4bf92f35-77b3-4da6-a3ce-929d0e0e4736');
    expect(
      JSON.parse(failure(v1, { code: 'NoConnect', managerCode: null, message: 'slow', timedOut: true }).body),
    ).toStrictEqual({ errorType: 'Timeout', errorCode: 'NoConnect', errorDescription: 'slow' });
  });

  it('answers unknown platforms without a manager code in both generations', () => {
    expect(JSON.parse(platformNotFound(v2, 'p').body).error).toStrictEqual({
      code: 'NotFound',
      managerCode: null,
      message: 'trade platform p not found',
    });
    const r = platformNotFound(v1, 'p');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body)).toStrictEqual({
      errorType: 'NotFound',
      errorCode: 'NotFound',
      errorDescription: 'trade platform p not found',
    });
  });
});
