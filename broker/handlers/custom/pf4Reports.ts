/** PF4 reports with logic beyond a passthrough: the orders the spec promises, and the daily rows keyed by login. */
import { reports } from '../../../shared/catalog/v2/pf4/index.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { OperationError } from '../../../shared/errors.js';
import { bind } from './bind.js';

type Row = Record<string, unknown>;

const performanceRows = shapeRecord('PF4Performance[]');
const dailyRow = shapeRecord('PF4DailyReport');

/** Sorts rows by their `ctm` time key ascending; rows of the same instant keep the server's order. */
function byCtm(rows: Row[]): Row[] {
  return rows.map((row, i) => ({ row, i, t: Date.parse(String(row.ctm)) }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((x) => x.row);
}

export const pf4ReportsBindings = [
  /** Snapshots at or after `from`, ascending by `ctm` whatever order the server kept them in. */
  bind(reports.PerformanceRequest, async (ctx) => {
    const answer = await ctx.platform.session.request('PerformanceRequest', ctx.args.from === undefined ? {} : { from: ctx.args.from }, ctx.deadline);
    return { data: byCtm(performanceRows(answer) as Row[]) };
  }),

  /** One member per known login asked, named by the login as a string; each account's rows in chronological order. */
  bind(reports.DailyReportsRequestEx, async (ctx) => {
    const { from, to, logins, name } = ctx.args;
    const answer = await ctx.platform.session.request('DailyReportsRequestEx', { from, to, logins, name }, ctx.deadline);
    if (!answer || typeof answer !== 'object' || Array.isArray(answer)) {
      throw new OperationError('Internal', 'the trading server answered daily reports that are not keyed by login');
    }
    const asked = new Set(logins.map(String));
    const out: Record<string, Row[]> = {};
    for (const [login, rows] of Object.entries(answer as Record<string, unknown>)) {
      if (!asked.has(login)) continue;
      out[login] = byCtm((Array.isArray(rows) ? rows : []).map((r) => dailyRow(r) as Row));
    }
    return { data: out };
  }),
];
