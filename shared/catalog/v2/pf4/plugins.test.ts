/**
 * The v2 PF4 plugin command channel (shared/catalog/v2/pf4/plugins.ts), as the edge applies it in validateInputs: any
 * JSON value is a body (null, text and control characters included) and an absent one is the command null; the command
 * the broker sends and the arguments it sends it with; what the entry declares (administrative, a change).
 */
import { describe, expect, it } from 'vitest';
import { plugins } from './plugins.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../testSupport.js';

const call = callerOf('v2.PF4.');
const entry = entryOf('v2.PF4.', 'ExternalCommandJSON');

describe('v2 PF4 plugins: ExternalCommandJSON', () => {
  it('is the only plugin entry, an administrative change on its own maintenance time-out', () => {
    expect(Object.keys(plugins)).toStrictEqual(['ExternalCommandJSON']);
    expect({
      method: entry.method, path: entry.path, tag: entry.tag, timeout: entry.timeout, read: entry.read, mutating: entry.mutating,
      destructive: entry.destructive, scope: entry.scope, controlCharacters: entry.controlCharacters,
    }).toStrictEqual({
      method: 'POST', path: '/api/v2/PF4/{tradePlatform}/ExternalCommandJSON', tag: 'Plugins', timeout: 'maintenance', read: 'live',
      mutating: true, destructive: false, scope: 'webapi.admin', controlCharacters: { body: 'any' },
    });
  });

  it('takes a call without a body as the command null (the operation is described without one)', () => {
    expect(call('ExternalCommandJSON', {}, '', none)).toStrictEqual(accepted({ body: null }));
  });

  it('still refuses a body that is not JSON, or not read to its end', () => {
    expect(call('ExternalCommandJSON', {}, '', { kind: 'malformed' })).toStrictEqual(refused('body: must be well-formed JSON'));
    expect(call('ExternalCommandJSON', {}, '', { kind: 'refused', problem: 'body: must be UTF-8' })).toStrictEqual(refused('body: must be UTF-8'));
  });

  it('accepts any JSON value as the body, null, text with control characters and nested objects included', () => {
    for (const value of [null, 0, false, 'reload\u0001now', [1, 'two'], { command: 'Stats', args: { depth: 2, tags: ['a'] } }]) {
      expect(call('ExternalCommandJSON', {}, '', json(value)), JSON.stringify(value)).toStrictEqual(accepted({ body: value }));
    }
  });

  it('sends the body to the server as the command payload, verbatim', () => {
    const answer = entry.answer as { kind: string; command: string; args: (a: Record<string, unknown>) => unknown };
    expect(answer.kind).toBe('live');
    expect(answer.command).toBe('ExternalCommandJSON');
    const body = { command: 'Stats', args: { depth: 2 } };
    expect(answer.args({ body })).toStrictEqual({ payload: body });
    expect(answer.args({ body: null })).toStrictEqual({ payload: null });
  });
});
