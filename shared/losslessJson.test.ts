/**
 * The lossless JSON of the 64-bit ids: big integer tokens read as exact bigints and written back as bare digits,
 * everything else exactly as JSON.parse / JSON.stringify; and the canonical id form (a safe number, or a bigint beyond).
 */
import { describe, expect, it } from 'vitest';
import { JsonTooDeepError, parseJson, stringifyJson } from './losslessJson.js';
import { addInt64, canonicalInt, compareInt64, int64FromText, isInt64, INT64_MAX } from './int64.js';
import { findOperation } from './catalog/index.js';
import { validateInputs } from './catalog/inputs.js';

describe('parseJson', () => {
  it('reads integers beyond 2^53 − 1 as exact bigints and safe ones as numbers', () => {
    const v = parseJson(
      '{"a":9007199254740993,"b":9007199254740992,"c":9007199254740991,"d":-9223372036854775808,"e":[9223372036854775807]}',
    ) as any;
    expect(v.a).toBe(9007199254740993n);
    expect(v.b).toBe(9007199254740992n);
    expect(v.c).toBe(9007199254740991);
    expect(v.d).toBe(-9223372036854775808n);
    expect(v.e).toEqual([9223372036854775807n]);
    expect(v.a === v.b).toBe(false);
  });

  it('reads integers of 16, 17, 18 and 19 digits, signed either way, and both int64 bounds exactly, and writes them back', () => {
    const ids = [
      9007199254740995n,
      12345678901234567n,
      123456789012345677n,
      1234567890123456789n,
      9223372036854775807n,
      -9007199254740995n,
      -12345678901234567n,
      -123456789012345677n,
      -1234567890123456789n,
      -9223372036854775807n,
      -9223372036854775808n,
    ];
    const text = `{"ids":[${ids.join(',')}],"safe":[9007199254740991,-9007199254740991,1000000000000001]}`;
    const v = parseJson(text) as { ids: bigint[]; safe: number[] };
    expect(v.ids).toEqual(ids);
    for (const id of v.ids) expect(typeof id).toBe('bigint');
    expect(v.safe).toEqual([9007199254740991, -9007199254740991, 1000000000000001]);
    expect(stringifyJson(v)).toBe(text);
    for (const id of ids) expect(int64FromText(String(id))).toBe(id);
  });

  it('keeps fractions and exponents as doubles, however many digits they have', () => {
    const text = '[0.30000000000000004,12345678901234567.5,1e300,1.2345678901234567e+21,-0,12345678901234567890123]';
    const v = parseJson(text) as unknown[];
    expect(v.slice(0, 5)).toEqual(JSON.parse(text).slice(0, 5));
    expect(Object.is(v[4], -0)).toBe(true);
    expect(v[5]).toBe(12345678901234567890123n);
  });

  it('agrees with JSON.parse on every other value, strings with escapes and digits inside them included', () => {
    const text =
      ' { "s" : "x\\"y\\\\z\\u00e9\\n 12345678901234567890", "t": true, "f": false, "n": null, "o": {}, "a": [ ], ' +
      '"u": "é😀", "k": 12345678901234567890 } ';
    const exact = parseJson(text) as Record<string, unknown>;
    const native = JSON.parse(text) as Record<string, unknown>;
    expect({ ...exact, k: 0 }).toEqual({ ...native, k: 0 });
    expect(exact.k).toBe(12345678901234567890n);
  });

  it('makes "__proto__" an own member, as JSON.parse does', () => {
    const v = parseJson('{"__proto__":{"x":1},"id":12345678901234567890}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__', 'id']);
    expect((v as { x?: number }).x).toBeUndefined();
  });

  it('refuses malformed text with a SyntaxError, on the exact path as on the native one', () => {
    for (const bad of [
      '[12345678901234567890',
      '{"a":12345678901234567890,}',
      '[12345678901234567890]x',
      '[012345678901234567890]',
      '{"a" 12345678901234567890}',
      '["\u0001",12345678901234567890]',
      '[1,]',
    ]) {
      expect(() => parseJson(bad), bad).toThrow(SyntaxError);
    }
    expect(() => parseJson(`${'['.repeat(600)}12345678901234567890${']'.repeat(600)}`)).toThrow(SyntaxError);
  });
});

