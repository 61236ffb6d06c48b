import { describe, expect, it } from 'vitest';
import { reports } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { pf4ReportsBindings } from './pf4Reports.js';
import {
  call,
  expectOperationError,
  failureOf,
  platformOf,
  ScriptedSession,
  sent,
} from '../../../test/support/broker/handlers.js';

const window = { from: '2024-01-01T00:00:00Z', to: '2024-01-31T00:00:00Z', name: 'RTL_dailyreport' };

/** A PF4DailyReport as the contract has it: every field, in order, the missing ones empty. */
const day = (login: number, ctm: string, fields: Record<string, unknown> = {}) => ({
  login,
  ctm,
  group: null,
  bank: null,
  balancePrev: 0,
  balance: 0,
  deposit: 0,
  credit: 0,
  profitClosed: 0,
  profit: 0,
  equity: 0,
  margin: 0,
  marginFree: 0,
  ...fields,
});

function daily(logins: number[], answer: unknown, extraArgs: Record<string, unknown> = {}) {
  const session = new ScriptedSession().answers('DailyReportsRequestEx', answer);
  const run = () =>
    call(pf4ReportsBindings, reports.DailyReportsRequestEx, platformOf('PF4', { session }), {
      ...window,
      logins,
      ...extraArgs,
    });
  return { session, run };
}

describe('DailyReportsRequestEx', () => {
  it('sends the window, logins and template only, and answers the rows keyed by login, shaped, in time order', async () => {
    const { session, run } = daily(
      [7, 8],
      {
        7: [
          { login: 7, ctm: '2024-01-03T00:00:00Z', balance: 30, secret: 'dropped' },
          { login: 7, ctm: '2024-01-01T00:00:00Z', balance: 10, group: 'demo' },
          { login: 7, ctm: '2024-01-02T00:00:00Z', balance: 20 },
        ],
        8: [{ login: 8, ctm: '2024-01-05T00:00:00Z', equity: 5 }],
      },
      { tradePlatform: 'main', confirm: true },
    );
    expect(await run()).toEqual({
      data: {
        7: [
          day(7, '2024-01-01T00:00:00Z', { balance: 10, group: 'demo' }),
          day(7, '2024-01-02T00:00:00Z', { balance: 20 }),
          day(7, '2024-01-03T00:00:00Z', { balance: 30 }),
        ],
        8: [day(8, '2024-01-05T00:00:00Z', { equity: 5 })],
      },
    });
    expect(session.sent).toEqual([sent('DailyReportsRequestEx', { ...window, logins: [7, 8] })]);
    expect(Object.keys(session.sent[0].args!)).toEqual(['from', 'to', 'logins', 'name']);
  });

  it('keeps the server order of rows of the same instant', async () => {
    const { run } = daily([7], {
      7: [
        { ctm: '2024-01-02T00:00:00Z', balance: 2 },
        { ctm: '2024-01-01T00:00:00Z', balance: 1 },
        { ctm: '2024-01-02T00:00:00Z', balance: 3 },
      ],
    });
    expect(await run()).toEqual({
      data: {
        7: [
          day(0, '2024-01-01T00:00:00Z', { balance: 1 }),
          day(0, '2024-01-02T00:00:00Z', { balance: 2 }),
          day(0, '2024-01-02T00:00:00Z', { balance: 3 }),
        ],
      },
    });
  });

  it('leaves out logins not asked for and logins the server did not answer', async () => {
    const { run } = daily([7, 9], {
      7: [],
      8: [{ login: 8, ctm: '2024-01-01T00:00:00Z' }],
      70: [{ ctm: '2024-01-01T00:00:00Z' }],
    });
    const result = await run();
    expect(result).toEqual({ data: { 7: [] } });
    expect(Object.keys(result.data as object)).toEqual(['7']);
  });

  it('answers no rows for a login whose rows are not a list', async () => {
    const { run } = daily([7, 8, 9], { 7: null, 8: { ctm: '2024-01-01T00:00:00Z' }, 9: 'rows' });
    expect(await run()).toEqual({ data: { 7: [], 8: [], 9: [] } });
  });

  it('refuses an answer that is not keyed by login', async () => {
    for (const answer of [null, undefined, [], [{ login: 7, ctm: '2024-01-01T00:00:00Z' }], 'rows', 7, true]) {
      const { run } = daily([7], answer);
      await expectOperationError(run, {
        code: 'Internal',
        message: 'the trading server answered daily reports that are not keyed by login',
      });
    }
  });

  it('fails as the session failed', async () => {
    const refused = new OperationError('PF4Error', 'not enough rights', 7);
    const session = new ScriptedSession().fails('DailyReportsRequestEx', refused);
    const run = () =>
      call(pf4ReportsBindings, reports.DailyReportsRequestEx, platformOf('PF4', { session }), {
        ...window,
        logins: [7],
      });
    expect(await failureOf(run)).toBe(refused);
  });
});
