/**
 * The v2 PF4 plugin entries (shared/catalog/v2/pf4/plugins.ts), as the edge applies them in validateInputs: the plugin
 * list reads, the two writes (plugin file required, switches 0 or 1, the parameter list bounded with unique names), the
 * JSON command channel (any JSON value is a body, null, text and control characters included, and an absent one is
 * the command null) and the binary one (base64, 1 to 65536 bytes); the commands the broker sends and what each entry
 * declares (time-out class, read kind, scope, answer).
 */
import { describe, expect, it } from 'vitest';
import { plugins } from './plugins.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';

const call = callerOf('v2.PF4.');
const entry = entryOf('v2.PF4.', 'ExternalCommandJSON');

describe('v2 PF4 plugins: ExternalCommandJSON', () => {
  it('is an administrative change on its own maintenance time-out', () => {
    expect({
      method: entry.method,
      path: entry.path,
      tag: entry.tag,
      timeout: entry.timeout,
      read: entry.read,
      mutating: entry.mutating,
      destructive: entry.destructive,
      scope: entry.scope,
      controlCharacters: entry.controlCharacters,
    }).toStrictEqual({
      method: 'POST',
      path: '/api/v2/PF4/{tradePlatform}/ExternalCommandJSON',
      tag: 'Plugins',
      timeout: 'maintenance',
      read: 'live',
      mutating: true,
      destructive: false,
      scope: 'webapi.admin',
      controlCharacters: { body: 'any' },
    });
  });

  it('takes a call without a body as the command null (the operation is described without one)', () => {
    expect(call('ExternalCommandJSON', {}, '', none)).toStrictEqual(accepted({ body: null }));
  });

  it('still refuses a body that is not JSON, or not read to its end', () => {
    expect(call('ExternalCommandJSON', {}, '', { kind: 'malformed' })).toStrictEqual(
      refused('body: must be well-formed JSON'),
    );
    expect(call('ExternalCommandJSON', {}, '', { kind: 'refused', problem: 'body: must be UTF-8' })).toStrictEqual(
      refused('body: must be UTF-8'),
    );
  });

  it('accepts any JSON value as the body, null, text with control characters and nested objects included', () => {
    for (const value of [
      null,
      0,
      false,
      'reload\u0001now',
      [1, 'two'],
      { command: 'Stats', args: { depth: 2, tags: ['a'] } },
    ]) {
      expect(call('ExternalCommandJSON', {}, '', json(value)), JSON.stringify(value)).toStrictEqual(
        accepted({ body: value }),
      );
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

/** What an entry declares besides its schemas, functions marked as such. */
const declared = (name: string) => {
  const e = entryOf('v2.PF4.', name);
  return JSON.parse(
    JSON.stringify(
      {
        method: e.method,
        path: e.path,
        tag: e.tag,
        response: e.response,
        timeout: e.timeout,
        read: e.read,
        mutating: e.mutating,
        destructive: e.destructive,
        scope: e.scope,
        bodyLimitBytes: e.bodyLimitBytes,
        controlCharacters: e.controlCharacters,
        answer: e.answer,
      },
      (_key, value) => (typeof value === 'function' ? 'function' : value),
    ),
  );
};
const path = (name: string) => `/api/v2/PF4/{tradePlatform}/${name}`;

describe('v2 PF4 plugins: the entries', () => {
  it('declares the plugin reads, the two writes and both command channels', () => {
    expect(Object.keys(plugins).sort()).toStrictEqual([
      'CfgRequestPlugin',
      'CfgUpdatePlugin',
      'ExternalCommandBinary',
      'ExternalCommandJSON',
      'PluginParamGet',
      'PluginUpdate',
      'PluginsGet',
    ]);
  });

  it('reads the plugin list live, a position out of range being not found', () => {
    const read = {
      method: 'GET',
      tag: 'Plugins',
      timeout: 'read',
      read: 'live',
      mutating: false,
      destructive: false,
      scope: 'webapi',
    };
    expect(declared('PluginsGet')).toStrictEqual({
      ...read,
      path: path('PluginsGet'),
      response: 'PF4Plugin[]',
      answer: { kind: 'live', command: 'PluginsGet' },
    });
    expect(declared('PluginParamGet')).toStrictEqual({
      ...read,
      path: path('PluginParamGet/{pos}'),
      response: 'PF4PluginParam',
      answer: { kind: 'live', command: 'PluginParamGet', keyedRead: true },
    });
    expect(declared('CfgRequestPlugin')).toStrictEqual({
      ...read,
      path: path('CfgRequestPlugin'),
      response: 'PF4PluginParam[]',
      answer: { kind: 'live', command: 'CfgRequestPlugin' },
    });
  });

  it('writes like the other configuration writes: a change on the change time-out, an unknown file not found', () => {
    const write = {
      method: 'POST',
      tag: 'Plugins',
      response: { type: 'boolean' },
      timeout: 'change',
      read: 'live',
      mutating: true,
      destructive: false,
      scope: 'webapi.write',
    };
    for (const name of ['PluginUpdate', 'CfgUpdatePlugin']) {
      expect(declared(name), name).toStrictEqual({
        ...write,
        path: path(name),
        answer: { kind: 'live', command: name, keyedRead: true },
      });
    }
  });

  it('declares the binary channel as the JSON one: an administrative change on the maintenance time-out', () => {
    expect(declared('ExternalCommandBinary')).toStrictEqual({
      method: 'POST',
      path: path('ExternalCommandBinary'),
      tag: 'Plugins',
      response: 'PF4ExternalCommandBinaryResponse',
      timeout: 'maintenance',
      read: 'live',
      mutating: true,
      destructive: false,
      scope: 'webapi.admin',
      answer: { kind: 'live', command: 'ExternalCommandBinary' },
    });
  });
});

describe('v2 PF4 plugins: PluginParamGet', () => {
  it('takes a position from 0 to the int32 maximum', () => {
    expect(call('PluginParamGet', { pos: '0' }, '')).toStrictEqual(accepted({ pos: 0 }));
    expect(call('PluginParamGet', { pos: '2147483647' }, '')).toStrictEqual(accepted({ pos: 2147483647 }));
    expect(call('PluginParamGet', { pos: '-1' }, '')).toStrictEqual(refused('pos: pos must be at least 0'));
    expect(call('PluginParamGet', { pos: '2147483648' }, '')).toStrictEqual(
      refused('pos: pos must be at most 2147483647'),
    );
    expect(call('PluginParamGet', { pos: 'first' }, '')).toStrictEqual(refused('pos: pos must be an integer'));
  });
});

describe('v2 PF4 plugins: PluginUpdate and CfgUpdatePlugin', () => {
  const write = (name: string, body: unknown) => call(name, {}, '', body === undefined ? none : json(body));
  const both = (body: unknown) => {
    const answers = ['PluginUpdate', 'CfgUpdatePlugin'].map((name) => write(name, body));
    expect(answers[1]).toStrictEqual(answers[0]);
    return answers[0];
  };
  const named = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `P${i}`, value: String(i) }));

  it('takes the plugin header with its file, and the parameter list when given, a null value as empty', () => {
    const plugin = {
      file: 'echo.dll',
      name: 'Echo',
      version: 100,
      copyright: 'c',
      enabled: 1,
      configurable: 1,
      managerAccess: 0,
    };
    expect(
      both({ plugin, params: [{ name: 'A', value: null }, { name: 'B' }, { name: 'C', value: 'x' }] }),
    ).toStrictEqual(
      accepted({
        body: {
          plugin,
          params: [
            { name: 'A', value: '' },
            { name: 'B', value: '' },
            { name: 'C', value: 'x' },
          ],
        },
      }),
    );
    expect(both({ plugin: { file: 'echo.dll' } })).toStrictEqual(accepted({ body: { plugin: { file: 'echo.dll' } } }));
    expect(both({ plugin: { file: 'echo.dll' }, params: null })).toStrictEqual(
      accepted({ body: { plugin: { file: 'echo.dll' } } }),
    );
    expect(both({ plugin: { file: 'echo.dll' }, params: [] })).toStrictEqual(
      accepted({ body: { plugin: { file: 'echo.dll' }, params: [] } }),
    );
  });

  it('refuses a body without a plugin or its file, naming the field', () => {
    expect(both(undefined)).toStrictEqual(refused('body: must be a JSON object {plugin, params?}'));
    expect(both([])).toStrictEqual(refused('body: must be a JSON object {plugin, params?}'));
    expect(both({})).toStrictEqual(refused('body.plugin: plugin is required: {file, enabled?, managerAccess?}'));
    expect(both({ plugin: null, params: [] })).toStrictEqual(
      refused('body.plugin: plugin is required: {file, enabled?, managerAccess?}'),
    );
    expect(both({ plugin: {} })).toStrictEqual(
      refused('body.plugin.file: file is required: the plugin file to update'),
    );
    expect(both({ plugin: { file: null } })).toStrictEqual(
      refused('body.plugin.file: file is required: the plugin file to update'),
    );
    expect(both({ plugin: { file: '' } })).toStrictEqual(refused('body.plugin.file: file must not be empty'));
  });

  it('bounds the file name at 255 characters', () => {
    expect(both({ plugin: { file: 'f'.repeat(255) } })).toStrictEqual(
      accepted({ body: { plugin: { file: 'f'.repeat(255) } } }),
    );
    expect(both({ plugin: { file: 'f'.repeat(256) } })).toStrictEqual(
      refused('body.plugin.file: file must be at most 255 characters'),
    );
  });

  it('takes the switches as 0 or 1 only', () => {
    for (const field of ['enabled', 'managerAccess']) {
      for (const value of [0, 1]) {
        expect(both({ plugin: { file: 'a', [field]: value } })).toStrictEqual(
          accepted({ body: { plugin: { file: 'a', [field]: value } } }),
        );
      }
      for (const value of [-1, 2, 0.5, '1', true, null]) {
        expect(both({ plugin: { file: 'a', [field]: value } }), `${field} ${JSON.stringify(value)}`).toStrictEqual(
          refused(`body.plugin.${field}: ${field} must be 0 or 1`),
        );
      }
    }
  });

  it('bounds the parameter list at 64 entries', () => {
    expect(both({ plugin: { file: 'a' }, params: named(64) })).toStrictEqual(
      accepted({ body: { plugin: { file: 'a' }, params: named(64) } }),
    );
    expect(both({ plugin: { file: 'a' }, params: named(65) })).toStrictEqual(
      refused('body.params: params must list at most 64 parameters'),
    );
  });

  it('bounds a name at 1 to 32 characters and a value at 128', () => {
    const one = (param: Record<string, unknown>) => both({ plugin: { file: 'a' }, params: [param] });
    expect(one({ name: 'N'.repeat(32), value: 'v'.repeat(128) })).toStrictEqual(
      accepted({ body: { plugin: { file: 'a' }, params: [{ name: 'N'.repeat(32), value: 'v'.repeat(128) }] } }),
    );
    expect(one({ name: 'N'.repeat(33), value: '' })).toStrictEqual(
      refused('body.params.0.name: name must be at most 32 characters'),
    );
    expect(one({ name: 'A', value: 'v'.repeat(129) })).toStrictEqual(
      refused('body.params.0.value: value must be at most 128 characters'),
    );
    expect(one({ name: '', value: '' })).toStrictEqual(refused('body.params.0.name: name must not be empty'));
    expect(one({ value: 'x' })).toStrictEqual(refused('body.params.0.name: name is required'));
    expect(one({ name: null })).toStrictEqual(refused('body.params.0.name: name is required'));
  });

  it('refuses a name given twice, compared exactly, naming both places', () => {
    const params = [
      { name: 'Limit', value: '1' },
      { name: 'limit', value: '2' },
      { name: 'Limit', value: '3' },
    ];
    expect(both({ plugin: { file: 'a' }, params })).toStrictEqual(
      refused('body.params.2.name: name Limit is already the name of params.0 (names are unique)'),
    );
  });

  it('refuses unknown members and wrong types, naming them', () => {
    expect(both({ plugin: { file: 'a', path: '/x' } })).toStrictEqual(refused('body.plugin: Unrecognized key: "path"'));
    expect(both({ plugin: { file: 'a' }, order: 1 })).toStrictEqual(refused('body: Unrecognized key: "order"'));
    expect(both({ plugin: { file: 'a' }, params: [{ name: 'A', value: 1 }] })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^body\.params\.0\.value: /),
    });
    expect(both({ plugin: { file: 'a' }, params: 'A=1' })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^body\.params: /),
    });
  });
});

