/** v2 PF4 Server Admin (destructive included): restarts, feeders, licences, notifications. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { booleanQuery } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

export const serverAdmin = {
  SrvRestart: defineOperation({
    name: 'SrvRestart', generation: 'v2', family: 'PF4', method: 'POST', path: `${v2}/SrvRestart`,
    tag: 'Server Admin (destructive)', summary: 'Soft restart; the manager connection drops and the next request logs in afresh.',
    query: z.object({ confirm: booleanQuery.optional() }), response: { type: 'boolean' },
    timeout: 'maintenance', read: 'live', mutating: true, destructive: true, answer: { kind: 'custom' },
  }),
};
