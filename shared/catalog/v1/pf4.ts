/** v1 PF4 operations: bare records on success, HTTP status errors. They share the v2 sibling's handler (`op`). */
import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { login32, ticket32 } from '../fields.js';

const v1 = '/api/PF4/{tradePlatform}';

export const pf4V1 = {
  UserRecordGet: defineOperation({
    name: 'UserRecordGet', generation: 'v1', family: 'PF4', method: 'GET', path: `${v1}/UserRecordGet/{login}`,
    tag: 'PF4 Users', summary: 'One account from the cache.',
    params: z.object({ login: login32 }), response: 'PF4User', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' },
  }),
  TradesGetTicket: defineOperation({
    name: 'TradesGetTicket', generation: 'v1', family: 'PF4', method: 'GET',
    path: `${v1}/TradesGet/{ticket}`, tag: 'PF4 Trades', summary: 'One open trade from the cache; 404 when the ticket is not open.',
    params: z.object({ ticket: ticket32 }), response: 'PF4Trade', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'trades', key: 'ticket', what: 'open trade' },
  }),
};
