/**
 * The minimal bridge's driver for the bridge kit (bridge/kit/driver.ts): a PF4 server over the in-memory world of
 * world.ts. The kit does the protocol (login, capabilities, the snapshot's framing, holding events until its end,
 * Ping, every answer's shape); this says what the server is and what each command does:
 *
 *   events     users and groups: the snapshot holds the world's accounts and groups, and every account change is
 *              pushed as a `users` event (the broker's cached reads, UserRecordGet and GroupsGet, follow them)
 *   commands   ServerTime; UserRecordRequest, UserRecordsRequest, GroupsRequest (live reads); UserRecordNew and
 *              UserRecordUpdate (writes, each raising a `users` event before its answer); UserPasswordCheck
 *   login      the one manager of the bridge's options; its password is compared, never stored elsewhere or logged
 *
 * Answers follow the simulator's (sim/README.md, "Commands", PF4): records in the contract's shape, bad arguments
 * and unknown keys answered InvalidData with a message naming the field or the key (PF4 has no separate not-found
 * code), a wrong password InvalidData "invalid login or password" whether the login exists or not. A command the
 * broker needs and this driver lacks is refused by the broker itself, naming the command, before anything is sent.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { FAMILY_CODES, ResultError, type BridgeDriver, type BridgeLog } from '../../bridge/kit/index.js';
import { PF4UserCreate, PF4UserUpdate } from '../../shared/records/contract.js';
import { INT32_MAX } from '../../shared/records/primitives.js';
import { NOT_FOUND_CODE, WRONG_PASSWORD_CODE } from '../../shared/resultCodes.js';
import type { UserRecord, World } from './world.js';
import { valueText } from '../../shared/valueText.js';

const BAD_ARGS = FAMILY_CODES.PF4.badArgs;

/** The rights the bridge's manager is given at login (PF4ManagerRights names): it manages accounts. */
export const MANAGER_RIGHTS = ['manager'] as const;

/**
 * Fields of an account that UserRecordUpdate leaves as the server has them: the login, the money (moved only by
 * balance and credit transactions) and what the server derives.
 */
const SERVER_FIELDS: ReadonlySet<string> = new Set([
  'login',
  'balance',
  'credit',
  'prevBalance',
  'prevMonthBalance',
  'prevEquity',
  'prevMonthEquity',
  'registrationDate',
  'lastDate',
  'lastIP',
]);

export interface MinimalBridgeOptions {
  /** The server's name: its path, `ws://host:port/<name>`. */
  name: string;
  /** The manager the broker logs in as, and its password (from the environment, never from a file). */
  manager: { login: number; password: string };
  /** The build reported at login. */
  build?: number;
  log?: BridgeLog;
}

type Args = Record<string, unknown>;

function bad(message: string): never {
  throw new ResultError(BAD_ARGS, message);
}

const isLogin = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= INT32_MAX;

function loginArg(args: Args): number {
  if (args.login === undefined || args.login === null) bad('login is required');
  if (!isLogin(args.login)) bad(`login must be an integer from 1 to ${INT32_MAX}`);
  return args.login;
}

/** `args.record` checked with a contract schema; the message names the field as `record.<field>`. */
function recordArg(args: Args, schema: z.ZodType): Args {
  if (typeof args.record !== 'object' || args.record === null || Array.isArray(args.record))
    bad('record is required (an object)');
  const parsed = schema.safeParse(args.record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = (issue as { keys?: string[] }).keys;
    bad(`record.${[...issue.path, ...(keys ?? [])].join('.')}: ${issue.message}`);
  }
  return parsed.data as Args;
}

/** Compared as digests of equal length, in constant time: neither the password nor its length shows in the timing. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export function minimalDriver(world: World, options: MinimalBridgeOptions): BridgeDriver {
  const user = (login: number): UserRecord => {
    const found = world.user(login);
    if (!found) throw new ResultError(NOT_FOUND_CODE.PF4, `login ${login} not found`);
    return found;
  };
  const existingGroup = (field: string, name: unknown) => {
    if (name === undefined || name === null || name === '') bad(`${field} is required`);
    if (typeof name !== 'string' || !world.group(name)) bad(`${field}: group ${valueText(name)} does not exist`);
    return name;
  };

  return {
    name: options.name,
    family: 'PF4',
    build: options.build ?? 1,
    events: ['users', 'groups'],
    log: options.log,

    authenticate: ({ login, password }) =>
      login === options.manager.login && sameSecret(password, options.manager.password)
        ? { ok: true, rights: MANAGER_RIGHTS }
        : { ok: false, code: BAD_ARGS, message: 'invalid manager login or password' },

    // The rows as they stand now: records are replaced, never changed in place, so these lists stay as they are.
    snapshot: () => [
      { kind: 'users', rows: world.users() },
      { kind: 'groups', rows: world.groups() },
    ],

    subscribe: (emit) => world.onChange((change) => emit(change.kind, change.op, change.record)),

    commands: {
      ServerTime: () => new Date().toISOString(),

      UserRecordRequest: (args) => user(loginArg(args)),

      UserRecordsRequest: (args) => {
        if (args.logins === undefined || args.logins === null) return world.users();
        const logins = args.logins;
        if (!Array.isArray(logins) || !logins.every(isLogin))
          bad(`logins must be an array of integers from 1 to ${INT32_MAX}`);
        return logins.map((login) => world.user(login)).filter((u) => u !== undefined);
      },

      GroupsRequest: () => world.groups(),

      UserRecordNew: (args) => {
        const input = recordArg(args, PF4UserCreate);
        if (typeof input.login === 'number' && input.login < 0)
          bad('record.login must be 0 (the server assigns one) or positive');
        const requested = typeof input.login === 'number' && input.login > 0 ? input.login : undefined;
        if (requested !== undefined && world.user(requested)) bad(`record.login: login ${requested} already exists`);
        const login = requested ?? world.nextFreeLogin() ?? bad('no free login left');
        const group = existingGroup('record.group', input.group);
        if (typeof input.name !== 'string' || input.name === '') bad('record.name is required');
        const now = new Date().toISOString();
        const defaultLeverage = world.group(group)!.defaultLeverage;
        return world.addUser({
          enableFlags: 1,
          sendReports: 1,
          userColor: -1,
          ...input,
          login,
          group,
          name: input.name,
          leverage:
            typeof input.leverage === 'number' && input.leverage > 0
              ? input.leverage
              : typeof defaultLeverage === 'number'
                ? defaultLeverage
                : 100,
          registrationDate: now,
          lastDate: now,
          balance: 0,
          credit: 0,
        });
      },

      UserRecordUpdate: (args) => {
        const current = user(loginArg(args));
        const update = recordArg(args, PF4UserUpdate);
        if (update.group !== undefined && update.group !== null) existingGroup('record.group', update.group);
        const merged: UserRecord = { ...current };
        for (const [field, value] of Object.entries(update)) {
          if (value !== undefined && value !== null && !SERVER_FIELDS.has(field)) merged[field] = value;
        }
        return world.replaceUser(merged);
      },

      UserPasswordCheck: (args) => {
        const login = loginArg(args);
        if (typeof args.password !== 'string') bad('password must be a string');
        if (!world.checkPassword(login, args.password))
          throw new ResultError(WRONG_PASSWORD_CODE.PF4, 'invalid login or password');
        return true;
      },
    },
  };
}
