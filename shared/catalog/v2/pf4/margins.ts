/**
 * v2 PF4 Margins: margin levels of accounts with open trades, cached and live. The cache keeps one level per login with
 * open trades or pending orders (the server drops it when the last one goes), so a cached miss means no open trades.
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { login32 } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

export const margins = {
  MarginsGet: defineOperation({
    name: 'MarginsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/MarginsGet`,
    tag: 'Margins',
    summary: 'Cached margin levels of every account with open trades or pending orders, by login.',
    response: 'PF4MarginLevel[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'margins' },
  }),
  MarginLevelGet: defineOperation({
    name: 'MarginLevelGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/MarginLevelGet/{login}`,
    tag: 'Margins',
    summary:
      'Cached margin level of the account; a not-found envelope when the account has no open trades or pending orders.',
    params: z.object({ login: login32 }),
    response: 'PF4MarginLevel',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'margins', key: 'login', what: 'open trades of login' },
  }),
  MarginLevelRequest: defineOperation({
    name: 'MarginLevelRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/MarginLevelRequest/{login}`,
    tag: 'Margins',
    summary: 'Margin level of the account computed now by the server (live); an unknown login is a not-found envelope.',
    params: z.object({ login: login32 }),
    response: 'PF4MarginLevel',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'MarginLevelRequest', keyedRead: true },
  }),
};
