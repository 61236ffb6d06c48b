/** PF4 operations, v2 (envelope) and v1 (HTTP status errors). */
import { z } from 'zod';
import { defineOperation } from './operation.js';
import { login32, ticket32, symbolName, pageQuery, booleanQuery } from './fields.js';
import { PF4UserCreate } from '../records/contract.js';

const v2 = '/api/v2/PF4/{tradePlatform}';
const v1 = '/api/PF4/{tradePlatform}';

/** A new account needs a group and a name; the leverage, when given, must be positive. */
const userCreateBody = (PF4UserCreate as z.ZodObject<any>).extend({
  login: z.number().int().min(0, 'login must be 0 (server assigns) or positive').max(2147483647).optional(),
  group: z.string().min(1, 'group is required').max(16, 'group must be at most 16 characters'),
  name: z.string().min(1, 'name is required').max(128, 'name must be at most 128 characters'),
  leverage: z.number().int().min(1, 'leverage must be at least 1').max(10000).optional(),
});

export const pf4Operations = [
  defineOperation({
    name: 'ServerTime', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/ServerTime`,
    tag: 'Common', summary: 'Trading server time.', response: { type: 'string', format: 'date-time' },
    timeout: 'read', read: 'live',
  }),
  defineOperation({
    name: 'UserRecordGet', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/UserRecordGet/{login}`,
    tag: 'Users', summary: 'Cached account, secrets stripped; not-found envelope when not cached.',
    params: z.object({ login: login32 }), response: 'PF4User', timeout: 'read', read: 'cached',
  }),
  defineOperation({
    name: 'UserRecordRequest', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/UserRecordRequest/{login}`,
    tag: 'Users', summary: 'Live account, same shape as the cached read.',
    params: z.object({ login: login32 }), response: 'PF4User', timeout: 'read', read: 'live',
  }),
  defineOperation({
    name: 'UsersRequest', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/UsersRequest`,
    tag: 'Users', summary: 'Live paged list of accounts sorted by login ascending.',
    query: z.object(pageQuery), response: 'PF4User[]', timeout: 'read', read: 'live', paged: { key: 'login' },
  }),
  defineOperation({
    name: 'UserRecordNew', generation: 'v2', family: 'PF4', method: 'POST', path: `${v2}/UserRecordNew`,
    tag: 'Users', summary: 'Create an account; login 0 lets the server assign the next free one.',
    body: userCreateBody, response: 'PF4User', timeout: 'change', read: 'live', mutating: true,
  }),
  defineOperation({
    name: 'TradesGet', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/TradesGet`,
    tag: 'Trades', summary: 'Open trades from the cache, paged, sorted by ticket ascending.',
    query: z.object(pageQuery), response: 'PF4Trade[]', timeout: 'read', read: 'cached', paged: { key: 'order' },
  }),
  defineOperation({
    name: 'TickInfoLast', op: 'PF4.TickInfoLastSymbol', generation: 'v2', family: 'PF4', method: 'GET',
    path: `${v2}/TickInfoLast/{symbol}`, tag: 'Prices', summary: 'Last bid/ask of a symbol from the cache.',
    params: z.object({ symbol: symbolName }), response: 'PF4TickInfo', timeout: 'read', read: 'cached',
  }),
  defineOperation({
    name: 'SrvRestart', generation: 'v2', family: 'PF4', method: 'POST', path: `${v2}/SrvRestart`,
    tag: 'Server Admin (destructive)', summary: 'Soft restart; the manager connection drops and the next request logs in afresh.',
    query: z.object({ confirm: booleanQuery.optional() }), response: { type: 'boolean' },
    timeout: 'maintenance', read: 'live', mutating: true, destructive: true,
  }),

  // v1
  defineOperation({
    name: 'UserRecordGet', generation: 'v1', family: 'PF4', method: 'GET', path: `${v1}/UserRecordGet/{login}`,
    tag: 'PF4 Users', summary: 'One account from the cache.',
    params: z.object({ login: login32 }), response: 'PF4User', timeout: 'read', read: 'cached',
  }),
  defineOperation({
    name: 'TradesGetTicket', op: 'PF4.TradesGetTicket', generation: 'v1', family: 'PF4', method: 'GET',
    path: `${v1}/TradesGet/{ticket}`, tag: 'PF4 Trades', summary: 'One open trade from the cache; 404 when the ticket is not open.',
    params: z.object({ ticket: ticket32 }), response: 'PF4Trade', timeout: 'read', read: 'cached',
  }),
];
