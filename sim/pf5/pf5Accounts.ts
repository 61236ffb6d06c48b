/**
 * PF5 account commands: reads, UserAdd with the spec's six rules (login allocation from this server's range, required
 * fields, existing and foreign logins, record checks, generated password pairs retried at most ten times), updates,
 * merge patches and passwords. Passwords are kept apart from the records and never sent.
 */
import * as contract from '../../shared/records/contract.js';
import { PF5_RESULT } from '../../shared/resultCodes.js';
import type { ArgReader } from '../world/args.js';
import { readPaging } from '../world/args.js';
import type { CommandRegistry } from '../world/commandRegistry.js';
import { matchesMask } from '../world/mask.js';
import { iso } from '../world/people.js';
import { CommandError } from '../world/commandError.js';
import { mergePatch } from '../../shared/records/mergePatch.js';
import { emptyValue, issueMessage, type PF5UserRecord } from './pf5Records.js';
import type { Pf5World } from './pf5World.js';
import { addInt64, INT64_MAX, isInt64 } from '../../shared/int64.js';

const R = PF5_RESULT;
/** Logins are int64: beyond 2^53 − 1 they are exact bigints (`shared/int64.ts`). */
const KEY_MAX = INT64_MAX;
export const PASSWORD_ATTEMPTS = 10;
const GENERATED_LENGTH = 10;
const ALPHABET = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
/** Fields a manager may not write through an update: money moves by deals, times are the server's. */
const SERVER_FIELDS = [
  'login',
  'balance',
  'credit',
  'registration',
  'lastAccess',
  'lastPassChange',
  'lastIP',
  'balancePrevDay',
  'balancePrevMonth',
  'equityPrevDay',
  'equityPrevMonth',
  'commissionDaily',
  'commissionMonthly',
  'commissionAgentDaily',
  'commissionAgentMonthly',
];
/** Fields an account cannot be without: `null` for one is refused, by UserUpdate as by a UserRecord patch. */
const REQUIRED_FIELDS = ['login', 'group', 'leverage'];

export function registerPf5AccountCommands(registry: CommandRegistry, world: Pf5World): void {
  const user = (login: number) =>
    world.users.get(login) ??
    (() => {
      throw new CommandError(R.ErrNotfound, `login ${login} not found`);
    })();

  registry.on('UserRequest', (args) => user(args.id('login', { min: 1 })));
  registry.on('UserGet', (args) => user(args.id('login', { min: 1 })));
  registry.on('UserGetByLogins', (args) =>
    args
      .keyList('logins', KEY_MAX)
      .map((l) => world.users.get(l))
      .filter((u) => u !== undefined),
  );
  registry.on('UsersRequest', (args) => {
    const { after, limit } = readPaging(args, KEY_MAX);
    return world.users.page(after, limit);
  });
  registry.on('UserGetByGroup', (args) => {
    const mask = args.string('mask', { max: 1024 });
    return world.users.values().filter((u) => matchesMask(u.group, mask));
  });
  for (const cmd of ['UserAccountGet', 'UserAccountRequest']) {
    registry.on(cmd, (args) => world.engine.account(args.id('login', { min: 1 })));
  }

  registry.on('UserAdd', (args) => addUser(world, args, args.object('record')));

  registry.on('UserUpdate', (args) => {
    const record = args.object('record');
    if (!isInt64(record.login)) args.fail('record.login is required');
    // null empties a field here as in a UserRecord patch; the required fields are refused by writeUser.
    const emptied = Object.fromEntries(
      Object.entries(record).map(([field, value]) => [
        field,
        value === null && !REQUIRED_FIELDS.includes(field) ? (emptyValue('PF5User', field) ?? null) : value,
      ]),
    );
    return writeUser(world, args, user(record.login as number), emptied, 'record');
  });

  registry.on('UserRecord', (args) => {
    const current = user(args.id('login', { min: 1 }));
    const patch = args.object('patch');
    // An account keeps every field: null empties one ("" or 0, `None` for the rights), never an account's identity.
    // A field without an empty value stays null for the record check (a date-time) or the server-field check.
    const merged = mergePatch(current as unknown as Record<string, unknown>, patch, (field) => {
      if (REQUIRED_FIELDS.includes(field)) args.fail(`patch.${field} is required and cannot be removed`);
      return emptyValue('PF5User', field) ?? null;
    });
    for (const field of SERVER_FIELDS) if (field in patch) args.fail(`patch.${field} cannot be changed`);
    return writeUser(world, args, current, merged, 'patch');
  });

  registry.on('UserPasswordCheck', (args, _ctx, raw) => {
    const login = args.id('login', { min: 1 });
    const type = passwordType(args, raw);
    const known = world.passwordsOf(login);
    if (!world.users.has(login) || known[type] !== args.string('password'))
      throw new CommandError(R.UsrInvalidPassword, 'invalid login or password');
    return true;
  });

  registry.on('UserPasswordChange', (args, _ctx, raw) => {
    const login = args.id('login', { min: 1 });
    const current = user(login);
    const type = passwordType(args, raw);
    const password = args.string('password');
    const min = minLength(world, current.group);
    if (!acceptable(password, min)) throw new CommandError(R.UsrInvalidPassword, `password ${rule(min)}`);
    world.passwords.set(login, { ...world.passwordsOf(login), [type]: password });
    world.replaceUser({ ...current, lastPassChange: iso(Date.now()) });
    return true;
  });
}

