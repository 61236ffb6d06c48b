/**
 * Text inputs are checked once for every entry, after validation: control characters and lone surrogates are refused
 * in path, query and body text and in body member names, naming the field, unless the entry allows them for that
 * field; bodies nest at most MAX_BODY_DEPTH levels. Real catalog entries.
 */
import { describe, expect, it } from 'vitest';
import { findOperation, type Operation } from './index.js';
import { MAX_BODY_DEPTH, validateInputs } from './inputs.js';

const entry = (id: string): Operation => {
  const found = findOperation(id);
  if (!found) throw new Error(`no catalog entry ${id}`);
  return found;
};
const url = (query = '') => new URL(`http://edge/x${query}`);
const json = (value: unknown) => ({ kind: 'json', value }) as const;

describe('text inputs', () => {
  const create = entry('v2.PF4.UserRecordNew');

  it('refuses control characters in body text, naming the field', () => {
    for (const name of ['Ali\u0000ce', 'Ali\nce', 'Ali\u001bce', 'Ali\u007fce', 'Ali\u0085ce']) {
      expect(validateInputs(create, {}, url(), json({ group: 'demo', name }))).toEqual({
        ok: false,
        message: 'body.name: must not contain control characters',
      });
    }
    expect(validateInputs(create, {}, url(), json({ group: 'demo', name: 'Alice Ünal 名前 🙂' })).ok).toBe(true);
  });

  it('refuses lone surrogates, and accepts paired ones', () => {
    for (const name of ['bad\ud800', '\udc00bad', 'x\udc00\ud800y']) {
      expect(validateInputs(create, {}, url(), json({ group: 'demo', name }))).toEqual({
        ok: false,
        message: 'body.name: must be well-formed Unicode text (it holds a lone surrogate)',
      });
    }
    expect(validateInputs(create, {}, url(), json({ group: 'demo', name: '\ud83d\ude42' })).ok).toBe(true);
  });

  it('refuses control characters in path and query text before they reach the server as a symbol', () => {
    const ticks = entry('v2.PF4.TickInfoLastSymbol');
    expect(validateInputs(ticks, { symbol: 'EUR\u0000USD' }, url(), { kind: 'none' })).toEqual({
      ok: false,
      message: 'symbol: must not contain control characters',
    });
    expect(validateInputs(ticks, { symbol: 'EURUSD' }, url(), { kind: 'none' }).ok).toBe(true);
    const holidays = entry('v2.PF4.CfgRequestHoliday');
    const cursor = validateInputs(holidays, {}, url('?cursor=%07abc'), { kind: 'none' });
    expect(cursor).toEqual({ ok: false, message: 'cursor: must not contain control characters' });
  });

  it('lets a field that allows line breaks have them, and nothing else', () => {
    const notify = entry('v2.PF4.NotificationsSend');
    expect(validateInputs(notify, {}, url(), json({ logins: [1], message: 'line one\r\nline two\tend' })).ok).toBe(
      true,
    );
    expect(validateInputs(notify, {}, url(), json({ logins: [1], message: 'bell\u0007' }))).toEqual({
      ok: false,
      message: 'body.message: must not contain control characters other than tab and line breaks',
    });
  });

  it('passes an opaque plugin payload as it is, but never a lone surrogate', () => {
    const plugin = entry('v2.PF4.ExternalCommandJSON');
    expect(validateInputs(plugin, {}, url(), json({ raw: '\u0000\u0001binary', nested: ['\n'] })).ok).toBe(true);
    expect(validateInputs(plugin, {}, url(), json({ raw: '\ud800' })).ok).toBe(false);
  });

  it('checks member names, and refuses bodies nested deeper than the limit', () => {
    const plugin = entry('v2.PF4.ExternalCommandJSON');
    expect(validateInputs(plugin, {}, url(), json({ 'bad\ud800key': 1 }))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/member name .*lone surrogate/),
    });
    let deep: unknown = 'leaf';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(validateInputs(plugin, {}, url(), json(deep))).toEqual({
      ok: false,
      message: `body${'.0'.repeat(MAX_BODY_DEPTH)}: nests deeper than ${MAX_BODY_DEPTH} levels`,
    });
  });
});
