/** v2 PF4 History: an account's closed trades and balance entries. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { dateTimeText, login32 } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

/** A date-time query value read as UTC (one without an offset is taken as UTC), passed on as an ISO string in Z. */

export const history = {
  TradesUserHistory: defineOperation({
    name: 'TradesUserHistory',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/TradesUserHistory/{login}`,
    tag: 'History',
    summary:
      "The account's closed and deleted trades and balance / credit entries closed in fromTime..toTime (UTC; default the epoch..now), oldest first, read live; an unknown login is a not-found envelope.",
    params: z.object({ login: login32 }),
    query: z
      .object({ fromTime: dateTimeText('fromTime').optional(), toTime: dateTimeText('toTime').optional() })
      .superRefine((q, ctx) => {
        if (q.fromTime !== undefined && q.toTime !== undefined && Date.parse(q.toTime) < Date.parse(q.fromTime)) {
          ctx.addIssue({ code: 'custom', path: ['toTime'], message: 'toTime must not be before fromTime' });
        }
      }),
    response: 'PF4Trade[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'TradesUserHistory', keyedRead: true },
  }),
};
