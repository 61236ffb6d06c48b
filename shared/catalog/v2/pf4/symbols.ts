/** v2 PF4 Symbols: symbol summaries and sessions from the cache, the symbol configuration, the active set, ticks. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { contractBody, mergePatchBody, numberText, pageQuery, symbolName } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

const symbolPath = z.object({ symbol: symbolName });

/** A quick symbol change names the symbol (at most 12 characters); spread and stops level are not negative. */
const symbolChangeBody = (contractBody('PF4SymbolChangeRequest') as z.ZodType<Record<string, unknown>>).superRefine(
  (body, ctx) => {
    const name = body.symbol;
    if (typeof name !== 'string' || name === '')
      ctx.addIssue({ code: 'custom', path: ['symbol'], message: 'symbol is required' });
    else if (name.length > 12)
      ctx.addIssue({ code: 'custom', path: ['symbol'], message: 'symbol must be at most 12 characters' });
    for (const field of ['spread', 'stopsLevel']) {
      const value = body[field];
      if (typeof value === 'number' && value < 0)
        ctx.addIssue({ code: 'custom', path: [field], message: `${field} must be 0 or positive` });
    }
  },
);

/** A manual tick: a positive bid and an ask not below it. */
const tickQuery = z
  .object({ symbol: symbolName, bid: numberText('bid'), ask: numberText('ask') })
  .superRefine((q, ctx) => {
    if (q.bid <= 0) ctx.addIssue({ code: 'custom', path: ['bid'], message: 'bid must be positive' });
    if (q.ask < q.bid) ctx.addIssue({ code: 'custom', path: ['ask'], message: 'ask must be at least bid' });
  });

export const symbols = {
  SymbolInfoGet: defineOperation({
    name: 'SymbolInfoGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/SymbolInfoGet`,
    tag: 'Symbols',
    summary:
      'Cached summary of a symbol (bid, ask, high, low, spread, digits, last-tick time); not-found envelope when the symbol is not loaded.',
    query: z.object({ symbol: symbolName }),
    response: 'PF4SymbolInfo',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'symbolInfo', key: 'symbol', what: 'symbol' },
  }),
  SymbolInfoUpdated: defineOperation({
    name: 'SymbolInfoUpdated',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/SymbolInfoUpdated`,
    tag: 'Symbols',
    summary:
      "Summaries of the symbols updated since the last flush, sorted by symbol name. A call without a cursor is the flush: it takes the set of symbols changed since the previous flush (starting a new one) and answers its first page; calls with that page's cursor continue over the same taken set, which the broker keeps per platform until the next flush (a cursor of an earlier flush is refused). Summaries are the current ones; a symbol no longer loaded is left out.",
    query: z.object(pageQuery),
    response: 'PF4SymbolInfo[]',
    timeout: 'read',
    read: 'cached',
    paged: { key: 'symbol' },
    answer: { kind: 'custom' },
  }),
  SymbolsGroupsGet: defineOperation({
    name: 'SymbolsGroupsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/SymbolsGroupsGet`,
    tag: 'Symbols',
    summary: 'The security groups (name, description) from the cache, in slot order (32 slots).',
    response: 'PF4SymbolGroup[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'custom' },
  }),
  CfgRequestSymbol: defineOperation({
    name: 'CfgRequestSymbol',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/CfgRequestSymbol`,
    tag: 'Symbols',
    summary: 'Live full configuration of every configured symbol (hidden ones too), in list order; heavy.',
    response: 'PF4SymbolConfig[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'CfgRequestSymbol' },
  }),
  CfgRequestSymbolSymbol: defineOperation({
    name: 'CfgRequestSymbolSymbol',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/CfgRequestSymbol/{symbol}`,
    tag: 'Symbols',
    summary: 'Live configuration of one symbol; not-found envelope when unknown.',
    params: symbolPath,
    response: 'PF4SymbolConfig',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'CfgRequestSymbol', keyedRead: true },
  }),
  SymbolSessionsGet: defineOperation({
    name: 'SymbolSessionsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/SymbolSessionsGet/{symbol}`,
    tag: 'Symbols',
    summary: 'The 7 weekday session entries of a symbol (0 = Sunday) from the cache; not-found envelope when unknown.',
    params: symbolPath,
    response: 'PF4SymbolDaySessions[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'symbolSessions', key: 'symbol', what: 'symbol', field: 'days' },
  }),
  CfgUpdateSymbol: defineOperation({
    name: 'CfgUpdateSymbol',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdateSymbol/{symbol}`,
    tag: 'Symbols',
    summary:
      'Type 1 full replace: the configuration is read live, the PF4SymbolConfigUpdate laid over it and written back; sessions, padding and server-derived fields (counters, point, multiply, tick-value pair) are preserved.',
    params: symbolPath,
    body: contractBody('PF4SymbolConfigUpdate'),
    response: 'PF4SymbolConfig',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      read: { command: 'CfgRequestSymbol', args: (a) => ({ symbol: a.symbol }) },
      write: { command: 'CfgUpdateSymbol' },
      dto: 'PF4SymbolConfigUpdate',
    },
  }),
  SymbolConfig: defineOperation({
    name: 'SymbolConfig',
    generation: 'v2',
    family: 'PF4',
    method: 'PATCH',
    path: `${v2}/SymbolConfig/{symbol}`,
    tag: 'Symbols',
    summary:
      'Type 2 merge patch (RFC 7386) of a symbol configuration: read live, merged, written back; fields outside PF4SymbolConfigUpdate cannot be changed.',
    params: symbolPath,
    body: mergePatchBody('PF4SymbolConfigUpdate'),
    response: 'PF4SymbolConfig',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'patch',
      read: { command: 'CfgRequestSymbol', args: (a) => ({ symbol: a.symbol }) },
      write: { command: 'CfgUpdateSymbol' },
      dto: 'PF4SymbolConfigUpdate',
    },
  }),
  SymbolAdd: defineOperation({
    name: 'SymbolAdd',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SymbolAdd/{symbol}`,
    tag: 'Symbols',
    summary: 'Puts a configured symbol in the active set: it receives ticks and accepts orders.',
    params: symbolPath,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'SymbolAdd' },
  }),
  SymbolHide: defineOperation({
    name: 'SymbolHide',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SymbolHide/{symbol}`,
    tag: 'Symbols',
    summary: 'Removes a symbol from the active set: its ticks stop and orders are no longer accepted.',
    params: symbolPath,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'SymbolHide' },
  }),
  SymbolsRefresh: defineOperation({
    name: 'SymbolsRefresh',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SymbolsRefresh`,
    tag: 'Symbols',
    summary: 'Reloads the symbol catalog: the server hands every active symbol over afresh.',
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'SymbolsRefresh' },
  }),
  SymbolChange: defineOperation({
    name: 'SymbolChange',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SymbolChange`,
    tag: 'Symbols',
    summary:
      "Quick change of a symbol's spread, spread balance, stops level, colour, smoothing and execution mode (the fields given).",
    body: symbolChangeBody,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'SymbolChange' },
  }),
  SymbolSendTick: defineOperation({
    name: 'SymbolSendTick',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SymbolSendTick`,
    tag: 'Symbols',
    summary: 'Sends a manual tick (positive bid, ask at least bid) for an active symbol, handled like a feed tick.',
    query: tickQuery,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'SymbolSendTick' },
  }),
};
