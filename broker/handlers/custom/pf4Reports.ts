/** PF4 reports with logic beyond a passthrough: the daily rows keyed by login, each account's in time order. */
import { reports } from '../../../shared/catalog/v2/pf4/index.js';
import { fromOnwards } from '../../../shared/catalog/v2/pf4/reports.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { OperationError } from '../../../shared/errors.js';
import { bind } from './bind.js';

type Row = Record<string, unknown>;

const dailyRow = shapeRecord('PF4DailyReport');

export const pf4ReportsBindings = [
  /** One member per known login asked, named by the login as a string; each account's rows in chronological order. */
  bind(reports.DailyReportsRequestEx, async (ctx) => {
    const { from, to, logins, name } = ctx.args;
    const answer = await ctx.platform.session.request(
      'DailyReportsRequestEx',
      { from, to, logins, name },
      ctx.deadline,
    );
    if (!answer || typeof answer !== 'object' || Array.isArray(answer)) {
      throw new OperationError('Internal', 'the trading server answered daily reports that are not keyed by login');
    }
    const asked = new Set(logins.map(String));
    const out: Record<string, Row[]> = {};
    for (const [login, rows] of Object.entries(answer as Record<string, unknown>)) {
      if (!asked.has(login)) continue;
      out[login] = fromOnwards((Array.isArray(rows) ? rows : []).map(dailyRow), 'ctm');
    }
    return { data: out };
  }),
];
