/** v2 PF4 Common: the server's common settings and its journal (ServerTime is declared once for both families). */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { dateTimeText, enumText } from '../../fields.js';
import { EnLogTypeMembers } from '../../../records/contract.js';
import { V2_PF4 as v2 } from '../paths.js';

export const commonPf4 = {
  ManagerCommon: defineOperation({
    name: 'ManagerCommon',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/ManagerCommon`,
    tag: 'Common',
    summary: "The server's common settings as the manager sees them (name, owner, build, version, time zone), live.",
    response: 'PF4Common',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'ManagerCommon' },
  }),
  JournalRequest: defineOperation({
    name: 'JournalRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/JournalRequest`,
    tag: 'Common',
    summary:
      'Server journal lines from `from` (default: the oldest kept) to `to` (default: now) of the `mode` type (default Full: every line), only those containing `filter` (case-insensitive) when given.',
    query: z
      .object({
        from: dateTimeText('from').default('1970-01-01T00:00:00Z'),
        to: dateTimeText('to').optional(),
        mode: enumText('mode', EnLogTypeMembers).default('Full'),
        filter: z
          .string()
          .min(1, 'filter must not be empty')
          .max(256, 'filter must be at most 256 characters')
          .optional(),
      })
      .superRefine((q, ctx) => {
        if (q.to !== undefined && Date.parse(q.to) < Date.parse(q.from))
          ctx.addIssue({ code: 'custom', path: ['to'], message: 'to must not be before from' });
      }),
    response: 'PF4ServerLog[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'live', command: 'JournalRequest' },
  }),
};
