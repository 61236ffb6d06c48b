/**
 * v2 PF4 Users and Authentication: accounts, balance checks, passwords, group operations, sync sessions, and the batch
 * reads of every account (a snapshot, and the reads of a users sync session).
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import {
  booleanQuery,
  contractBody,
  enumText,
  groupName,
  int32List,
  intText,
  login32,
  mergePatchBody,
  pageQuery,
  unixSeconds32,
} from '../../fields.js';
import { PF4UserCreate } from '../../../records/contract.js';
import { V2_PF4 as v2 } from '../paths.js';

const INT32_MAX = 2147483647;

/** A new account needs a group and a name; the leverage, when given, must be positive. */
const userCreateBody = (PF4UserCreate as z.ZodObject).extend({
  login: z
    .number()
    .int()
    .min(0, 'login must be 0 (server assigns) or positive')
    .max(INT32_MAX, `login must be at most ${INT32_MAX}`)
    .optional(),
  group: z.string().min(1, 'group is required').max(16, 'group must be at most 16 characters'),
  name: z.string().min(1, 'name is required').max(128, 'name must be at most 128 characters'),
  leverage: z
    .number()
    .int()
    .min(1, 'leverage must be at least 1')
    .max(10000, 'leverage must be at most 10000')
    .optional(),
});

/**
 * Type 1 body: the contract's update DTO. `group`, `name` and `leverage` keep the account usable (a null member keeps
 * the stored value, as every absent field does); `balance` and `credit` are accepted so a record read back can be
 * sent as is, but the server keeps them: they move only by balance and credit transactions.
 */
const userUpdateBody = (contractBody('PF4UserUpdate') as z.ZodObject).extend({
  group: z
    .string()
    .min(1, 'group must not be empty')
    .max(16, 'group must be at most 16 characters')
    .nullable()
    .optional(),
  name: z
    .string()
    .min(1, 'name must not be empty')
    .max(128, 'name must be at most 128 characters')
    .nullable()
    .optional(),
  leverage: z
    .number()
    .int()
    .min(1, 'leverage must be at least 1')
    .max(10000, 'leverage must be at most 10000')
    .optional(),
});

/** Fields a merge patch may not remove (null), because the account cannot be without them. */
const USER_REQUIRED = ['group', 'name', 'leverage'] as const;

/**
 * Type 2 body: a merge patch of the update DTO. Unknown members are refused by name; `balance` and `credit` cannot be
 * patched (the server moves them only by balance and credit transactions, a patch of them would be silently lost).
 */
const userPatchBody = mergePatchBody('PF4UserUpdate', { immutable: ['balance', 'credit'] }).superRefine(
  (patch, ctx) => {
    for (const field of USER_REQUIRED) {
      if (patch[field] === null) ctx.addIssue({ code: 'custom', path: [field], message: `${field} cannot be removed` });
    }
    const { group, name, leverage } = patch as { group?: unknown; name?: unknown; leverage?: unknown };
    if (typeof group === 'string' && (group.length === 0 || group.length > 16)) {
      ctx.addIssue({ code: 'custom', path: ['group'], message: 'group must be 1 to 16 characters' });
    }
    if (typeof name === 'string' && (name.length === 0 || name.length > 128)) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'name must be 1 to 128 characters' });
    }
    if (typeof leverage === 'number' && (leverage < 1 || leverage > 10000)) {
      ctx.addIssue({ code: 'custom', path: ['leverage'], message: 'leverage must be 1 to 10000' });
    }
  },
);

/** A password sent as the body: a JSON string. */
const passwordBody = z
  .string({ error: () => 'the password must be a JSON string' })
  .min(1, 'the password must not be empty')
  .max(256, 'the password must be at most 256 characters');

/** The commands the platform's group operation knows. */
const GROUP_OP_COMMANDS = ['Delete', 'Enable', 'Disable', 'Leverage', 'SetGroup'] as const;

/** PF4UsersGroupOp: a known command over a non-empty list of logins; SetGroup names the group, Leverage a leverage. */
const usersGroupOpBody = (contractBody('PF4UsersGroupOp') as z.ZodObject)
  .extend({
    command: enumText('command', GROUP_OP_COMMANDS),
    logins: z
      .array(
        z
          .number({ error: () => 'logins must hold integers' })
          .int('logins must hold integers')
          .min(1, 'logins must be positive')
          .max(INT32_MAX, `logins must be at most ${INT32_MAX}`),
        { error: () => 'logins must be an array of logins' },
      )
      .min(1, 'logins must list at least one login')
      .max(100_000, 'logins must list at most 100000 logins'),
    newGroup: z
      .string()
      .min(1, 'newGroup must not be empty')
      .max(16, 'newGroup must be at most 16 characters')
      .nullable()
      .optional(),
    // 0 is "no leverage", as clients that always send the member send it: refused for Leverage, dropped for the others.
    leverage: z
      .number()
      .int('leverage must be an integer')
      .min(0, 'leverage must be at least 1 (0, none, only for commands other than Leverage)')
      .max(10000, 'leverage must be at most 10000')
      .describe('The new leverage, for Leverage (1 to 10000); 0 or absent for the other commands, which ignore it.')
      .optional(),
  })
  .superRefine((op, ctx) => {
    if (op.command === 'SetGroup' && !op.newGroup)
      ctx.addIssue({ code: 'custom', path: ['newGroup'], message: 'newGroup is required for SetGroup' });
    if (op.command === 'Leverage' && op.leverage === undefined)
      ctx.addIssue({ code: 'custom', path: ['leverage'], message: 'leverage is required for Leverage' });
    else if (op.command === 'Leverage' && op.leverage === 0)
      ctx.addIssue({ code: 'custom', path: ['leverage'], message: 'leverage must be at least 1' });
  })
  .transform((op) => {
    if (op.leverage !== 0) return op;
    const { leverage: _none, ...rest } = op;
    return rest;
  });

