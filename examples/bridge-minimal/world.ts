/**
 * The trading server of the minimal bridge: a JSON world file (groups, accounts, the accounts' password hashes) read
 * once at start and kept in memory. Nothing is written back: changes last until the process ends, and the next start
 * begins again from the file. A real bridge replaces this module with its server's manager interface; the driver
 * (driver.ts) keeps its shape, its handlers calling the server instead.
 *
 * Invariants: every account is a whole PF4User record and every group a whole PF4Group record
 * (shared/records/contract.ts, every field present; the file may leave fields out) carrying what the protocol's group
 * record adds (`pf4GroupRecordSchema`, shared/protocol.ts): its 32 security entries (`secGroups`, whole PF4GroupSec
 * records built here from one default, not kept in the file) and no per-symbol margin overrides (`secMargins` empty,
 * `secMarginsTotal` 0); every account with a login
 * from 1 to 2147483647 and a group that exists; a record is never changed in place (a change replaces it), so a list
 * handed out (a snapshot's rows) stays as it was; every change is applied first, then reported to the listeners, in
 * the order the changes were made. Password hashes never leave this module.
 */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PF4Group, PF4User } from '../../shared/records/contract.js';
import { INT32_MAX } from '../../shared/records/primitives.js';
import { shapeRecord } from '../../shared/records/shape.js';

export type UserRecord = Record<string, unknown> & { login: number; group: string; name: string };
export type GroupRecord = Record<string, unknown> & {
  group: string;
  secGroups: Record<string, unknown>[];
  secMargins: Record<string, unknown>[];
};

/** What changed: the whole record after an add or update. */
export type WorldChange = { kind: 'users'; op: 'add' | 'update'; record: UserRecord };

const login = z.number().int().min(1).max(INT32_MAX);
const groupName = z.string().min(1).max(16);
/** `scrypt$<salt>$<hash>`, both base64url: what `hashPassword` writes. */
const PASSWORD_HASH = /^scrypt\$[A-Za-z0-9_-]{16,}\$[A-Za-z0-9_-]{43}$/;

/** The world file: its records in the contract's shape, checked strictly (an unknown field is refused by name). */
const worldFileSchema = z.strictObject({
  groups: z
    .array(
      (PF4Group as z.ZodObject).extend({
        group: groupName,
        secMarginsTotal: z.literal(0, 'must be 0: the minimal bridge keeps no per-symbol margin overrides').optional(),
      }),
    )
    .min(1),
  users: z.array((PF4User as z.ZodObject).extend({ login, group: groupName, name: z.string().min(1).max(128) })),
  /** Each account's password hash by login; an account without one matches no password. */
  passwords: z
    .record(
      z.string().regex(/^[1-9]\d{0,9}$/, 'keys must be logins'),
      z.string().regex(PASSWORD_HASH, 'must be a hash written by hashPassword'),
    )
    .default({}),
});

const wholeUser = shapeRecord('PF4User') as (value: unknown) => UserRecord;
const wholePF4Group = shapeRecord('PF4Group') as (value: unknown) => Record<string, unknown> & { group: string };

/** How many security entries a PF4 group has: one per security (symbol) group slot. */
export const SECURITY_GROUPS = 32;

/**
 * The security entry every group gets for each of its 32 security groups: shown and tradable, 0.01 to 100 lots in
 * steps of 0.01 (lots in hundredths), no spread difference, commission or deviation. A whole PF4GroupSec record.
 */
export const DEFAULT_GROUP_SECURITY: Readonly<Record<string, unknown>> = Object.freeze(
  shapeRecord('PF4GroupSec')({ show: 1, trade: 1, lotMin: 1, lotMax: 10_000, lotStep: 1 }) as Record<string, unknown>,
);

/** A group as the change stream and the reads carry it: the whole PF4Group, its security entries, no overrides. */
function wholeGroup(value: unknown): GroupRecord {
  return {
    ...wholePF4Group(value),
    secMarginsTotal: 0,
    secGroups: Array.from({ length: SECURITY_GROUPS }, () => ({ ...DEFAULT_GROUP_SECURITY })),
    secMargins: [],
  };
}

