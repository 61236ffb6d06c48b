/** v2 PF5 operations (ServerTime is declared once for both families in `../common.ts`). */
import { z } from 'zod';
import { defineOperation } from '../operation.js';
import { login64 } from '../fields.js';
import { V2_PF5 as v2 } from './paths.js';

export const pf5V2 = {
  UserGet: defineOperation({
    name: 'UserGet', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/UserGet/{login}`,
    tag: 'Users', summary: 'Cached user; not-found envelope when unknown.',
    params: z.object({ login: login64 }), response: 'PF5User', timeout: 'read', read: 'cached',
    answer: { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' },
  }),
};
