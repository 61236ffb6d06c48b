import { describe, expect, it } from 'vitest';
import { serverAdmin } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { pf4ServerAdminBindings } from './pf4ServerAdmin.js';
import { call, failureOf, platformOf, ScriptedSession, sent } from '../../../test/support/broker/handlers.js';

const restart = (session: ScriptedSession) =>
  call(pf4ServerAdminBindings, serverAdmin.SrvRestart, platformOf('PF4', { session }), { confirm: true });

describe('SrvRestart', () => {
  it('sends SrvRestart without arguments, drops the session after the answer, and answers true for an empty answer', async () => {
    let answer!: (value: unknown) => void;
    const session = new ScriptedSession().answers(
      'SrvRestart',
      new Promise((resolve) => {
        answer = resolve;
      }),
    );
    const pending = restart(session);
    await Promise.resolve();
    expect(session.sent).toEqual([sent('SrvRestart', undefined)]);
    expect(session.reconnects).toEqual([]);
    answer(undefined);
    expect(await pending).toEqual({ data: true });
    expect(session.reconnects).toEqual(['trading server restarting']);
  });

  it('answers what the server answered when it answered something', async () => {
    for (const answer of [false, true, null, 0, 'restarting', { ok: 1 }]) {
      const session = new ScriptedSession().answers('SrvRestart', answer);
      expect(await restart(session), JSON.stringify(answer)).toEqual({ data: answer });
      expect(session.reconnects).toEqual(['trading server restarting']);
    }
  });

  it('fails as the session failed, without dropping it', async () => {
    const refused = new OperationError('PF4Error', 'not enough rights', 7);
    const session = new ScriptedSession().fails('SrvRestart', refused);
    expect(await failureOf(() => restart(session))).toBe(refused);
    expect(session.reconnects).toEqual([]);
  });
});
