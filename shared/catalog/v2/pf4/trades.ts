/** v2 PF4 Trades: open trades from the cache and live, trade transactions, administrator trade commands. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { ticket32, pageQuery } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

export const trades = {
  TradesGet: defineOperation({
    name: 'TradesGet', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/TradesGet`,
    tag: 'Trades', summary: 'Open trades from the cache, paged, sorted by ticket ascending.',
    query: z.object(pageQuery), response: 'PF4Trade[]', timeout: 'read', read: 'cached', paged: { key: 'order' },
    answer: { kind: 'cachedList', table: 'trades' },
  }),
  TradesGetTicket: defineOperation({
    name: 'TradesGetTicket', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/TradesGet/{ticket}`,
    tag: 'Trades', summary: 'One open trade by lookup in the open-trades dictionary (cached).',
    params: z.object({ ticket: ticket32 }), response: 'PF4Trade', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'trades', key: 'ticket', what: 'open trade' },
  }),
};
