/** v2 PF4 Users and Authentication: accounts, balance checks, passwords. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { login32, pageQuery } from '../../fields.js';
import { PF4UserCreate } from '../../../records/contract.js';
import { V2_PF4 as v2 } from '../paths.js';

/** A new account needs a group and a name; the leverage, when given, must be positive. */
const userCreateBody = (PF4UserCreate as z.ZodObject<any>).extend({
  login: z.number().int().min(0, 'login must be 0 (server assigns) or positive').max(2147483647).optional(),
  group: z.string().min(1, 'group is required').max(16, 'group must be at most 16 characters'),
  name: z.string().min(1, 'name is required').max(128, 'name must be at most 128 characters'),
  leverage: z.number().int().min(1, 'leverage must be at least 1').max(10000).optional(),
});

export const users = {
  UserRecordGet: defineOperation({
    name: 'UserRecordGet', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/UserRecordGet/{login}`,
    tag: 'Users', summary: 'Cached account, secrets stripped; not-found envelope when not cached.',
    params: z.object({ login: login32 }), response: 'PF4User', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' },
  }),
  UserRecordRequest: defineOperation({
    name: 'UserRecordRequest', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/UserRecordRequest/{login}`,
    tag: 'Users', summary: 'Live account, same shape as the cached read.',
    params: z.object({ login: login32 }), response: 'PF4User', timeout: 'read', read: 'live',
    answer: { kind: 'live', command: 'UserRecordRequest', keyedRead: true },
  }),
  UsersRequest: defineOperation({
    name: 'UsersRequest', generation: 'v2', family: 'PF4', method: 'GET', path: `${v2}/UsersRequest`,
    tag: 'Users', summary: 'Live paged list of accounts sorted by login ascending.',
    query: z.object(pageQuery), response: 'PF4User[]', timeout: 'read', read: 'live', paged: { key: 'login' },
    answer: { kind: 'livePage', command: 'UsersRequest', native: true },
  }),
  UserRecordNew: defineOperation({
    name: 'UserRecordNew', generation: 'v2', family: 'PF4', method: 'POST', path: `${v2}/UserRecordNew`,
    tag: 'Users', summary: 'Create an account; login 0 lets the server assign the next free one.',
    body: userCreateBody, response: 'PF4User', timeout: 'change', read: 'live', mutating: true,
    answer: { kind: 'live', command: 'UserRecordNew' },
  }),
};
