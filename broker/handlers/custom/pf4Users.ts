/** PF4 accounts and authentication with logic beyond a passthrough. */
import { users } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import { bind } from './bind.js';

export const pf4UsersBindings = [
  /**
   * True when the platform accepts the password. Its invalid-login-or-password answer is not a failure of the call
   * but its result: false, with the platform's refusal (and code) in the envelope's error beside it. Every other
   * failure (rights, connection) stays a failure without data.
   */
  bind(users.UserPasswordCheck, async (ctx) => {
    try {
      const accepted = await ctx.platform.session.request(
        'UserPasswordCheck',
        { login: ctx.args.login, password: ctx.args.body },
        ctx.deadline,
      );
      return { data: accepted === true };
    } catch (err) {
      if (err instanceof OperationError && err.code === 'PF4Error' && err.managerCode === PF4_RESULT.InvalidData) {
        throw new OperationError('PF4Error', err.message, err.managerCode, false);
      }
      throw err;
    }
  }),
];
