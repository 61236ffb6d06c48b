/** The edge's per-call input handling: validation messages, query arrays, time budgets, key form, fingerprints, traces. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, findOperation, type Operation } from '../../shared/catalog/index.js';
import { validateInputs } from './inputs.js';
import { resolveTimeout } from './timeout.js';
import { canonicalJson, idempotencyKeyProblem, requestHash } from './idempotency.js';
import { parseTraceparent, randomHex } from './traceparent.js';

const op = (id: string) => findOperation(id)!;
const url = (q = '') => new URL(`http://edge/x${q}`);
const none = { kind: 'none' } as const;

describe('validateInputs', () => {
  it('coerces path values and names the field and rule on failure', () => {
    expect(validateInputs(op('v2.PF4.UserRecordGet'), { login: '42', tradePlatform: 'p' }, url(), none)).toStrictEqual({ ok: true, args: { login: 42 } });
    expect(validateInputs(op('v2.PF4.UserRecordGet'), { login: 'abc' }, url(), none))
      .toStrictEqual({ ok: false, message: 'login: login must be a positive integer' });
  });

  it('takes declared query fields only, drops controls, and passes paging values', () => {
    const r = validateInputs(op('v2.PF4.UsersRequest'), {}, url('?limit=10&cursor=c&other=1&requestTimeout=5'), none);
    expect(r).toStrictEqual({ ok: true, args: { limit: 10, cursor: 'c' } });
    const destructive = validateInputs(op('v2.PF4.SrvRestart'), {}, url('?confirm=true'), none);
    expect(destructive).toStrictEqual({ ok: true, args: {} });
  });

  it('collects repeated query parameters for array fields', () => {
    const entry: Operation = defineOperation({
      name: 'T', generation: 'v2', family: 'PF4', method: 'GET', path: '/t', tag: 't', summary: 't', response: 'X',
      timeout: 'read', read: 'live',
      query: z.object({ logins: z.array(z.string().regex(/^\d+$/).transform(Number)).min(1, 'logins must not be empty'), single: z.string().optional() }),
    });
    expect(validateInputs(entry, {}, url('?logins=1&logins=2&single=a&single=b'), none)).toStrictEqual({ ok: true, args: { logins: [1, 2], single: 'a' } });
    expect(validateInputs(entry, {}, url(), none)).toMatchObject({ ok: false, message: expect.stringMatching(/^logins: /) });
  });

  it('validates bodies under body., and reports malformed JSON', () => {
    const entry = op('v2.PF4.UserRecordNew');
    expect(validateInputs(entry, {}, url(), { kind: 'json', value: { group: 'g', name: 'n' } })).toMatchObject({ ok: true, args: { body: { group: 'g', name: 'n' } } });
    expect(validateInputs(entry, {}, url(), { kind: 'json', value: { group: '', name: 'n' } })).toStrictEqual({ ok: false, message: 'body.group: group is required' });
    expect(validateInputs(entry, {}, url(), { kind: 'malformed' })).toStrictEqual({ ok: false, message: 'body: must be well-formed JSON' });
  });
});

describe('resolveTimeout', () => {
  const read = op('v2.PF4.ServerTime');
  it('uses the class default, the header before the query, and refuses out-of-range values', () => {
    expect(resolveTimeout(read, undefined, null)).toStrictEqual({ ok: true, seconds: 10 });
    expect(resolveTimeout(op('v2.PF4.UserRecordNew'), undefined, null).seconds).toBe(15);
    expect(resolveTimeout(op('v2.PF4.SrvRestart'), undefined, null).seconds).toBe(60);
    expect(resolveTimeout(read, '2.5', '7')).toStrictEqual({ ok: true, seconds: 2.5 });
    expect(resolveTimeout(read, undefined, '300')).toStrictEqual({ ok: true, seconds: 300 });
    expect(resolveTimeout(read, '0.5', null)).toMatchObject({ ok: false, seconds: 10, message: 'X-Request-Timeout: must be a number of seconds from 1 to 300' });
    expect(resolveTimeout(read, undefined, '301')).toMatchObject({ ok: false, message: 'requestTimeout: must be a number of seconds from 1 to 300' });
    expect(resolveTimeout(read, '1e2', null).ok).toBe(false);
  });
});

describe('idempotency', () => {
  it('accepts 1 to 255 visible ASCII characters', () => {
    expect(idempotencyKeyProblem('a')).toBeNull();
    expect(idempotencyKeyProblem('k'.repeat(255))).toBeNull();
    for (const bad of ['', 'k'.repeat(256), 'a b', 'é']) expect(idempotencyKeyProblem(bad)).toMatch(/^Idempotency-Key: /);
  });

  it('fingerprints the request regardless of key order and timing controls', async () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    const a = await requestHash('POST', new URL('http://e/p?x=1&requestTimeout=5'), { b: 1, a: 2 });
    const b = await requestHash('POST', new URL('http://e/p?x=1'), { a: 2, b: 1 });
    const c = await requestHash('POST', new URL('http://e/p?x=2'), { a: 2, b: 1 });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it('fingerprints method, path, query and body: a change to any one of them is another request', async () => {
    const body = { group: 'demo', name: 'Alice' };
    const base = await requestHash('POST', new URL('http://e/api/v2/PF4/p1/UserRecordNew?x=1'), body);
    const variants = [
      await requestHash('PUT', new URL('http://e/api/v2/PF4/p1/UserRecordNew?x=1'), body),
      await requestHash('POST', new URL('http://e/api/v2/PF4/p2/UserRecordNew?x=1'), body),
      await requestHash('POST', new URL('http://e/api/v2/PF4/p1/UserRecordUpdate?x=1'), body),
      await requestHash('POST', new URL('http://e/api/v2/PF4/p1/UserRecordNew?x=2'), body),
      await requestHash('POST', new URL('http://e/api/v2/PF4/p1/UserRecordNew?x=1'), { ...body, name: 'Bob' }),
      await requestHash('POST', new URL('http://e/api/v2/PF4/p1/UserRecordNew?x=1'), undefined),
    ];
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
    // The host is not part of the request: the same call through another edge address is the same request.
    expect(await requestHash('POST', new URL('http://other:8787/api/v2/PF4/p1/UserRecordNew?x=1'), body)).toBe(base);
  });
});

describe('traceparent', () => {
  it('keeps a valid trace id and refuses malformed or all-zero ones', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toStrictEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', flags: '01' });
    for (const bad of [undefined, '', 'garbage', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`, 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
  });
});
