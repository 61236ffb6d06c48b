import { describe, expect, it } from 'vitest';
import { users } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import { ConnectionLostError } from '../../session/managerErrors.js';
import { pf4UsersBindings } from './pf4Users.js';
import {
  call,
  expectOperationError,
  failureOf,
  platformOf,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

const check = (session: ScriptedSession) =>
  call(pf4UsersBindings, users.UserPasswordCheck, platformOf('PF4', { session }), { login: 7, body: 'Secret1' });

describe('UserPasswordCheck', () => {
  it('sends the login and the password and answers true when the platform accepts it', async () => {
    const session = new ScriptedSession().answers('UserPasswordCheck', true);
    expect(await check(session)).toEqual({ data: true });
    expect(session.sent).toEqual([sent('UserPasswordCheck', { login: 7, password: 'Secret1' })]);
  });

  it('answers false for any answer but exactly true', async () => {
    for (const answer of [false, 1, 'true', null, undefined, { ok: true }]) {
      expect(await check(new ScriptedSession().answers('UserPasswordCheck', answer)), JSON.stringify(answer)).toEqual({
        data: false,
      });
    }
  });

  it("answers the platform's invalid-login-or-password refusal as data false beside the error", async () => {
    const refusal = new OperationError('PF4Error', 'invalid account or password', PF4_RESULT.InvalidData);
    const error = await expectOperationError(() => check(new ScriptedSession().fails('UserPasswordCheck', refusal)), {
      code: 'PF4Error',
      message: 'invalid account or password',
      managerCode: PF4_RESULT.InvalidData,
      data: false,
    });
    expect(error).not.toBe(refusal);
  });

  it('lets every other failure through as it is', async () => {
    const failures = [
      new OperationError('PF4Error', 'not enough rights', PF4_RESULT.NotEnoughRights),
      new OperationError('PF4Error', 'no code'),
      new OperationError('NotFound', 'invalid data', PF4_RESULT.InvalidData),
      new OperationError('PF5Error', 'other family', PF4_RESULT.InvalidData),
      new ConnectionLostError('connection lost'),
      new Error('not an operation error'),
    ];
    for (const failure of failures) {
      expect(await failureOf(() => check(new ScriptedSession().fails('UserPasswordCheck', failure)))).toBe(failure);
    }
  });
});