function passwordType(args: ArgReader, raw: Record<string, unknown>): 'main' | 'investor' {
  const type = raw.type ?? 'Main';
  if (type !== 'Main' && type !== 'Investor') args.fail('type must be Main or Investor');
  return type === 'Main' ? 'main' : 'investor';
}

function minLength(world: Pf5World, group: string): number {
  return (world.groups.get(group)?.authPasswordMin as number | undefined) ?? 8;
}

/** The platform's password rule: long enough for the group, with lower case, upper case and a digit. */
function acceptable(password: string, min: number): boolean {
  return password.length >= min && /[a-z]/.test(password) && /[A-Z]/.test(password) && /\d/.test(password);
}

/** The password rule as the refusals state it, after the field's name. */
function rule(min: number): string {
  return `must have at least ${min} characters with a lower-case letter, an upper-case letter and a digit`;
}

function generate(world: Pf5World): string {
  let out = '';
  for (let i = 0; i < GENERATED_LENGTH; i++) out += ALPHABET[Math.floor(world.passwordRandom.next() * ALPHABET.length)];
  return out;
}

function addUser(world: Pf5World, args: ArgReader, record: Record<string, unknown>): PF5UserRecord {
  const { password, passwordInvestor, ...fields } = record;
  // Rule 5: an incorrect record is ErrParams.
  const parsed = contract.PF5User.safeParse(fields);
  if (!parsed.success) args.fail(issueMessage('record', parsed.error));
  for (const [field, value] of [
    ['password', password],
    ['passwordInvestor', passwordInvestor],
  ] as const) {
    if (value !== undefined && value !== null && typeof value !== 'string')
      args.fail(`record.${field} must be a string`);
  }
  // Rule 2: group, leverage and a first or last name.
  const group = typeof fields.group === 'string' ? fields.group : '';
  if (!group) args.fail('record.group is required');
  if (!world.groups.has(group)) args.fail(`record.group: group ${group} does not exist`);
  if (typeof fields.leverage !== 'number' || fields.leverage < 1)
    args.fail('record.leverage is required and must be positive');
  const firstName = typeof fields.firstName === 'string' ? fields.firstName.trim() : '';
  const lastName = typeof fields.lastName === 'string' ? fields.lastName.trim() : '';
  if (!firstName && !lastName) args.fail('record.firstName or record.lastName must be filled');
  // Rules 1, 3, 4: allocation from this server's range, the existing login, another server's login.
  const range = world.loginRange;
  let login = (isInt64(fields.login) ? fields.login : 0) as number;
  if (login === 0) {
    const max = world.users.maxKey();
    login = (max === undefined || max < range.min ? range.min : addInt64(max, 1)) as number;
    while (world.users.has(login) && login <= range.max) login = addInt64(login, 1) as number;
    if (login > range.max) throw new CommandError(R.UsrLoginExhausted, 'no login left in the server range');
  } else if (login < range.min || login > range.max) {
    throw new CommandError(R.UsrLoginProhibited, `login ${login} belongs to another trade server`);
  } else if (world.users.has(login)) {
    throw new CommandError(R.UsrLoginExist, `login ${login} already exists`);
  }
  // Rule 6: both passwords generated when either is missing; a rejected pair is replaced, ten tries at most.
  const min = minLength(world, group);
  let pair: { main: string; investor: string } | undefined;
  if (typeof password === 'string' && password && typeof passwordInvestor === 'string' && passwordInvestor) {
    for (const [field, value] of [
      ['password', password],
      ['passwordInvestor', passwordInvestor],
    ] as const) {
      if (!acceptable(value, min)) throw new CommandError(R.UsrInvalidPassword, `record.${field} ${rule(min)}`);
    }
    pair = { main: password, investor: passwordInvestor };
  } else {
    for (let attempt = 0; attempt < PASSWORD_ATTEMPTS && !pair; attempt++) {
      const candidate = { main: generate(world), investor: generate(world) };
      if (acceptable(candidate.main, min) && acceptable(candidate.investor, min)) pair = candidate;
    }
    if (!pair)
      throw new CommandError(R.UsrInvalidPassword, `no acceptable password pair in ${PASSWORD_ATTEMPTS} attempts`);
  }
  const now = iso(Date.now());
  const text = (field: string) => (typeof fields[field] === 'string' ? fields[field] : '');
  // int64 fields (agent, clientID, certSerialNumber) may be exact bigints beyond 2^53 − 1.
  const num = (field: string, fallback: number) =>
    typeof fields[field] === 'number' || typeof fields[field] === 'bigint' ? (fields[field] as number) : fallback;
  const created: PF5UserRecord = {
    login,
    group,
    name: text('name') || [firstName, lastName].filter(Boolean).join(' '),
    firstName,
    lastName,
    middleName: text('middleName'),
    company: text('company'),
    country: text('country'),
    city: text('city'),
    state: text('state'),
    zipCode: text('zipCode'),
    address: text('address'),
    phone: text('phone'),
    eMail: text('eMail'),
    comment: text('comment'),
    id: text('id'),
    status: text('status'),
    leadCampaign: text('leadCampaign'),
    leadSource: text('leadSource'),
    color: num('color', -16777216),
    leverage: fields.leverage,
    language: num('language', 0),
    agent: num('agent', 0),
    clientID: num('clientID', 0),
    rights: typeof fields.rights === 'string' ? fields.rights : 'Enabled, Password',
    certSerialNumber: num('certSerialNumber', 0),
    registration: typeof fields.registration === 'string' ? fields.registration : now,
    lastAccess: now,
    lastPassChange: now,
    lastIP: '',
    balance: 0,
    credit: 0,
    interestRate: num('interestRate', 0),
    commissionDaily: 0,
    commissionMonthly: 0,
    commissionAgentDaily: 0,
    commissionAgentMonthly: 0,
    balancePrevDay: 0,
    balancePrevMonth: 0,
    equityPrevDay: 0,
    equityPrevMonth: 0,
  };
  world.passwords.set(login, pair);
  world.addUser(created);
  return created;
}

function writeUser(
  world: Pf5World,
  args: ArgReader,
  current: PF5UserRecord,
  record: Record<string, unknown>,
  prefix: string,
): PF5UserRecord {
  for (const field of REQUIRED_FIELDS)
    if (record[field] === null) args.fail(`${prefix}.${field} is required and cannot be removed`);
  const parsed = contract.PF5User.safeParse(record);
  if (!parsed.success) args.fail(issueMessage(prefix, parsed.error));
  if (typeof record.group === 'string' && !world.groups.has(record.group))
    args.fail(`${prefix}.group: group ${record.group} does not exist`);
  const next = { ...current } as unknown as Record<string, unknown>;
  for (const [field, value] of Object.entries(record)) {
    if (!SERVER_FIELDS.includes(field) && value !== undefined) next[field] = value ?? '';
  }
  const updated = next as unknown as PF5UserRecord;
  world.replaceUser(updated);
  // A new leverage or group moves the account's margin level: a crossing of its group's levels is announced.
  world.engine.settleMargin(updated.login);
  return updated;
}
