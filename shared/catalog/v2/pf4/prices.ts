/** v2 PF4 Prices: last ticks, tick history, chart bars and their edits. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { contractBody, dateTimeText, enumText, flagText, symbolName } from '../../fields.js';
import { ChartPeriodMembers, RequestModeMembers, TickRequestFlagsMembers } from '../../../records/contract.js';
import { V2_PF4 as v2 } from '../paths.js';

/** A date-time query value read as UTC: one without an offset is taken as UTC; answered as an ISO string in Z. */

const period = enumText('period', ChartPeriodMembers);

/**
 * Tick request flags: one member or several joined by commas (`Raw, Normal`; `All` is both), or their bits (Raw 1,
 * Normal 2, as the service spec numbers them). 0 names no kind of tick: it reads as the request's default, `All`.
 */
const tickFlags = flagText('flags', TickRequestFlagsMembers, { Raw: 1, Normal: 2 }, { zero: 'All', maxLength: 64 });

/** A time window `start`..`end` whose end, when both are given, is not before its start. */
const window = <T extends z.ZodRawShape>(shape: T) =>
  z.object(shape).superRefine((q: Record<string, unknown>, ctx) => {
    if (typeof q.start === 'string' && typeof q.end === 'string' && Date.parse(q.end) < Date.parse(q.start)) {
      ctx.addIssue({ code: 'custom', path: ['end'], message: 'end must not be before start' });
    }
  });

/** The bars of a chart write: a non-empty list, each with its bar time; prices required where the server needs them. */
const chartWriteBody = (pricesRequired: boolean) =>
  (contractBody('PF4ChartWriteRequest') as z.ZodType<{ rates?: Array<Record<string, unknown>> | null }>).superRefine(
    (body, ctx) => {
      const rates = body.rates;
      if (!rates || rates.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['rates'], message: 'rates must list at least one bar' });
        return;
      }
      if (rates.length > 100_000)
        ctx.addIssue({ code: 'custom', path: ['rates'], message: 'rates must list at most 100000 bars' });
      rates.forEach((bar, i) => {
        if (bar.time === undefined)
          ctx.addIssue({ code: 'custom', path: ['rates', i, 'time'], message: 'time is required' });
        if (!pricesRequired) return;
        for (const field of ['open', 'high', 'low', 'close']) {
          if (bar[field] === undefined)
            ctx.addIssue({ code: 'custom', path: ['rates', i, field], message: `${field} is required` });
        }
      });
    },
  );

const symbolPath = z.object({ symbol: symbolName });
const periodQuery = z.object({ period: period.optional() });

/** A chart write (`ChartAdd`, `ChartUpdate`, `ChartDelete`): the symbol's bars of the period, passed to the server. */
function chartWrite(name: string, summary: string, pricesRequired: boolean) {
  return defineOperation({
    name,
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/${name}/{symbol}`,
    tag: 'Prices',
    summary,
    params: symbolPath,
    query: periodQuery,
    body: chartWriteBody(pricesRequired),
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: name },
  });
}

export const prices = {
  TickInfoLastSymbol: defineOperation({
    name: 'TickInfoLastSymbol',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TickInfoLast/{symbol}`,
    tag: 'Prices',
    summary: 'Last bid/ask of a symbol from the cache; not-found envelope when it has none.',
    params: z.object({ symbol: symbolName }),
    response: 'PF4TickInfo',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'ticks', key: 'symbol', what: 'no quote for symbol' },
  }),
  TickInfoLast: defineOperation({
    name: 'TickInfoLast',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TickInfoLast`,
    tag: 'Prices',
    summary: 'Last tick of every symbol with quotes, from the cache, by symbol name; empty list when none.',
    response: 'PF4TickInfo[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'ticks' },
  }),
  TicksRequest: defineOperation({
    name: 'TicksRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TicksRequest/{symbol}`,
    tag: 'Prices',
    summary:
      'Live tick history of a symbol in [start, end] (UTC; start defaults to the epoch, end to now), oldest first; flags Raw (manager ticks), Normal (feed ticks) or All (default).',
    params: symbolPath,
    query: window({
      start: dateTimeText('start').optional(),
      end: dateTimeText('end').optional(),
      flags: tickFlags.optional(),
    }),
    response: 'PF4TickRecord[]',
    timeout: 'history',
    read: 'live',
    answer: {
      kind: 'live',
      command: 'TicksRequest',
      args: (a) => ({
        symbol: a.symbol,
        start: a.start ?? new Date(0).toISOString(),
        end: a.end,
        flags: a.flags ?? 'All',
      }),
    },
  }),
  ChartRequest: defineOperation({
    name: 'ChartRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/ChartRequest/{symbol}`,
    tag: 'Prices',
    summary:
      'Live chart bars of a symbol and period (default M1) in the window start..end (UTC; default epoch..now); mode default RangeInExcludeOutOfRage (bars wholly inside the window).',
    params: symbolPath,
    query: window({
      period: period.optional(),
      start: dateTimeText('start').optional(),
      end: dateTimeText('end').optional(),
      mode: enumText('mode', RequestModeMembers).default('RangeInExcludeOutOfRage'),
    }),
    response: 'PF4ChartBar[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'ChartRequest' },
  }),
  ChartAdd: chartWrite(
    'ChartAdd',
    "Appends bars to a symbol's chart of the period (default M1), replacing bars of the same time; rates must not be empty.",
    true,
  ),
  ChartUpdate: chartWrite(
    'ChartUpdate',
    'Overwrites the bars matched by time; bars without a match are silently ignored; rates must not be empty.',
    true,
  ),
  ChartDelete: chartWrite(
    'ChartDelete',
    'Deletes the bars of the given times (matched by time only; OHLC values may be 0 or absent); rates must not be empty.',
    false,
  ),
  HistoryCorrect: defineOperation({
    name: 'HistoryCorrect',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/HistoryCorrect/{symbol}`,
    tag: 'Prices',
    summary:
      "Repairs the symbol's history for every period and answers the count of bars corrected (0 is valid); needs Administrator rights.",
    params: symbolPath,
    response: { type: 'integer', format: 'int32' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'HistoryCorrect' },
  }),
};