describe('parseJson on deep documents', () => {
  const nested = (levels: number, leaf: string) => '['.repeat(levels) + leaf + ']'.repeat(levels);

  it('reads a big integer exactly 512 levels down, and refuses one level deeper with JsonTooDeepError, a SyntaxError', () => {
    expect(
      JSON.stringify(parseJson(nested(512, '9007199254740993')), (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
    ).toBe(nested(512, '"9007199254740993n"'));
    let thrown: unknown;
    try {
      parseJson(nested(513, '9007199254740993'));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(JsonTooDeepError);
    expect(thrown).toBeInstanceOf(SyntaxError);
    expect((thrown as Error).message).toBe('JSON nests deeper than 512 levels');
  });

  it('reads any depth without a big integer natively, and malformed deep text is a plain SyntaxError', () => {
    let value = parseJson(nested(20_000, '1'));
    let depth = 0;
    for (; Array.isArray(value); depth++) value = value[0];
    expect([depth, value]).toStrictEqual([20_000, 1]);
    let thrown: unknown;
    try {
      parseJson(`${nested(600, '9007199254740993')}]`);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SyntaxError);
    expect(thrown).not.toBeInstanceOf(JsonTooDeepError);
  });
});

describe('stringifyJson', () => {
  it('writes bigints as bare digits, anywhere in the value', () => {
    const value = { login: 9223372036854775001n, list: [1, 9007199254740993n, { deal: 9007199254740993n }], name: 'x' };
    expect(stringifyJson(value)).toBe(
      '{"login":9223372036854775001,"list":[1,9007199254740993,{"deal":9007199254740993}],"name":"x"}',
    );
  });

  it('follows JSON.stringify for the rest: toJSON, undefined members, non-finite numbers, escapes', () => {
    const date = new Date(0);
    const value = {
      big: 1n << 62n,
      d: date,
      u: undefined,
      f: () => 1,
      arr: [undefined, NaN, Infinity, -0],
      s: 'a"\u0001\ud800',
      n: null,
    };
    const expected = JSON.stringify({ ...value, big: 0 }).replace('"big":0', `"big":${1n << 62n}`);
    expect(stringifyJson(value)).toBe(expected);
  });

  it("answers JSON.stringify's own text when there is no bigint, and round-trips with parseJson", () => {
    const value = { a: [1, 2.5, 'x'], b: { c: null } };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
    const text =
      '{"position":9223372036854775807,"login":9007199254740993,"price":1.08453,"items":[{"deal":-9223372036854775808}]}';
    expect(stringifyJson(parseJson(text))).toBe(text);
  });

  it('refuses a circular value', () => {
    const a: Record<string, unknown> = { id: 12345678901234567890n };
    a.self = a;
    expect(() => stringifyJson(a)).toThrow(TypeError);
  });
});

describe('int64 ids', () => {
  it('reads decimal text exactly, within int64', () => {
    expect(int64FromText('9007199254740993')).toBe(9007199254740993n);
    expect(int64FromText('9007199254740991')).toBe(9007199254740991);
    expect(int64FromText('0009007199254740991')).toBe(9007199254740991);
    expect(int64FromText('9223372036854775807')).toBe(INT64_MAX);
    expect(int64FromText('9223372036854775808')).toBeUndefined();
    expect(int64FromText('1e3')).toBeUndefined();
    expect(int64FromText('9'.repeat(401))).toBeUndefined();
  });

  it('keeps one canonical form, compares and steps across it', () => {
    expect(canonicalInt(5n)).toBe(5);
    expect(canonicalInt(9007199254740992n)).toBe(9007199254740992n);
    expect(isInt64(9007199254740992n)).toBe(true);
    expect(isInt64(5n)).toBe(false);
    expect(isInt64(2 ** 53)).toBe(false);
    expect(isInt64(INT64_MAX + 1n)).toBe(false);
    expect(compareInt64(9007199254740991, 9007199254740992n)).toBe(-1);
    expect(compareInt64(9007199254740993n, 9007199254740992n)).toBe(1);
    expect(addInt64(9007199254740991, 1)).toBe(9007199254740992n);
    expect(addInt64(9007199254740992n, -1)).toBe(9007199254740991);
    expect([9007199254740993n, 3, 9007199254740992n, 1].sort(compareInt64)).toEqual([
      1,
      3,
      9007199254740992n,
      9007199254740993n,
    ]);
  });
});

describe('64-bit ids in validated inputs', () => {
  const url = (q = '') => new URL(`http://edge/api/PF5/p/x${q}`);
  const none = { kind: 'none' } as const;

  it('answers path and query ids exactly, bigints beyond 2^53 − 1', () => {
    expect(validateInputs(findOperation('v1.PF5.UserGet')!, { login: '9007199254740993' }, url(), none)).toStrictEqual({
      ok: true,
      args: { login: 9007199254740993n },
    });
    expect(
      validateInputs(findOperation('v1.PF5.UserGetByLogins')!, {}, url('?logins=9007199254740992&logins=7'), none),
    ).toStrictEqual({ ok: true, args: { logins: [9007199254740992n, 7] } });
  });

  it('keeps a body id exact, and takes a big integer literal in a double field as that double', () => {
    const text = '{"deal":9223372036854775001,"price":123456789012345678901,"comment":"x"}';
    const r = validateInputs(findOperation('v1.PF5.DealUpdate')!, {}, url(), { kind: 'json', value: parseJson(text) });
    expect(r).toStrictEqual({
      ok: true,
      args: { body: { deal: 9223372036854775001n, price: 123456789012345680000, comment: 'x' } },
    });
    const over = validateInputs(findOperation('v1.PF5.DealUpdate')!, {}, url(), {
      kind: 'json',
      value: parseJson('{"deal":9223372036854775808}'),
    });
    expect(over).toStrictEqual({
      ok: false,
      message: 'body.deal: deal must be at most 9223372036854775807, written in digits',
    });
  });
});
