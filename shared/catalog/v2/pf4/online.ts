/** v2 PF4 Online: the accounts connected now, cached and live. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { pageQuery } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

export const online = {
  OnlineGet: defineOperation({
    name: 'OnlineGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/OnlineGet`,
    tag: 'Online',
    summary: 'Accounts online now (login and group) from the cache, paged by login ascending.',
    query: z.object(pageQuery),
    response: 'PF4Online[]',
    timeout: 'read',
    read: 'cached',
    paged: { key: 'login' },
    answer: { kind: 'cachedList', table: 'online' },
  }),
  OnlineRequest: defineOperation({
    name: 'OnlineRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/OnlineRequest`,
    tag: 'Online',
    summary: 'Accounts online now (login and group) read live, paged by login ascending; needs the online right.',
    query: z.object(pageQuery),
    response: 'PF4Online[]',
    timeout: 'read',
    read: 'live',
    paged: { key: 'login' },
    answer: { kind: 'livePage', command: 'OnlineRequest', native: true },
  }),
};