describe('v2 PF4 plugins: ExternalCommandBinary', () => {
  const send = (body: unknown) => call('ExternalCommandBinary', {}, '', body === undefined ? none : json(body));
  const b64 = (length: number) => Buffer.alloc(length, 7).toString('base64');

  it('takes data as padded base64 of 1 to 65536 bytes, passed on as the command record', () => {
    expect(send({ data: 'AQ==' })).toStrictEqual(accepted({ body: { data: 'AQ==' } }));
    expect(send({ data: 'AQI=' })).toStrictEqual(accepted({ body: { data: 'AQI=' } }));
    expect(send({ data: 'AQID' })).toStrictEqual(accepted({ body: { data: 'AQID' } }));
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('base64');
    expect(send({ data: all })).toStrictEqual(accepted({ body: { data: all } }));
    expect(send({ data: b64(65_536) })).toStrictEqual(accepted({ body: { data: b64(65_536) } }));
    const answer = entryOf('v2.PF4.', 'ExternalCommandBinary').answer as { args?: unknown };
    expect(answer.args).toBeUndefined();
  });

  it('refuses more than 65536 bytes, however the text is cut', () => {
    const tooLarge = refused('body.data: data must decode to at most 65536 bytes');
    expect(send({ data: b64(65_537) })).toStrictEqual(tooLarge);
    // 87384 characters without padding are 65538 bytes; any longer text is refused before its alphabet is read.
    expect(send({ data: 'A'.repeat(87_384) })).toStrictEqual(tooLarge);
    expect(send({ data: '*'.repeat(87_385) })).toStrictEqual(tooLarge);
  });

  it('refuses no data, empty data and text that is not padded base64, naming data and the rule', () => {
    const notBase64 = refused(
      'body.data: data must be base64: A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters',
    );
    expect(send({})).toStrictEqual(refused('body.data: data is required: the command bytes, base64-encoded'));
    expect(send({ data: null })).toStrictEqual(
      refused('body.data: data is required: the command bytes, base64-encoded'),
    );
    expect(send({ data: 5 })).toStrictEqual(refused('body.data: data must be a base64 string'));
    expect(send({ data: '' })).toStrictEqual(
      refused('body.data: data must not be empty (at least one byte: the command)'),
    );
    for (const data of ['AQ', 'AQI', 'AQ=', 'A===', '====', 'AQ==AQ==', 'AQ-_', 'AQ I', 'AQ\nI=', 'AQ%3D']) {
      expect(send({ data }), JSON.stringify(data)).toStrictEqual(notBase64);
    }
  });

  it('refuses a body that is not the request object', () => {
    expect(send(undefined)).toStrictEqual(refused('body: must be a JSON object {data: base64}'));
    expect(send('AQ==')).toStrictEqual(refused('body: must be a JSON object {data: base64}'));
    expect(send({ data: 'AQ==', extra: 1 })).toStrictEqual(refused('body: Unrecognized key: "extra"'));
  });
});
