/** One call's inputs against its catalog entry (inputs.ts): path values, query fields and arrays, bodies, messages. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, findOperation, type Operation } from './index.js';
import { validateInputs } from './inputs.js';

const op = (id: string) => findOperation(id)!;
const url = (q = '') => new URL(`http://edge/x${q}`);
const none = { kind: 'none' } as const;

describe('validateInputs', () => {
  it('coerces path values and names the field and rule on failure', () => {
    expect(validateInputs(op('v2.PF4.UserRecordGet'), { login: '42', tradePlatform: 'p' }, url(), none)).toStrictEqual({
      ok: true,
      args: { login: 42 },
    });
    expect(validateInputs(op('v2.PF4.UserRecordGet'), { login: 'abc' }, url(), none)).toStrictEqual({
      ok: false,
      message: 'login: login must be a positive integer',
    });
  });

  it('takes declared query fields only, drops controls, and passes paging values', () => {
    const r = validateInputs(op('v2.PF4.UsersRequest'), {}, url('?limit=10&cursor=c&other=1&requestTimeout=5'), none);
    expect(r).toStrictEqual({ ok: true, args: { limit: 10, cursor: 'c' } });
    const destructive = validateInputs(op('v2.PF4.SrvRestart'), {}, url('?confirm=true'), none);
    expect(destructive).toStrictEqual({ ok: true, args: {} });
  });

  it('collects repeated query parameters for array fields', () => {
    const entry: Operation = defineOperation({
      name: 'T',
      generation: 'v2',
      family: 'PF4',
      method: 'GET',
      path: '/t',
      tag: 't',
      summary: 't',
      response: 'X',
      timeout: 'read',
      read: 'live',
      query: z.object({
        logins: z.array(z.string().regex(/^\d+$/).transform(Number)).min(1, 'logins must not be empty'),
        single: z.string().optional(),
      }),
    });
    expect(validateInputs(entry, {}, url('?logins=1&logins=2&single=a&single=b'), none)).toStrictEqual({
      ok: true,
      args: { logins: [1, 2], single: 'a' },
    });
    expect(validateInputs(entry, {}, url(), none)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^logins: /),
    });
  });

  it('validates bodies under body., and reports malformed JSON', () => {
    const entry = op('v2.PF4.UserRecordNew');
    expect(validateInputs(entry, {}, url(), { kind: 'json', value: { group: 'g', name: 'n' } })).toMatchObject({
      ok: true,
      args: { body: { group: 'g', name: 'n' } },
    });
    expect(validateInputs(entry, {}, url(), { kind: 'json', value: { group: '', name: 'n' } })).toStrictEqual({
      ok: false,
      message: 'body.group: group is required',
    });
    expect(validateInputs(entry, {}, url(), { kind: 'malformed' })).toStrictEqual({
      ok: false,
      message: 'body: must be well-formed JSON',
    });
  });
});