const loginOnly = (a: { login: number }) => ({ login: a.login });

/** The most rows one batch read answers: the contract's default `limit`. */
export const BATCH_LIMIT_MAX = 100_000;

/** The `limit` of the batch reads (snapshots and sync-session reads): 1 to 100 000 rows, 100 000 when absent. */
export const batchQuery = z.object({ limit: intText('limit', 1, BATCH_LIMIT_MAX).default(BATCH_LIMIT_MAX) });

export const users = {
  UserRecordGet: defineOperation({
    name: 'UserRecordGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/UserRecordGet/{login}`,
    tag: 'Users',
    summary: 'Cached account, secrets stripped; not-found envelope when not cached.',
    params: z.object({ login: login32 }),
    response: 'PF4User',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'users', key: 'login', what: 'login' },
  }),
  UserRecordRequest: defineOperation({
    name: 'UserRecordRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/UserRecordRequest/{login}`,
    tag: 'Users',
    summary: 'Live account, same shape as the cached read.',
    params: z.object({ login: login32 }),
    response: 'PF4User',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'UserRecordRequest', keyedRead: true },
  }),
  UserRecordsRequest: defineOperation({
    name: 'UserRecordsRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/UserRecordsRequest`,
    tag: 'Users',
    summary:
      'Live batch of accounts by login in one manager request; order not guaranteed; unknown logins are left out.',
    query: z.object({ logins: int32List('logins') }),
    response: 'PF4User[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'UserRecordsRequest', args: (a) => ({ logins: a.logins }) },
  }),
  UsersRequest: defineOperation({
    name: 'UsersRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/UsersRequest`,
    tag: 'Users',
    summary: 'Live paged list of accounts sorted by login ascending.',
    query: z.object(pageQuery),
    response: 'PF4User[]',
    timeout: 'read',
    read: 'live',
    paged: { key: 'login' },
    answer: { kind: 'livePage', command: 'UsersRequest', native: true },
  }),
  UserRecordNew: defineOperation({
    name: 'UserRecordNew',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/UserRecordNew`,
    tag: 'Users',
    summary: 'Create an account; login 0 lets the server assign the next free one.',
    body: userCreateBody,
    response: 'PF4User',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'UserRecordNew' },
  }),
  UserRecordUpdate: defineOperation({
    name: 'UserRecordUpdate',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/UserRecordUpdate/{login}`,
    tag: 'Users',
    summary:
      'Type 1 full replace: the account read live, the PF4UserUpdate fields laid over it, written back; secrets, balance, credit and server-derived fields survive.',
    params: z.object({ login: login32 }),
    body: userUpdateBody,
    response: 'PF4User',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      dto: 'PF4UserUpdate',
      read: { command: 'UserRecordRequest', args: loginOnly },
      write: { command: 'UserRecordUpdate', args: (a, record) => ({ login: a.login, record }) },
    },
  }),
  UserRecord: defineOperation({
    name: 'UserRecord',
    generation: 'v2',
    family: 'PF4',
    method: 'PATCH',
    path: `${v2}/UserRecord/{login}`,
    tag: 'Users',
    summary:
      'Type 2 merge patch of the account (read, merge, write); omitted fields keep their values; the updated account is answered.',
    params: z.object({ login: login32 }),
    body: userPatchBody,
    response: 'PF4User',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'patch',
      dto: 'PF4UserUpdate',
      read: { command: 'UserRecordRequest', args: loginOnly },
      write: { command: 'UserRecordUpdate', args: (a, record) => ({ login: a.login, record }) },
    },
  }),
  AdmBalanceCheckLogin: defineOperation({
    name: 'AdmBalanceCheckLogin',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/AdmBalanceCheck/{login}`,
    tag: 'Users',
    summary: 'Difference between the recorded balance and the one the history explains; 0 means intact (admin).',
    params: z.object({ login: login32 }),
    response: 'PF4BalanceDiff',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'AdmBalanceCheck', keyedRead: true },
  }),
  AdmBalanceCheck: defineOperation({
    name: 'AdmBalanceCheck',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/AdmBalanceCheck`,
    tag: 'Users',
    summary:
      'Balance check of the logins: only accounts with a non-zero difference are listed, absent means 0 (admin).',
    query: z.object({ logins: int32List('logins') }),
    response: 'PF4BalanceDiff[]',
    timeout: 'read',
    read: 'live',
    answer: {
      kind: 'live',
      command: 'AdmBalanceCheck',
      args: (a) => ({ logins: a.logins }),
      // Only the asked accounts with a difference, whatever the server lists.
      result: (diffs, a) =>
        (Array.isArray(diffs) ? (diffs as Array<{ login?: unknown; diff?: unknown } | null>) : []).filter(
          (d: { login?: unknown; diff?: unknown } | null) =>
            a.logins.includes(d?.login as number) && typeof d?.diff === 'number' && d.diff !== 0,
        ),
    },
  }),
  AdmBalanceFix: defineOperation({
    name: 'AdmBalanceFix',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/AdmBalanceFix`,
    tag: 'Users',
    summary:
      'Writes the reported balance differences to the accounts (every login must exist); changes balances (admin).',
    query: z.object({ logins: int32List('logins') }),
    response: { type: 'boolean' },
    timeout: 'trade',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'AdmBalanceFix', args: (a) => ({ logins: a.logins }) },
  }),
  UserPasswordCheck: defineOperation({
    name: 'UserPasswordCheck',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/UserPasswordCheck/{login}`,
    tag: 'Authentication',
    summary:
      "True when the platform accepts the password (main or investor); false with the platform's refusal in the error when it answers invalid login or password. Changes nothing, yet needs the write scope; past the broker's bound of failed checks of a login, TooFrequent until its window passes.",
    params: z.object({ login: login32 }),
    body: passwordBody,
    secretBody: true,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    passwordCheck: { login: 'login' },
    answer: { kind: 'custom' },
  }),
  UserPasswordSet: defineOperation({
    name: 'UserPasswordSet',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/UserPasswordSet/{login}`,
    tag: 'Authentication',
    summary:
      'Overwrites the main password, or the investor one with changeInvestor; cleanPubkey also resets the public key.',
    params: z.object({ login: login32 }),
    query: z.object({ changeInvestor: booleanQuery.optional(), cleanPubkey: booleanQuery.optional() }),
    body: passwordBody,
    secretBody: true,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'live',
      command: 'UserPasswordSet',
      args: (a) => ({
        login: a.login,
        password: a.body,
        changeInvestor: a.changeInvestor ?? false,
        cleanPubkey: a.cleanPubkey ?? false,
      }),
    },
  }),
  AdmUsersRequestSafe: defineOperation({
    name: 'AdmUsersRequestSafe',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/AdmUsersRequestSafe/{group}`,
    tag: 'Users',
    summary:
      'Live accounts of one group (case sensitive), secrets stripped; not-found envelope for an unknown group (admin).',
    params: z.object({ group: groupName }),
    response: 'PF4User[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'AdmUsersRequestSafe', keyedRead: true },
  }),
  UsersSyncStart: defineOperation({
    name: 'UsersSyncStart',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/UsersSyncStart`,
    tag: 'Users',
    summary:
      'Opens a users sync session on the manager connection: reserves the accounts changed at or after timestamp (Unix seconds; 0 or absent: all) (admin).',
    query: z.object({ timestamp: unixSeconds32('timestamp').optional() }),
    response: { type: 'boolean' },
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    // Custom: a start also drops what the broker holds back of the session's previous snapshot (UsersSyncRead).
    answer: { kind: 'custom' },
  }),
  UsersSyncRead: defineOperation({
    name: 'UsersSyncRead',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/UsersSyncRead`,
    tag: 'Batch reads',
    summary:
      "Takes the next `limit` accounts (by login) of the users sync session UsersSyncStart opened on this broker's manager connection; the rest stay reserved for the next read, and the read that drains the snapshot drops it. Fewer than `limit` when more would pass the 16 MiB an answer may carry (the rest stay reserved). [] when drained; a not-found envelope when the snapshot is lost (never started on this broker, or its manager connection reconnected since): start again (admin).",
    query: batchQuery,
    response: 'PF4User[]',
    timeout: 'history',
    read: 'live',
    mutating: true,
    answer: { kind: 'custom' },
  }),
  UsersSnapshot: defineOperation({
    name: 'UsersSnapshot',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/UsersSnapshot`,
    tag: 'Batch reads',
    summary:
      'Every account as the server holds it at one instant, in one round trip: the first `limit` by login, secrets stripped; says nothing of accounts left out (exactly `limit` rows: there may be more). A `limit` whose rows pass the 16 MiB an answer may carry is refused, naming how many fit (admin).',
    query: batchQuery,
    response: 'PF4User[]',
    timeout: 'history',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  UsersGroupOp: defineOperation({
    name: 'UsersGroupOp',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/UsersGroupOp`,
    tag: 'Users',
    summary:
      'One command over many accounts (Delete, Enable, Disable, Leverage, SetGroup); all or nothing: an unknown login, or for Delete an open trade, changes nothing.',
    body: usersGroupOpBody,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'UsersGroupOp', args: (a) => ({ record: a.body }) },
  }),
};
