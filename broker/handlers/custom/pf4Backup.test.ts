import { describe, expect, it } from 'vitest';
import { backup } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { pf4BackupBindings } from './pf4Backup.js';
import {
  call,
  expectOperationError,
  failureOf,
  platformOf,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

type Input = { order?: number; symbol?: string };

function restore(inputs: Input[], answer: unknown) {
  const session = new ScriptedSession().answers('BackupRestoreOrders', answer);
  const run = () =>
    call(pf4BackupBindings, backup.BackupRestoreOrders, platformOf('PF4', { session }), {
      confirm: true,
      body: inputs,
    });
  return { session, run };
}

describe('BackupRestoreOrders', () => {
  it('sends the inputs as records and answers one result per input, in input order', async () => {
    const inputs = [{ order: 11, symbol: 'EURUSD' }, { order: 12 }, { order: 13 }];
    const { session, run } = restore(inputs, [
      { order: 11, res: 1 },
      { order: 12, res: 0 },
      { order: 13, res: 1, extra: 'x' },
    ]);
    expect(await run()).toEqual({
      data: [
        { order: 11, res: 1 },
        { order: 12, res: 0 },
        { order: 13, res: 1 },
      ],
    });
    expect(session.sent).toEqual([sent('BackupRestoreOrders', { records: inputs })]);
    expect(session.sent[0].args!.records).toBe(inputs);
  });

  it('answers res 1 only for a result of exactly 1, and 0 for any other result or none', async () => {
    const inputs = [{ order: 1 }, { order: 2 }, { order: 3 }, { order: 4 }, { order: 5 }, { order: 6 }];
    const answer = [
      { order: 1, res: 2 },
      { order: 2, res: true },
      { order: 3, res: '1' },
      { order: 4 },
      null,
      { order: 6, res: -1 },
    ];
    const { run } = restore(inputs, answer);
    expect(await run()).toEqual({ data: inputs.map(({ order }) => ({ order, res: 0 })) });
  });

  it("answers the input's own ticket, taking a missing one as 0", async () => {
    const { run } = restore(
      [{ symbol: 'EURUSD' }, { order: 0 }, { symbol: 'GBPUSD' }],
      [{ order: 0, res: 1 }, { res: 1 }, null],
    );
    expect(await run()).toEqual({
      data: [
        { order: 0, res: 1 },
        { order: 0, res: 1 },
        { order: 0, res: 0 },
      ],
    });
  });

  it('does not check a result order that is not a number', async () => {
    const { run } = restore(
      [{ order: 21 }, { order: 22 }],
      [
        { order: '99', res: 1 },
        { order: null, res: 1 },
      ],
    );
    expect(await run()).toEqual({
      data: [
        { order: 21, res: 1 },
        { order: 22, res: 1 },
      ],
    });
  });

  it('refuses a result at the wrong position, naming the position and both tickets', async () => {
    const { run } = restore(
      [{ order: 11 }, { order: 12 }, { order: 13 }],
      [
        { order: 11, res: 1 },
        { order: 13, res: 1 },
        { order: 12, res: 1 },
      ],
    );
    await expectOperationError(run, {
      code: 'Internal',
      message: 'the trading server answered order 13 at position 1, where order 12 was sent',
    });
    const first = restore([{ order: 11 }], [{ order: 12, res: 0 }]);
    await expectOperationError(first.run, {
      code: 'Internal',
      message: 'the trading server answered order 12 at position 0, where order 11 was sent',
    });
  });

  it('refuses a result with a ticket for an input without one', async () => {
    const { run } = restore([{ symbol: 'EURUSD' }], [{ order: 5, res: 1 }]);
    await expectOperationError(run, {
      code: 'Internal',
      message: 'the trading server answered order 5 at position 0, where order 0 was sent',
    });
  });

  it('refuses a result list longer or shorter than the inputs', async () => {
    const two = [{ order: 1 }, { order: 2 }];
    for (const [answer, got] of [
      [[{ order: 1, res: 1 }], '1 results'],
      [[], '0 results'],
      [
        [
          { order: 1, res: 1 },
          { order: 2, res: 1 },
          { order: 3, res: 1 },
        ],
        '3 results',
      ],
    ] as const) {
      const { run } = restore(two, answer);
      await expectOperationError(run, {
        code: 'Internal',
        message: `the trading server answered ${got} for 2 orders; the outcome of each is unknown`,
      });
    }
  });

  it('refuses an answer that is not a result list', async () => {
    for (const answer of [null, undefined, {}, { 0: { order: 1, res: 1 }, length: 1 }, 'ok', true, 1]) {
      const { run } = restore([{ order: 1 }], answer);
      await expectOperationError(run, {
        code: 'Internal',
        message: 'the trading server answered no result list for 1 orders; the outcome of each is unknown',
      });
    }
  });

  it('fails as the session failed', async () => {
    const refused = new OperationError('PF4Error', 'not enough rights', 7);
    const session = new ScriptedSession().fails('BackupRestoreOrders', refused);
    const run = () =>
      call(pf4BackupBindings, backup.BackupRestoreOrders, platformOf('PF4', { session }), {
        confirm: true,
        body: [{ order: 1 }],
      });
    expect(await failureOf(run)).toBe(refused);
  });
});
