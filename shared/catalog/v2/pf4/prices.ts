/** v2 PF4 Prices: last ticks, tick history, chart bars and their edits. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { symbolName } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

export const prices = {
  TickInfoLastSymbol: defineOperation({
    name: 'TickInfoLastSymbol', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/TickInfoLast/{symbol}`,
    tag: 'Prices', summary: 'Last bid/ask of a symbol from the cache; not-found envelope when it has none.',
    params: z.object({ symbol: symbolName }), response: 'PF4TickInfo', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'ticks', key: 'symbol', what: 'no quote for symbol' },
  }),
};
