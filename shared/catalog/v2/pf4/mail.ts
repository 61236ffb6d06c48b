/**
 * v2 PF4 Mail: internal mail to accounts, live. The server keeps the newest mails (the simulator 1000); MailsRequest
 * lists them newest first and MailLast answers the body of the first of them.
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { contractBody, pageQuery } from '../../fields.js';
import { INT32_MAX } from '../../../records/primitives.js';
import { V2_PF4 as v2 } from '../paths.js';
import { messageBody } from './news.js';

/** The server's mailbox record holds a sender name of 63 and a subject of 127 characters. */
export const MAIL_SENDER_MAX = 63;
export const MAIL_SUBJECT_MAX = 127;
/** Accounts one mail goes to, as listed (duplicates are collapsed after the count). */
export const MAIL_LOGINS_MAX = 1_000;

const mailSendBody = (contractBody('PF4MailSendRequest') as z.ZodObject).extend({
  senderLogin: z
    .number({ error: () => 'senderLogin must be an integer' })
    .int('senderLogin must be an integer')
    .min(0, 'senderLogin must be at least 0')
    .max(INT32_MAX, `senderLogin must be at most ${INT32_MAX}`)
    .optional(),
  senderName: z
    .string({ error: () => 'senderName must be a string' })
    .max(MAIL_SENDER_MAX, `senderName must be at most ${MAIL_SENDER_MAX} characters`)
    .nullish(),
  subject: z
    .string({ error: () => 'subject is required' })
    .min(1, 'subject must not be empty')
    .max(MAIL_SUBJECT_MAX, `subject must be at most ${MAIL_SUBJECT_MAX} characters`),
  body: messageBody,
  logins: z
    .array(
      z
        .number()
        .int('logins must hold integers')
        .min(1, 'logins must hold positive logins')
        .max(INT32_MAX, 'logins must hold 32-bit logins'),
      { error: () => 'logins must be an array of logins' },
    )
    .min(1, 'logins must list at least one login')
    .max(MAIL_LOGINS_MAX, `logins must list at most ${MAIL_LOGINS_MAX} logins`)
    .transform((logins) => [...new Set(logins)]),
});

export const mail = {
  MailLast: defineOperation({
    name: 'MailLast',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/MailLast`,
    tag: 'Mail',
    summary: 'Body of the newest internal mail the server holds ("" when none), live: the first of MailsRequest.',
    response: { type: 'string' },
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'MailLast' },
  }),
  MailSend: defineOperation({
    name: 'MailSend',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/MailSend`,
    tag: 'Mail',
    summary:
      'Sends an internal mail to each listed account (1 to 1000, all of which must exist; duplicates count once).',
    body: mailSendBody,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    controlCharacters: { 'body.body': 'lineBreaks' },
    answer: { kind: 'live', command: 'MailSend' },
  }),
  MailsRequest: defineOperation({
    name: 'MailsRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/MailsRequest`,
    tag: 'Mail',
    summary:
      'The internal mails the server holds, newest first, live (the server keeps a bounded number), paged: a page ' +
      'holds fewer than `limit` mails when their bodies would pass the bound on one answer (follow `nextCursor`); ' +
      'without `limit`, all of them when they fit in one answer, else a Validation error asking for pages.',
    query: z.object(pageQuery),
    response: 'PF4MailBox[]',
    timeout: 'read',
    read: 'live',
    paged: { key: 'time' },
    answer: { kind: 'custom' },
  }),
};
