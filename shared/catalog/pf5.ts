/** PF5 operations, v2 (envelope) and v1 (HTTP status errors). */
import { z } from 'zod';
import { defineOperation } from './operation.js';
import { login64 } from './fields.js';

const v2 = '/api/v2/PF5/{tradePlatform}';

export const pf5Operations = [
  defineOperation({
    name: 'ServerTime', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/ServerTime`,
    tag: 'Common', summary: 'Trading server time.', response: { type: 'string', format: 'date-time' },
    timeout: 'read', read: 'live',
  }),
  defineOperation({
    name: 'UserGet', generation: 'v2', family: 'PF5', method: 'GET', path: `${v2}/UserGet/{login}`,
    tag: 'Users', summary: 'Cached user; not-found envelope when unknown.',
    params: z.object({ login: login64 }), response: 'PF5User', timeout: 'read', read: 'cached',
  }),
];
