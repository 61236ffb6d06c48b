/**
 * The edge half of `Idempotency-Key` (workers/api/idempotency.ts): the key's exact form, the canonical path, the
 * canonical JSON of every kind of value, the fingerprint's independence of key order and timing controls, and the
 * exact text a request's fingerprint is the SHA-256 of.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalPath, IDEMPOTENCY_HEADER, idempotencyKeyProblem, requestHash } from './idempotency.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const REFUSAL = 'Idempotency-Key: must be 1 to 255 visible ASCII characters';

describe('idempotencyKeyProblem', () => {
  it('names the header', () => {
    expect(IDEMPOTENCY_HEADER).toBe('Idempotency-Key');
  });

  it('accepts visible ASCII from ! to ~, 1 to 255 of them', () => {
    for (const key of ['!', '~', 'a', '!~', 'k'.repeat(254), 'k'.repeat(255), 'ABC-123_x.y:z/{}'])
      expect(idempotencyKeyProblem(key), key).toBeNull();
  });

  it('refuses spaces, controls, DEL and non-ASCII anywhere, and more than 255 characters, with one message', () => {
    for (const key of [
      '',
      ' ',
      ' a',
      'a ',
      'a b',
      '\ta',
      'a\n',
      'a\u007f',
      '\u007f',
      'é',
      'aé',
      'k'.repeat(256),
      `${'k'.repeat(255)} `,
    ]) {
      expect(idempotencyKeyProblem(key), JSON.stringify(key)).toBe(REFUSAL);
    }
  });
});

describe('canonicalPath', () => {
  const entry = { path: '/api/v2/PF4/{tradePlatform}/Thing/{login}/{symbol}' };

  it('puts the platform id in lower case and every other parameter as the canonical JSON of its value', () => {
    expect(canonicalPath(entry, 'AbC-DEF', { login: 7, symbol: 'EUR/USD' })).toBe(
      '/api/v2/PF4/abc-def/Thing/7/%22EUR%2FUSD%22',
    );
    expect(canonicalPath(entry, 'p', { login: 9007199254740993n, symbol: 'x y' })).toBe(
      '/api/v2/PF4/p/Thing/9007199254740993/%22x%20y%22',
    );
  });

  it('takes a missing value as null', () => {
    expect(canonicalPath(entry, 'p', {})).toBe('/api/v2/PF4/p/Thing/null/null');
  });

  it('leaves a path without parameters as it is', () => {
    expect(canonicalPath({ path: '/api/v2/PF4/Plain' }, 'P', { login: 1 })).toBe('/api/v2/PF4/Plain');
  });
});

describe('canonicalJson', () => {
  it('writes scalars as JSON, bigints as their digits, and undefined as nothing', () => {
    expect(canonicalJson(undefined)).toBe('');
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(0)).toBe('0');
    expect(canonicalJson(-1.5)).toBe('-1.5');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    expect(canonicalJson(9223372036854775807n)).toBe('9223372036854775807');
  });

  it('writes arrays in order, with undefined items as null', () => {
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalJson([undefined, null, 'x', [2n]])).toBe('[null,null,"x",[2]]');
  });

  it('writes objects with their keys sorted and undefined members left out', () => {
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson({ d: 4, b: 2, e: 5, a: 1, c: 3 })).toBe('{"a":1,"b":2,"c":3,"d":4,"e":5}');
    expect(canonicalJson({ e: 5, c: 3, a: 1, d: 4, b: 2 })).toBe('{"a":1,"b":2,"c":3,"d":4,"e":5}');
    expect(canonicalJson({ b: undefined, a: null })).toBe('{"a":null}');
    expect(canonicalJson({ z: { y: [{ b: 1, a: 2 }], x: 0n }, 'k"': 1 })).toBe(
      '{"k\\"":1,"z":{"x":0,"y":[{"a":2,"b":1}]}}',
    );
    // Keys sort by code unit: upper case before lower case.
    expect(canonicalJson({ b: 1, B: 2, a: 3 })).toBe('{"B":2,"a":3,"b":1}');
  });
});

describe('requestHash', () => {
  it('is the hex SHA-256 of method, path, sorted query without requestTimeout and canonical body, one per line', async () => {
    const url = new URL('http://edge/api/v2/PF4/p1/UserRecordNew?b=2&a=1&requestTimeout=5&a=0&c+d=x%20y&e=%26');
    const text = 'POST\n/api/v2/PF4/p1/UserRecordNew\na=0&a=1&b=2&c%20d=x%20y&e=%26\n{"a":2,"b":1}';
    expect(await requestHash('POST', url, { b: 1, a: 2 })).toBe(sha256(text));
  });

  it('sorts repeated parameters by value and keeps equal pairs', async () => {
    const url = new URL('http://edge/p?k=b&k=a&k=b&j=z');
    expect(await requestHash('GET', url, undefined)).toBe(sha256('GET\n/p\nj=z&k=a&k=b&k=b\n'));
  });

  it("takes the canonical path when one is given, else the URL's", async () => {
    const url = new URL('http://edge/api/v2/PF4/P1/UserRecordGet/007');
    expect(await requestHash('GET', url, undefined, '/api/v2/PF4/p1/UserRecordGet/7')).toBe(
      sha256('GET\n/api/v2/PF4/p1/UserRecordGet/7\n\n'),
    );
    expect(await requestHash('GET', url, undefined)).toBe(sha256('GET\n/api/v2/PF4/P1/UserRecordGet/007\n\n'));
  });

  it('counts the named lists element by element, repeated, comma-joined or both, and leaves other commas alone', async () => {
    const lists = new Set(['logins']);
    const text = sha256('POST\n/p\nlogins=1&logins=2&logins=3&s=a%2Cb\n');
    for (const query of [
      'logins=1,2,3&s=a,b',
      'logins=3&logins=1&logins=2&s=a,b',
      'logins=2,1&s=a,b&logins=3',
      'logins=1%2C2%2C3&s=a%2Cb',
    ]) {
      expect(await requestHash('POST', new URL(`http://edge/p?${query}`), undefined, '/p', lists), query).toBe(text);
    }
    expect(await requestHash('POST', new URL('http://edge/p?logins=1,2,3&s=a,b'), undefined, '/p')).toBe(
      sha256('POST\n/p\nlogins=1%2C2%2C3&s=a%2Cb\n'),
    );
    expect(await requestHash('POST', new URL('http://edge/p?logins=1,2&s=a,b'), undefined, '/p', lists)).not.toBe(text);
  });

  it('writes every digest byte as two hex digits', async () => {
    // SHA-256 of this text has bytes below 0x10 (a single hex digit without padding).
    const digest = await requestHash('GET', new URL('http://edge/'), null);
    expect(digest).toBe(sha256('GET\n/\n\nnull'));
    expect(digest).toHaveLength(64);
  });
});

describe('idempotency', () => {
  it('accepts 1 to 255 visible ASCII characters', () => {
    expect(idempotencyKeyProblem('a')).toBeNull();
    expect(idempotencyKeyProblem('k'.repeat(255))).toBeNull();
    for (const bad of ['', 'k'.repeat(256), 'a b', 'é'])
      expect(idempotencyKeyProblem(bad)).toMatch(/^Idempotency-Key: /);
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
