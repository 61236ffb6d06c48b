/** v2 PF4 Backup: backup files, the accounts and trades they hold, and restores from them (destructive). */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { confirmQuery, contractBody, intText } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

/** Records per restore call (service spec, Limits). */
export const RESTORE_MAX = 10_000;
/**
 * Body bound of a restore call: RESTORE_MAX full records of either kind are more JSON than the edge's default of
 * 1 MiB takes; 4 MiB holds either with room for longer texts (their sizes: docs/perf/2026-11-27-figures-behind-defaults.md).
 */
export const RESTORE_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** Backup mode: 0 full backups, 1 archive backups. */
const backupMode = intText('mode', 0, 1);
const backupFile = z.string().min(1, 'file must not be empty').max(256, 'file must be at most 256 characters');
/** `request` empty is as absent (every record of the file), as clients that always send the parameter mean it. */
const backupQuery = z.object({
  request: z
    .string()
    .max(256, 'request must be at most 256 characters')
    .optional()
    .transform((v) => v || undefined),
  limit: intText('limit', 1).default(10_000),
});

/** A restore batch: 1 to 10000 records. */
const restoreBatch = (item: z.ZodType) =>
  z
    .array(item, { error: () => 'must be a JSON array of records' })
    .min(1, 'must hold at least 1 record')
    .max(RESTORE_MAX, `must hold at most ${RESTORE_MAX} records`);

/** An account to restore: the login (the record key) is required and positive. */
const userRestore = (contractBody('PF4UserRestoreInput') as z.ZodObject).extend({
  login: z
    .number({ error: () => 'login is required' })
    .int('login must be an integer')
    .min(1, 'login must be at least 1')
    .max(2147483647, 'login must be at most 2147483647'),
  group: z.string().max(16, 'group must be at most 16 characters').nullable().optional(),
});

/** A trade to restore: each is judged on its own by the server (res 0 or 1); only the record's shape is checked here. */
const tradeRestore = (contractBody('PF4TradeRestoreInput') as z.ZodObject).extend({
  symbol: z.string().max(12, 'symbol must be at most 12 characters').nullable().optional(),
});

export const backup = {
  BackupInfoUsers: defineOperation({
    name: 'BackupInfoUsers',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/BackupInfoUsers/{mode}`,
    tag: 'Backup',
    summary: 'Account backup files of the mode (0 full, 1 archive): name, size and time.',
    params: z.object({ mode: backupMode }),
    response: 'PF4BackupInfo[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'BackupInfoUsers' },
  }),
  BackupInfoOrders: defineOperation({
    name: 'BackupInfoOrders',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/BackupInfoOrders/{mode}`,
    tag: 'Backup',
    summary: 'Trade backup files of the mode (0 full, 1 archive): name, size and time.',
    params: z.object({ mode: backupMode }),
    response: 'PF4BackupInfo[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'BackupInfoOrders' },
  }),
  BackupRequestUsers: defineOperation({
    name: 'BackupRequestUsers',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/BackupRequestUsers/{file}`,
    tag: 'Backup',
    summary:
      'Accounts held in a backup file, optionally only the groups matching the `request` mask (empty or absent: all), at most `limit` (default 10000).',
    params: z.object({ file: backupFile }),
    query: backupQuery,
    response: 'PF4User[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'BackupRequestUsers', keyedRead: true },
  }),
  BackupRequestOrders: defineOperation({
    name: 'BackupRequestOrders',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/BackupRequestOrders/{file}`,
    tag: 'Backup',
    summary:
      'Open trades held in a backup file, at most `limit` (default 10000); `request` is passed to the server as given (empty or absent: all).',
    params: z.object({ file: backupFile }),
    query: backupQuery,
    response: 'PF4Trade[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'BackupRequestOrders', keyedRead: true },
  }),
  BackupRestoreUsers: defineOperation({
    name: 'BackupRestoreUsers',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/BackupRestoreUsers`,
    tag: 'Backup (destructive)',
    summary: 'Creates or overwrites accounts from 1 to 10000 restore records; all are checked before any is written.',
    query: z.object(confirmQuery),
    body: restoreBatch(userRestore),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    destructive: true,
    bodyLimitBytes: RESTORE_BODY_LIMIT_BYTES,
    answer: { kind: 'live', command: 'BackupRestoreUsers', args: (a) => ({ records: a.body }) },
  }),
  BackupRestoreOrders: defineOperation({
    name: 'BackupRestoreOrders',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/BackupRestoreOrders`,
    tag: 'Backup (destructive)',
    summary:
      'Restores 1 to 10000 trades, each on its own: one result per input in input order, res 1 restored or 0 refused.',
    query: z.object(confirmQuery),
    body: restoreBatch(tradeRestore),
    response: 'PF4TradeRestoreResult[]',
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    destructive: true,
    bodyLimitBytes: RESTORE_BODY_LIMIT_BYTES,
    answer: { kind: 'custom' },
  }),
};
