/**
 * shapeAnswer (workers/gateway/shapeAnswer.ts): a broker answer with parsed `data`, one with `data` still JSON text,
 * and a failure, each shaped for v2 and v1 with its paging, outcome, time-out and error data carried over.
 */
import { describe, expect, it } from 'vitest';
import type { ShapeContext } from '../envelope/envelope.js';
import { shapeAnswer } from './shapeAnswer.js';

const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
const v2: ShapeContext = { generation: 'v2', family: 'PF4', paged: false, traceId: trace };
const v2Paged: ShapeContext = { ...v2, paged: true };
const v1: ShapeContext = { generation: 'v1', family: 'PF4', paged: false, traceId: trace };

describe('shapeAnswer', () => {
  it('shapes a parsed success', () => {
    expect(shapeAnswer(v2, { ok: true, data: { login: 7 } })).toStrictEqual({
      status: 200,
      body: `{"data":{"login":7},"error":null,"meta":{"activityId":"${trace}"}}`,
      headers: {},
    });
    expect(shapeAnswer(v1, { ok: true, data: [1, 2] })).toStrictEqual({ status: 200, body: '[1,2]', headers: {} });
  });

  it('shapes a success whose data is JSON text as it is, without parsing it', () => {
    // Text a parse and re-serialisation would change (spacing, a long integer): it must come through byte for byte.
    const dataJson = '{"deal": 9223372036854775807}';
    expect(shapeAnswer(v2, { ok: true, dataJson })).toStrictEqual({
      status: 200,
      body: `{"data":${dataJson},"error":null,"meta":{"activityId":"${trace}"}}`,
      headers: {},
    });
    expect(shapeAnswer(v1, { ok: true, dataJson })).toStrictEqual({ status: 200, body: dataJson, headers: {} });
  });

  it("names a success's change-stream position in X-Gateway-Position, whatever its form", () => {
    const pos = '1764748800123-42';
    expect(shapeAnswer(v2, { ok: true, data: 1, pos }).headers).toStrictEqual({ 'X-Gateway-Position': pos });
    expect(shapeAnswer(v1, { ok: true, dataJson: '1', pos }).headers).toStrictEqual({ 'X-Gateway-Position': pos });
    const bytes = shapeAnswer(v2, { ok: true, dataBytes: new TextEncoder().encode('[1]'), pos });
    expect(bytes.headers).toStrictEqual({ 'X-Gateway-Position': pos });
  });

  it('carries the paging of either form of success', () => {
    const paging = { nextCursor: 'c2', hasMore: true };
    const meta = `{"activityId":"${trace}","paging":{"nextCursor":"c2","hasMore":true}}`;
    expect(shapeAnswer(v2Paged, { ok: true, dataJson: '[1]', paging })).toStrictEqual({
      status: 200,
      body: `{"data":[1],"error":null,"meta":${meta}}`,
      headers: {},
    });
    expect(shapeAnswer(v2Paged, { ok: true, data: [1], paging })).toStrictEqual({
      status: 200,
      body: `{"data":[1],"error":null,"meta":${meta}}`,
      headers: {},
    });
  });

  it('shapes a failure with its manager code, outcome, time-out and error data', () => {
    const error = { code: 'NoConnect' as const, managerCode: 6, message: 'no answer' };
    expect(
      shapeAnswer(v2, { ok: false, error, outcome: 'unknown', timedOut: true, data: { partial: 1 } }),
    ).toStrictEqual({
      status: 200,
      body: `{"data":{"partial":1},"error":{"code":"NoConnect","managerCode":"NoConnect","message":"no answer"},"meta":{"activityId":"${trace}"}}`,
      headers: { 'X-Request-Outcome': 'unknown' },
    });
    // v1: a time-out is a 504 (a plain NoConnect a 503), whatever the code says.
    expect(shapeAnswer(v1, { ok: false, error, outcome: 'unknown', timedOut: true })).toStrictEqual({
      status: 504,
      body: '{"errorType":"PF4API","errorCode":"NoConnect","errorDescription":"no answer"}',
      headers: { 'X-Request-Outcome': 'unknown', 'Retry-After': '1' },
    });
    expect(shapeAnswer(v1, { ok: false, error })).toStrictEqual({
      status: 503,
      body: '{"errorType":"PF4API","errorCode":"NoConnect","errorDescription":"no answer"}',
      headers: { 'Retry-After': '5' },
    });
  });

  it('answers a refusal that says when to retry v1 429 with that Retry-After, and v2 its envelope with the header', () => {
    const error = {
      code: 'PF4Error' as const,
      managerCode: 8,
      message: 'too many failed password checks of login 7: at most 5 per 60 s; retry after 42 s',
    };
    expect(shapeAnswer(v1, { ok: false, error, retryAfterSeconds: 42 })).toStrictEqual({
      status: 429,
      body: `{"errorType":"PF4API","errorCode":"TooFrequent","errorDescription":"${error.message}"}`,
      headers: { 'Retry-After': '42' },
    });
    expect(shapeAnswer(v2, { ok: false, error, retryAfterSeconds: 42 })).toStrictEqual({
      status: 200,
      body: `{"data":null,"error":{"code":"PF4Error","managerCode":"TooFrequent","message":"${error.message}"},"meta":{"activityId":"${trace}"}}`,
      headers: { 'Retry-After': '42' },
    });
    const pf5 = shapeAnswer(
      { ...v1, family: 'PF5' },
      { ok: false, error: { code: 'PF5Error', managerCode: 12, message: 'later' }, retryAfterSeconds: 3 },
    );
    expect([pf5.status, JSON.parse(pf5.body).errorCode, pf5.headers]).toStrictEqual([
      429,
      'ErrFrequent',
      { 'Retry-After': '3' },
    ]);
  });
});
