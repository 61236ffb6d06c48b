/** v2 PF4 Reports: performance snapshots, closed-trade and daily reports, the daily-sync snapshot. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { dateTimeText, int32List, unixSeconds32 } from '../../fields.js';
import { openapiComponents } from '../../../records/contract.js';
import { V2_PF4 as v2 } from '../paths.js';

/** The last instant 32-bit Unix seconds reach (2038-01-19T03:14:07Z), in milliseconds. */
const SECONDS32_MAX_MS = 2_147_483_647_000;

/** A date-time the server converts to 32-bit Unix seconds: 1970-01-01 to 2038-01-19 (UTC). */
const seconds32Time = (what: string) =>
  dateTimeText(what).refine((v) => {
    const ms = Date.parse(v);
    return ms >= 0 && ms <= SECONDS32_MAX_MS;
  }, `${what} is out of range: it must be between 1970-01-01T00:00:00Z and 2038-01-19T03:14:07Z`);

/** A report window: `from` and `to` required, `to` not before `from`, a non-empty `logins` list, a template name. */
const reportQuery = (nameMax: number, nameDefault: string) =>
  z
    .object({
      from: dateTimeText('from'),
      to: dateTimeText('to'),
      logins: int32List('logins'),
      name: z
        .string()
        .min(1, 'name must not be empty')
        .max(nameMax, `name must be at most ${nameMax} characters`)
        .default(nameDefault),
    })
    .superRefine((q, ctx) => {
      if (Date.parse(q.to) < Date.parse(q.from))
        ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must not be before from' });
    });

/** Daily-report rows keyed by login (as a string), each account's rows in chronological order. */
const dailyReportsByLogin = {
  type: 'object',
  additionalProperties: { type: 'array', items: openapiComponents.PF4DailyReport },
};

/**
 * Rows whose time key is at or after `from` (all without it), ascending by that key whatever order the server kept
 * them in; rows of the same instant keep the server's order.
 */
export function fromOnwards(rows: unknown, key: string, from?: string): Array<Record<string, unknown>> {
  const start = from === undefined ? -Infinity : Date.parse(from);
  return (
    (Array.isArray(rows) ? (rows as Array<Record<string, unknown>>) : [])
      .map((row) => ({ row, t: Date.parse(String(row?.[key])) }))
      .filter((x) => x.t >= start)
      // Array.prototype.sort is stable: rows of the same instant stay in the server's order.
      .sort((a, b) => a.t - b.t)
      .map((x) => x.row)
  );
}

export const reports = {
  PerformanceRequest: defineOperation({
    name: 'PerformanceRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/PerformanceRequest`,
    tag: 'Reports',
    summary: 'Resource snapshots with ctm at or after `from` (1970 to 2038, UTC), ascending; empty list when none.',
    query: z.object({ from: seconds32Time('from').optional() }),
    response: 'PF4Performance[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'PerformanceRequest', result: (rows, a) => fromOnwards(rows, 'ctm', a.from) },
  }),
  ReportsRequest: defineOperation({
    name: 'ReportsRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/ReportsRequest`,
    tag: 'Reports',
    summary:
      'Closed trades of the accounts in the window, flattened to one list; unknown logins are omitted. Needs the reports right.',
    query: reportQuery(32, 'RTL_report'),
    response: 'PF4Trade[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'ReportsRequest' },
  }),
  DailyReportsRequest: defineOperation({
    name: 'DailyReportsRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/DailyReportsRequest`,
    tag: 'Reports',
    summary: 'Flat daily-report rows, one per account and server-local day in the window; unknown logins are omitted.',
    query: reportQuery(31, 'RTL_dailyreport'),
    response: 'PF4DailyReport[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'DailyReportsRequest' },
  }),
  DailyReportsRequestEx: defineOperation({
    name: 'DailyReportsRequestEx',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/DailyReportsRequestEx`,
    tag: 'Reports',
    summary: "Daily-report rows as an object keyed by login (as a string), each account's rows in chronological order.",
    query: reportQuery(31, 'RTL_dailyreport'),
    response: dailyReportsByLogin,
    timeout: 'history',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  DailySyncStart: defineOperation({
    name: 'DailySyncStart',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/DailySyncStart`,
    tag: 'Reports',
    summary: 'Opens a daily-sync snapshot from `timestamp` (Unix seconds, server-local, 0 means all records).',
    query: z.object({ timestamp: unixSeconds32('timestamp') }),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'DailySyncStart' },
  }),
  DailySyncRead: defineOperation({
    name: 'DailySyncRead',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/DailySyncRead`,
    tag: 'Reports',
    summary:
      'Drains the daily-sync snapshot: every reserved row, then the snapshot is dropped; an empty list is valid.',
    response: 'PF4DailyReport[]',
    timeout: 'history',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'DailySyncRead' },
  }),
};