/** A world file that cannot be used: the message names the file and the field. */
export class WorldFileError extends Error {}

/** The salted scrypt hash the world file keeps of a password (never the password). */
export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64url')}$${scryptSync(password, salt, 32).toString('base64url')}`;
}

function matches(password: string, stored: string): boolean {
  const [, salt, hash] = stored.split('$');
  const expected = Buffer.from(hash, 'base64url');
  return timingSafeEqual(scryptSync(password, Buffer.from(salt, 'base64url'), expected.length), expected);
}

export class World {
  private readonly groupList: GroupRecord[];
  private readonly userMap = new Map<number, UserRecord>();
  private readonly passwords: Map<number, string>;
  private readonly listeners = new Set<(change: WorldChange) => void>();

  constructor(file: unknown, source = 'the world file') {
    const parsed = worldFileSchema.safeParse(file);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const keys = (issue as { keys?: string[] }).keys;
      const where = [...issue.path, ...(keys ?? [])].join('.') || '(the file)';
      throw new WorldFileError(`${source}: ${where}: ${issue.message}`);
    }
    const { groups, passwords } = parsed.data;
    const users = parsed.data.users as UserRecord[];
    this.groupList = groups.map(wholeGroup);
    const names = new Set(this.groupList.map((g) => g.group));
    if (names.size !== groups.length) throw new WorldFileError(`${source}: groups: a group is listed twice`);
    for (const [i, user] of users.entries()) {
      if (this.userMap.has(user.login))
        throw new WorldFileError(`${source}: users.${i}.login: login ${user.login} is listed twice`);
      if (!names.has(user.group))
        throw new WorldFileError(`${source}: users.${i}.group: group ${user.group} is not among groups`);
      this.userMap.set(user.login, wholeUser(user));
    }
    this.passwords = new Map(Object.entries(passwords).map(([key, hash]) => [Number(key), hash]));
    for (const key of this.passwords.keys()) {
      if (!this.userMap.has(key)) throw new WorldFileError(`${source}: passwords.${key}: no account has login ${key}`);
    }
  }

  static load(path: string): World {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new WorldFileError(
        `world file ${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new WorldFileError(`world file ${path}: not JSON (${(error as Error).message})`);
    }
    return new World(json, `world file ${path}`);
  }

  /** Calls `listener` with every change from now on; answers the function that stops it. */
  onChange(listener: (change: WorldChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  users(): UserRecord[] {
    return [...this.userMap.values()];
  }

  user(login: number): UserRecord | undefined {
    return this.userMap.get(login);
  }

  groups(): GroupRecord[] {
    return [...this.groupList];
  }

  group(name: string): GroupRecord | undefined {
    return this.groupList.find((g) => g.group === name);
  }

  /** The next login after the highest in use, at least 100000; undefined when none is left. */
  nextFreeLogin(): number | undefined {
    const next = Math.max(99_999, ...this.userMap.keys()) + 1;
    return next <= INT32_MAX ? next : undefined;
  }

  /** Adds a new account (its login free, its group existing: the caller checked). */
  addUser(record: UserRecord): UserRecord {
    const user = wholeUser(record);
    this.userMap.set(user.login, user);
    this.report({ kind: 'users', op: 'add', record: user });
    return user;
  }

  /** Replaces an existing account's record. */
  replaceUser(record: UserRecord): UserRecord {
    const user = wholeUser(record);
    this.userMap.set(user.login, user);
    this.report({ kind: 'users', op: 'update', record: user });
    return user;
  }

  /** Whether `password` is the account's; false for an unknown login or an account without a password. */
  checkPassword(login: number, password: string): boolean {
    const stored = this.passwords.get(login);
    return stored !== undefined && matches(password, stored);
  }

  private report(change: WorldChange): void {
    for (const listener of this.listeners) listener(change);
  }
}
