/** PF4 backup restores with logic beyond a passthrough: results bound to their inputs by position. */
import { backup } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { bind } from './bind.js';

export const pf4BackupBindings = [
  /**
   * One result per input, in input order: the i-th result is the i-th input's ticket with `res` 1 when the server
   * restored it and 0 otherwise. A server answer that does not pair up with the inputs is an error, never a guess.
   */
  bind(backup.BackupRestoreOrders, async (ctx) => {
    const inputs = ctx.args.body as Array<{ order?: number }>;
    const answer = await ctx.platform.session.request('BackupRestoreOrders', { records: inputs }, ctx.deadline);
    if (!Array.isArray(answer) || answer.length !== inputs.length) {
      const got = Array.isArray(answer) ? `${answer.length} results` : 'no result list';
      throw new OperationError(
        'Internal',
        `the trading server answered ${got} for ${inputs.length} orders; the outcome of each is unknown`,
      );
    }
    const data = inputs.map((input, i) => {
      const result = answer[i] as { order?: unknown; res?: unknown } | null;
      const order = input.order ?? 0;
      if (result && typeof result.order === 'number' && result.order !== order) {
        throw new OperationError(
          'Internal',
          `the trading server answered order ${result.order} at position ${i}, where order ${order} was sent`,
        );
      }
      return { order, res: result?.res === 1 ? 1 : 0 };
    });
    return { data };
  }),
];
