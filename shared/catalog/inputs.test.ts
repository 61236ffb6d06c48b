/**
 * validateInputs (shared/catalog/inputs.ts) on entries made for the test, beyond shared/catalog/inputs.calls.test.ts,
 * shared/catalog/inputs.text.test.ts and the 64-bit cases of shared/losslessJson.test.ts: how problems are named and
 * joined, which query values become arguments, which wrapped schemas take repeated parameters, when a big integer in
 * a double field is taken as that double, the exact control-character sets per allowance, member names, the bounds
 * on nesting and on the number of text problems, and the bounds that keep a large body's refusal short and cheap:
 * problems listed, the message's length, array lengths.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, type ControlCharacterAllowances, type Operation } from './index.js';
import { int32List } from './fields.js';
import {
  CONTROL_QUERY,
  MAX_BODY_ARRAY_ITEMS,
  MAX_BODY_DEPTH,
  MAX_LISTED_PROBLEMS,
  MAX_MESSAGE_LENGTH,
  validateInputs,
  type RawBody,
} from './inputs.js';

const url = (query = '') => new URL(`http://edge/x${query}`);
const none: RawBody = { kind: 'none' };
const json = (value: unknown): RawBody => ({ kind: 'json', value });
const base = { generation: 'v2', family: 'PF4', tag: 't', summary: 's', response: 'X', read: 'live' } as const;

function withQuery(query: z.ZodObject<any>): Operation {
  return defineOperation({ ...base, name: 'Q', method: 'GET', path: '/q', timeout: 'read', query });
}
function withBody(body: z.ZodType, controlCharacters?: ControlCharacterAllowances): Operation {
  return defineOperation({
    ...base,
    name: 'B',
    method: 'POST',
    path: '/b',
    timeout: 'change',
    body,
    ...(controlCharacters ? { controlCharacters } : {}),
  });
}

describe('problems', () => {
  it("names the edge's own query parameters", () => {
    expect([...CONTROL_QUERY].sort()).toEqual(['confirm', 'requestTimeout']);
  });

  it('joins several problems with "; " in the order the schemas found them', () => {
    const entry = withBody(z.object({ a: z.string(), b: z.number() }));
    expect(validateInputs(entry, {}, url(), json({ a: 1, b: 'x' }))).toStrictEqual({
      ok: false,
      message:
        'body.a: Invalid input: expected string, received number; body.b: Invalid input: expected number, received string',
    });
  });

  it('answers a body refused before parsing with its own problem, and only when the entry takes a body', () => {
    const refused: RawBody = { kind: 'refused', problem: 'body: must be UTF-8 text' };
    expect(validateInputs(withBody(z.unknown()), {}, url(), refused)).toStrictEqual({
      ok: false,
      message: 'body: must be UTF-8 text',
    });
    expect(validateInputs(withQuery(z.object({})), {}, url(), refused)).toStrictEqual({ ok: true, args: {} });
  });

  it('answers a problem of the whole parameters without a field, and of a missing body under body', () => {
    const entry = defineOperation({
      ...base,
      name: 'P',
      method: 'GET',
      path: '/p/{a}',
      timeout: 'read',
      params: z.object({ a: z.string() }).refine(() => false, 'the parameters do not fit together'),
    });
    expect(validateInputs(entry, { a: 'x' }, url(), none)).toStrictEqual({
      ok: false,
      message: 'the parameters do not fit together',
    });
    expect(validateInputs(withBody(z.object({ a: z.string() })), {}, url(), none)).toStrictEqual({
      ok: false,
      message: 'body: Invalid input: expected object, received undefined',
    });
  });

  it('checks text only once the schemas accepted the inputs', () => {
    const entry = withBody(z.object({ a: z.string(), b: z.number() }));
    expect(validateInputs(entry, {}, url(), json({ a: 'bell\u0007', b: 'x' }))).toStrictEqual({
      ok: false,
      message: 'body.b: Invalid input: expected number, received string',
    });
    expect(validateInputs(entry, {}, url(), json({ a: 'bell\u0007', b: 1 }))).toStrictEqual({
      ok: false,
      message: 'body.a: must not contain control characters',
    });
    // Text that passed its own schema waits too while another part of the call is refused.
    const both = defineOperation({
      ...base,
      name: 'PB',
      method: 'POST',
      path: '/pb/{name}',
      timeout: 'change',
      params: z.object({ name: z.string() }),
      body: z.object({ b: z.number() }),
    });
    expect(validateInputs(both, { name: 'bell\u0007' }, url(), json({ b: 'x' }))).toStrictEqual({
      ok: false,
      message: 'body.b: Invalid input: expected number, received string',
    });
    expect(validateInputs(both, { name: 'bell\u0007' }, url(), json({ b: 1 }))).toStrictEqual({
      ok: false,
      message: 'name: must not contain control characters',
    });
  });
});

describe('query', () => {
  it("passes declared values, but neither the edge's own parameters nor values that came out undefined", () => {
    const entry = withQuery(
      z.object({
        requestTimeout: z.string().optional(),
        confirm: z.string().optional(),
        name: z.string().optional(),
        gone: z
          .string()
          .transform(() => undefined)
          .optional(),
      }),
    );
    expect(validateInputs(entry, {}, url('?requestTimeout=5&confirm=true&name=n&gone=g&other=o'), none)).toStrictEqual({
      ok: true,
      args: { name: 'n' },
    });
    expect(validateInputs(entry, {}, url(), none)).toStrictEqual({ ok: true, args: {} });
  });

  it('collects repeated values for array fields behind optional, default, nullable and transform wrappers', () => {
    const entry = withQuery(
      z.object({
        a: z.array(z.string()).optional(),
        b: z.array(z.string()).default([]),
        c: z.array(z.string()).nullable().optional(),
        d: z
          .array(z.string())
          .transform((items) => items.join('+'))
          .optional(),
        s: z.string().optional(),
      }),
    );
    expect(validateInputs(entry, {}, url('?a=1&a=2&b=3&b=4&c=5&c=6&d=7&d=8&s=x&s=y'), none)).toStrictEqual({
      ok: true,
      args: { a: ['1', '2'], b: ['3', '4'], c: ['5', '6'], d: '7+8', s: 'x' },
    });
  });

  it('splits comma-joined values of array fields, repeated or not, in order; scalar fields keep their commas', () => {
    const entry = withQuery(z.object({ a: z.array(z.string()).optional(), s: z.string().optional() }));
    expect(validateInputs(entry, {}, url('?a=1,2&a=3&a=4,5,6&s=x,y'), none)).toStrictEqual({
      ok: true,
      args: { a: ['1', '2', '3', '4', '5', '6'], s: 'x,y' },
    });
    expect(validateInputs(entry, {}, url('?a=1%2C2'), none)).toStrictEqual({ ok: true, args: { a: ['1', '2'] } });
  });

  it('checks each element of a list the same way whichever form it came in, naming its position in the whole list', () => {
    const entry = withQuery(z.object({ logins: int32List('logins', 3) }));
    expect(validateInputs(entry, {}, url('?logins=100138,100000'), none)).toStrictEqual({
      ok: true,
      args: { logins: [100138, 100000] },
    });
    expect(validateInputs(entry, {}, url('?logins=1,2&logins=3'), none)).toStrictEqual({
      ok: true,
      args: { logins: [1, 2, 3] },
    });
    expect(validateInputs(entry, {}, url('?logins=1,x&logins=0'), none)).toStrictEqual({
      ok: false,
      message: 'logins.1: logins must be a positive integer; logins.2: logins must be at least 1',
    });
    expect(validateInputs(entry, {}, url('?logins=1,,2'), none)).toStrictEqual({
      ok: false,
      message: 'logins.1: logins must be a positive integer',
    });
    expect(validateInputs(entry, {}, url('?logins=1,2&logins=3,4'), none)).toStrictEqual({
      ok: false,
      message: 'logins: logins must list at most 3 values',
    });
    expect(validateInputs(entry, {}, url('?logins=1,2,3,4'), none)).toStrictEqual({
      ok: false,
      message: 'logins: logins must list at most 3 values',
    });
    expect(validateInputs(entry, {}, url('?logins=2147483648,1'), none)).toStrictEqual({
      ok: false,
      message: 'logins.0: logins must be at most 2147483647',
    });
  });

  it('looks through at most eight wrappers for an array', () => {
    let seven: z.ZodType = z.array(z.string());
    for (let i = 0; i < 7; i++) seven = seven.optional();
    const eight = seven.optional();
    expect(validateInputs(withQuery(z.object({ v: seven })), {}, url('?v=1&v=2'), none)).toStrictEqual({
      ok: true,
      args: { v: ['1', '2'] },
    });
    expect(validateInputs(withQuery(z.object({ v: eight })), {}, url('?v=1&v=2'), none)).toStrictEqual({
      ok: false,
      message: 'v: Invalid input: expected array, received string',
    });
  });
});

describe('big integers in double fields', () => {
  const entry = withBody(
    z.object({
      id: z.union([z.number().int(), z.bigint()]),
      price: z.number(),
      label: z.string().optional(),
      note: z.string().nullable().optional(),
      prices: z.array(z.number()).optional(),
      nested: z.object({ price: z.number() }).optional(),
    }),
  );

  it('takes a bigint a double field refused as its double, and keeps bigints the schema accepts', () => {
    expect(
      validateInputs(entry, {}, url(), json({ id: 9223372036854775807n, price: 123456789012345678901n })),
    ).toStrictEqual({ ok: true, args: { body: { id: 9223372036854775807n, price: 123456789012345680000 } } });
    expect(validateInputs(entry, {}, url(), json({ id: 5n, price: 1.5 }))).toStrictEqual({
      ok: true,
      args: { body: { id: 5n, price: 1.5 } },
    });
  });

  it('finds them in arrays and nested objects, past null members', () => {
    expect(validateInputs(entry, {}, url(), json({ id: 1, price: 2n ** 70n, note: null }))).toStrictEqual({
      ok: true,
      args: { body: { id: 1, price: 1180591620717411303424, note: null } },
    });
    expect(
      validateInputs(entry, {}, url(), json({ id: 1, price: 1, prices: [1, 2n ** 60n], nested: { price: 2n ** 61n } })),
    ).toStrictEqual({
      ok: true,
      args: { body: { id: 1, price: 1, prices: [1, 1152921504606846976], nested: { price: 2305843009213693952 } } },
    });
  });

  it('leaves every other refusal as it was', () => {
    expect(validateInputs(entry, {}, url(), json({ id: 5n, price: 'abc' }))).toStrictEqual({
      ok: false,
      message: 'body.price: Invalid input: expected number, received string',
    });
    expect(validateInputs(entry, {}, url(), json({ id: 1, price: 1, label: 7n }))).toStrictEqual({
      ok: false,
      message: 'body.label: Invalid input: expected string, received bigint',
    });
    const whole = withBody(z.number());
    expect(validateInputs(whole, {}, url(), json(2n ** 60n))).toStrictEqual({
      ok: false,
      message: 'body: Invalid input: expected number, received bigint',
    });
  });
});

describe('control characters', () => {
  const entry = withBody(
    z.object({
      text: z.string().optional(),
      note: z.string().optional(),
      noteX: z.string().optional(),
      meta: z.record(z.string(), z.unknown()).optional(),
      free: z.unknown().optional(),
    }),
    { 'body.note': 'lineBreaks', 'body.meta': 'any' },
  );
  const check = (body: Record<string, unknown>) => validateInputs(entry, {}, url(), json(body));
  const ANY = 'must not contain control characters';
  const BREAKS = 'must not contain control characters other than tab and line breaks';

  it('refuses C0, DEL and C1 in text without an allowance, and nothing around them', () => {
    for (const c of [
      '\u0000',
      '\u0008',
      '\t',
      '\n',
      '\u000b',
      '\u000c',
      '\r',
      '\u000e',
      '\u001f',
      '\u007f',
      '\u0080',
      '\u009f',
    ]) {
      expect(check({ text: `a${c}b` }), JSON.stringify(c)).toStrictEqual({ ok: false, message: `body.text: ${ANY}` });
    }
    for (const c of [' ', '~', '\u00a0', '\u00ff', '\u2028'])
      expect(check({ text: `a${c}b` }), JSON.stringify(c)).toStrictEqual({
        ok: true,
        args: { body: { text: `a${c}b` } },
      });
  });

  it('lets a field allowed line breaks have tab, LF and CR only, and its allowance not reach a field that merely starts alike', () => {
    for (const c of ['\t', '\n', '\r']) expect(check({ note: `a${c}b` }).ok, JSON.stringify(c)).toBe(true);
    for (const c of ['\u0000', '\u0008', '\u000b', '\u000c', '\u000e', '\u001f', '\u007f', '\u0085', '\u009f']) {
      expect(check({ note: `a${c}b` }), JSON.stringify(c)).toStrictEqual({
        ok: false,
        message: `body.note: ${BREAKS}`,
      });
    }
    expect(check({ noteX: 'a\nb' })).toStrictEqual({ ok: false, message: `body.noteX: ${ANY}` });
  });

  it('lets everything under a field allowed any, but neither lone surrogates nor its member names', () => {
    expect(check({ meta: { deep: ['\u0000\u0007\n'] } })).toStrictEqual({
      ok: true,
      args: { body: { meta: { deep: ['\u0000\u0007\n'] } } },
    });
    expect(check({ meta: { deep: '\udfff' } })).toStrictEqual({
      ok: false,
      message: 'body.meta.deep: must be well-formed Unicode text (it holds a lone surrogate)',
    });
    expect(check({ meta: { 'k\u0007': 1 } })).toStrictEqual({
      ok: false,
      message: `body.meta member name "k\\u0007": ${ANY}`,
    });
  });

  it('refuses lone surrogates at either end of the ranges', () => {
    for (const s of ['\udbff', 'a\udbffb', '\udfff', '\udc00x']) {
      expect(check({ text: s }), JSON.stringify(s)).toStrictEqual({
        ok: false,
        message: 'body.text: must be well-formed Unicode text (it holds a lone surrogate)',
      });
    }
    for (const s of ['\ud800\udc00', '\udbff\udfff']) expect(check({ text: s }).ok).toBe(true);
  });

  it('names a member by its first 64 characters, and walks null members', () => {
    const name = `${'n'.repeat(63)}\u0001${'m'.repeat(10)}`;
    expect(check({ free: { [name]: null } })).toStrictEqual({
      ok: false,
      message: `body.free member name "${'n'.repeat(63)}\\u0001": ${ANY}`,
    });
    expect(check({ free: { a: null, b: [null] } })).toStrictEqual({
      ok: true,
      args: { body: { free: { a: null, b: [null] } } },
    });
  });

  it('reports the first five text problems only, last item first', () => {
    expect(check({ free: ['\u0001', '\u0002', '\u0003', '\u0004', '\u0005', '\u0006', '\u0007'] })).toStrictEqual({
      ok: false,
      message: [6, 5, 4, 3, 2].map((i) => `body.free.${i}: ${ANY}`).join('; '),
    });
  });
});

describe('nesting', () => {
  const entry = withBody(z.unknown());
  const nested = (levels: number) => {
    let value: unknown = 'leaf';
    for (let i = 0; i < levels; i++) value = [value];
    return value;
  };

  it('takes a body nested MAX_BODY_DEPTH levels below it, and refuses one level more', () => {
    expect(MAX_BODY_DEPTH).toBe(32);
    // The body itself is level 0: 32 arrays put the innermost at level 31, 33 put one at level 32.
    expect(validateInputs(entry, {}, url(), json(nested(32)))).toStrictEqual({ ok: true, args: { body: nested(32) } });
    expect(validateInputs(entry, {}, url(), json(nested(33)))).toStrictEqual({
      ok: false,
      message: `body${'.0'.repeat(32)}: nests deeper than 32 levels`,
    });
    expect(validateInputs(entry, {}, url(), json({ a: nested(31) })).ok).toBe(true);
    expect(validateInputs(entry, {}, url(), json({ a: nested(32) }))).toStrictEqual({
      ok: false,
      message: `body.a${'.0'.repeat(31)}: nests deeper than 32 levels`,
    });
  });
});

describe('large bodies', () => {
  const wrong = (n: number) => Array.from({ length: n }, () => 'x');

  it('lists the first ten problems and counts the rest', () => {
    expect(MAX_LISTED_PROBLEMS).toBe(10);
    const entry = withBody(z.object({ logins: z.array(z.number()) }));
    const first = Array.from(
      { length: 10 },
      (_, i) => `body.logins.${i}: Invalid input: expected number, received string`,
    );
    expect(validateInputs(entry, {}, url(), json({ logins: wrong(50_000) }))).toStrictEqual({
      ok: false,
      message: `${first.join('; ')}; … and 49990 more problems`,
    });
    expect(validateInputs(entry, {}, url(), json({ logins: wrong(11) }))).toStrictEqual({
      ok: false,
      message: `${first.join('; ')}; … and 1 more problem`,
    });
    expect(validateInputs(entry, {}, url(), json({ logins: wrong(10) }))).toStrictEqual({
      ok: false,
      message: first.join('; '),
    });
  });

  it('counts problems of the path, the query and the body together', () => {
    const entry = defineOperation({
      ...base,
      name: 'A',
      method: 'POST',
      path: '/a/{a}',
      timeout: 'change',
      params: z.object({ a: z.number() }),
      query: z.object({ q: z.number() }),
      body: z.array(z.number()),
    });
    const problem = (field: string) => `${field}: Invalid input: expected number, received string`;
    const listed = ['a', 'q', ...Array.from({ length: 8 }, (_, i) => `body.${i}`)].map(problem);
    expect(validateInputs(entry, { a: 'x' }, url('?q=y'), json(wrong(20)))).toStrictEqual({
      ok: false,
      message: `${listed.join('; ')}; … and 12 more problems`,
    });
  });

  it('stops listing before the message passes 4096 characters, and cuts a longer first problem, never inside a surrogate pair', () => {
    expect(MAX_MESSAGE_LENGTH).toBe(4096);
    const long = 'y'.repeat(1500);
    const wordy = withBody(z.array(z.string().refine(() => false, long)));
    expect(validateInputs(wordy, {}, url(), json(wrong(20)))).toStrictEqual({
      ok: false,
      message: `body.0: ${long}; body.1: ${long}; … and 18 more problems`,
    });

    const strict = withBody(z.strictObject({}));
    // 2,000 unrecognized keys make a first problem of about 14,000 characters, past the bound as any longer one is.
    const keys = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]));
    const many = validateInputs(strict, {}, url(), json(keys)) as { message: string };
    expect(many.message).toHaveLength(4096);
    expect(many.message).toMatch(/^body: Unrecognized keys: "k0", "k1", .*…$/);
    // 25 characters before the key and 4069 a's put the emoji's pair at 4094 and 4095, across the cut: it goes whole.
    const emoji = validateInputs(strict, {}, url(), json({ [`${'a'.repeat(4069)}🙂`]: 1 })) as { message: string };
    expect(emoji.message).toBe(`body: Unrecognized key: "${'a'.repeat(4069)}…`);
  });

  it('refuses an array longer than 120000 items before the schema runs, naming the array', () => {
    expect(MAX_BODY_ARRAY_ITEMS).toBe(120_000);
    const any = withBody(z.unknown());
    expect(validateInputs(any, {}, url(), json(wrong(120_000))).ok).toBe(true);
    expect(validateInputs(any, {}, url(), json(wrong(120_001)))).toStrictEqual({
      ok: false,
      message: 'body: must hold at most 120000 items',
    });
    expect(validateInputs(any, {}, url(), json({ a: [1, { b: wrong(130_000) }] }))).toStrictEqual({
      ok: false,
      message: 'body.a.1.b: must hold at most 120000 items',
    });
    // A schema that would refuse every item is not run: one problem, not 130000.
    const numbers = withBody(z.array(z.number()));
    expect(validateInputs(numbers, {}, url(), json(wrong(130_000)))).toStrictEqual({
      ok: false,
      message: 'body: must hold at most 120000 items',
    });
    // Below the bound an operation's own bound answers.
    const bounded = withBody(z.array(z.string()).max(100_000, 'must list at most 100000 items'));
    expect(validateInputs(bounded, {}, url(), json(wrong(100_001)))).toStrictEqual({
      ok: false,
      message: 'body: must list at most 100000 items',
    });
  });

  it('walks a wide body holding a big integer without overflowing the stack', () => {
    const entry = withBody(z.object({ price: z.number() }));
    const wide: Record<string, unknown> = Object.fromEntries(Array.from({ length: 150_000 }, (_, i) => [`k${i}`, i]));
    wide.price = 'x';
    wide.id = 2n ** 70n;
    expect(validateInputs(entry, {}, url(), json(wide))).toStrictEqual({
      ok: false,
      message: 'body.price: Invalid input: expected number, received string',
    });
  });
});
