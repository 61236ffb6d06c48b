/**
 * The PF4 plugin entries as the broker answers them (the generic interpreter's live kind; none has a handler of its
 * own): the reads shape the server's plugins as PF4Plugin / PF4PluginParam records in its order; the writes hand the
 * validated record to the server under `record` and answer its boolean; the binary channel hands `{data}` on and shapes
 * the answer as PF4ExternalCommandBinaryResponse. PluginParamGet and the writes are keyed reads: the server's
 * InvalidData (a position out of range, an unknown file) is the family's not-found, its message kept.
 */
import { describe, expect, it } from 'vitest';
import { findOperation, type Operation } from '../../shared/catalog/index.js';
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { callerOf, json } from '../../test/support/catalog/calls.js';
import { managerFailure } from '../session/managerErrors.js';
import { interpret } from './interpreter.js';
import type { Handler } from './handler.js';
import { DEADLINE, ScriptedSession, platformOf, sent } from '../../test/support/broker/handlers.js';

const entry = (id: string): Operation =>
  findOperation(id) ??
  (() => {
    throw new Error(`no entry ${id}`);
  })();
const handlerOf = (id: string): Handler =>
  interpret(entry(id)) ??
  (() => {
    throw new Error(`no handler for ${id}`);
  })();
const validated = (name: string, params: Record<string, string>, body?: unknown) => {
  const result = callerOf('v2.PF4.')(name, params, '', body === undefined ? { kind: 'none' } : json(body));
  if (!result.ok) throw new Error(result.message);
  return result.args;
};
const run = (id: string, session: ScriptedSession, args: Record<string, unknown> = {}) =>
  handlerOf(id)({ platform: platformOf('PF4', { session }), args, deadline: DEADLINE });

const ECHO = {
  file: 'echo.dll',
  name: 'Echo',
  version: 100,
  copyright: 'Simulated Markets Ltd',
  enabled: 1,
  configurable: 1,
  managerAccess: 1,
};

describe('PluginsGet, PluginParamGet and CfgRequestPlugin', () => {
  it("shape the server's plugins in its order, fields it leaves out filled", async () => {
    const session = new ScriptedSession().answers('PluginsGet', [ECHO, { file: 'bare.dll' }]);
    expect(await run('v2.PF4.PluginsGet', session)).toEqual({
      data: [
        ECHO,
        { file: 'bare.dll', name: null, version: 0, copyright: null, enabled: 0, configurable: 0, managerAccess: 0 },
      ],
    });
    expect(session.sent).toEqual([sent('PluginsGet', {}, { keyedRead: undefined })]);

    const entryRow = { plugin: ECHO, params: [{ name: 'About', value: 'x' }] };
    const one = new ScriptedSession().answers('PluginParamGet', entryRow);
    expect(await run('v2.PF4.PluginParamGet', one, validated('PluginParamGet', { pos: '1' }))).toEqual({
      data: entryRow,
    });
    expect(one.sent).toEqual([sent('PluginParamGet', { pos: 1 }, { keyedRead: true })]);

    const all = new ScriptedSession().answers('CfgRequestPlugin', [entryRow, { plugin: { file: 'bare.dll' } }]);
    const answer = (await run('v2.PF4.CfgRequestPlugin', all)) as { data: Array<Record<string, unknown>> };
    expect(answer.data[0]).toEqual(entryRow);
    expect(answer.data[1]).toEqual({
      plugin: {
        file: 'bare.dll',
        name: null,
        version: 0,
        copyright: null,
        enabled: 0,
        configurable: 0,
        managerAccess: 0,
      },
      params: null,
    });
  });

  it("read a position out of range as not found, with the server's message", () => {
    const refusal = { code: PF4_RESULT.InvalidData, message: 'plugin position 9 is out of range (2 plugins)' };
    // The context the handler hands the session (above) makes the session read the refusal so.
    const error = managerFailure('PF4', refusal, { keyedRead: true });
    expect({ code: error.code, message: error.message, managerCode: error.managerCode }).toEqual({
      code: 'NotFound',
      message: 'plugin position 9 is out of range (2 plugins)',
      managerCode: PF4_RESULT.InvalidData,
    });
  });
});

describe('PluginUpdate and CfgUpdatePlugin', () => {
  it("send the validated record, parameters with empty values filled, and answer the server's true", async () => {
    for (const name of ['PluginUpdate', 'CfgUpdatePlugin']) {
      const session = new ScriptedSession().answers(name, true);
      const args = validated(
        name,
        {},
        {
          plugin: { file: 'echo.dll', enabled: 0 },
          params: [
            { name: 'A', value: null },
            { name: 'B', value: 'b' },
          ],
        },
      );
      expect(await run(`v2.PF4.${name}`, session, args), name).toEqual({ data: true });
      expect(session.sent, name).toEqual([
        sent(
          name,
          {
            record: {
              plugin: { file: 'echo.dll', enabled: 0 },
              params: [
                { name: 'A', value: '' },
                { name: 'B', value: 'b' },
              ],
            },
          },
          { keyedRead: true },
        ),
      ]);
    }
  });

  it('send no parameter list when the body has none, so the server keeps it', async () => {
    const session = new ScriptedSession().answers('PluginUpdate', true);
    await run(
      'v2.PF4.PluginUpdate',
      session,
      validated('PluginUpdate', {}, { plugin: { file: 'echo.dll', enabled: 1 }, params: null }),
    );
    expect(session.sent[0].args).toEqual({ record: { plugin: { file: 'echo.dll', enabled: 1 } } });
  });

  it('read an unknown plugin file as not found', () => {
    const error = managerFailure(
      'PF4',
      { code: PF4_RESULT.InvalidData, message: 'plugin nope.dll not found' },
      { keyedRead: true },
    );
    expect([error.code, error.message]).toEqual(['NotFound', 'plugin nope.dll not found']);
  });
});

describe('ExternalCommandBinary', () => {
  it("hands the bytes on as the command record and answers the plugin's bytes", async () => {
    const session = new ScriptedSession().answers('ExternalCommandBinary', { data: 'AAEC/w==' });
    expect(
      await run('v2.PF4.ExternalCommandBinary', session, validated('ExternalCommandBinary', {}, { data: 'AQABAv8=' })),
    ).toEqual({ data: { data: 'AAEC/w==' } });
    expect(session.sent).toEqual([
      sent('ExternalCommandBinary', { record: { data: 'AQABAv8=' } }, { keyedRead: undefined }),
    ]);
  });

  it("answers the server's refusal as it came (not a keyed read: PF4Error)", () => {
    const error = managerFailure(
      'PF4',
      { code: PF4_RESULT.InvalidData, message: 'no plugin answered the command' },
      { keyedRead: undefined },
    );
    expect([error.code, error.message]).toEqual(['PF4Error', 'no plugin answered the command']);
  });
});
