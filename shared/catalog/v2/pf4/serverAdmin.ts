/** v2 PF4 Server Admin (destructive included): restarts, feeders, licences, notifications. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { confirmQuery, contractBody, pageQuery } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

/** Push notifications carry at most this many characters. */
const NOTIFICATION_MAX = 255;

const notificationBody = (contractBody('PF4NotificationsSendRequest') as z.ZodObject).extend({
  message: z
    .string({ error: () => 'message is required' })
    .min(1, 'message must not be empty')
    .max(NOTIFICATION_MAX, `message must be at most ${NOTIFICATION_MAX} characters`),
  logins: z
    .array(
      z
        .number()
        .int('logins must hold integers')
        .min(1, 'logins must hold positive logins')
        .max(2147483647, 'logins must hold 32-bit logins'),
      { error: () => 'logins must be an array of logins' },
    )
    .min(1, 'logins must list at least one login')
    .max(100_000, 'logins must list at most 100000 logins'),
});

export const serverAdmin = {
  SrvRestart: defineOperation({
    name: 'SrvRestart',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SrvRestart`,
    tag: 'Server Admin (destructive)',
    summary: 'Soft restart; the manager connection drops and the next request logs in afresh.',
    query: z.object(confirmQuery),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    destructive: true,
    answer: { kind: 'custom' },
  }),
  SrvChartsSync: defineOperation({
    name: 'SrvChartsSync',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SrvChartsSync`,
    tag: 'Server Admin (destructive)',
    summary: 'Forces a chart-history resync of every symbol across plugins; idempotent.',
    query: z.object(confirmQuery),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    destructive: true,
    answer: { kind: 'live', command: 'SrvChartsSync' },
  }),
  SrvLiveUpdateStart: defineOperation({
    name: 'SrvLiveUpdateStart',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SrvLiveUpdateStart`,
    tag: 'Server Admin (destructive)',
    summary: 'Starts or restarts the LiveUpdate broadcast; connected terminals may get an update prompt.',
    query: z.object(confirmQuery),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    destructive: true,
    answer: { kind: 'live', command: 'SrvLiveUpdateStart' },
  }),
  SrvFeedsRestart: defineOperation({
    name: 'SrvFeedsRestart',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/SrvFeedsRestart`,
    tag: 'Server Admin (destructive)',
    summary: 'Cycles the running feeders: a brief gap in the ticks; idempotent.',
    query: z.object(confirmQuery),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    destructive: true,
    answer: { kind: 'live', command: 'SrvFeedsRestart' },
  }),
  SrvFeeders: defineOperation({
    name: 'SrvFeeders',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/SrvFeeders`,
    tag: 'Server Admin',
    summary: 'Running feeders, paged, sorted by name ascending (the cursor is the name); the credential is excluded.',
    query: z.object(pageQuery),
    response: 'PF4Feeder[]',
    timeout: 'read',
    read: 'live',
    paged: { key: 'name' },
    answer: { kind: 'livePage', command: 'SrvFeeders' },
  }),
  LicenseCheck: defineOperation({
    name: 'LicenseCheck',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/LicenseCheck/{licenseName}`,
    tag: 'Server Admin',
    summary: 'Whether the server is licensed for the named module.',
    params: z.object({
      licenseName: z
        .string()
        .min(1, 'licenseName must not be empty')
        .max(64, 'licenseName must be at most 64 characters'),
    }),
    response: { type: 'boolean' },
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'LicenseCheck' },
  }),
  NotificationsSend: defineOperation({
    name: 'NotificationsSend',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/NotificationsSend`,
    tag: 'Server Admin',
    summary: 'Sends a push notification (at most 255 characters) to the listed accounts, all of which must exist.',
    body: notificationBody,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    controlCharacters: { 'body.message': 'lineBreaks' },
    answer: { kind: 'live', command: 'NotificationsSend' },
  }),
  SrvFeederLog: defineOperation({
    name: 'SrvFeederLog',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/SrvFeederLog/{name}`,
    tag: 'Server Admin',
    summary: 'Recent log text of a configured feeder; not-found envelope for an unknown feeder.',
    params: z.object({
      name: z.string().min(1, 'name must not be empty').max(128, 'name must be at most 128 characters'),
    }),
    response: { type: 'string' },
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'SrvFeederLog', keyedRead: true },
  }),
};
