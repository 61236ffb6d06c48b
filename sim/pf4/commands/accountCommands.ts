/**
 * PF4 account and group commands: reads, creation, full-replace updates that keep secrets and server-managed fields,
 * passwords, group operations, and the group's security entries and margin overrides.
 */
import { PF4GroupUpdate, PF4UserCreate, PF4UserUpdate, PF4UsersGroupOp } from '../../../shared/records/contract.js';
import type { CommandRegistry } from '../../world/commandRegistry.js';
import { readPaging } from '../../world/args.js';
import { iso } from '../../world/people.js';
import { CommandError } from '../../world/commandError.js';
import type { PF4GroupRecord, PF4UserRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { NO_ACCOUNT_SECRETS } from '../serverOnlyFields.js';
import { INT32_MAX, bad, notFound, optionalBool, parseRecord } from './common.js';

/**
 * Fields of an account UserRecordUpdate leaves as the server has them: the login, the money (balance and credit move
 * only by balance and credit transactions, which write the history AdmBalanceCheck explains them by) and what the
 * server derives (the previous day's and month's figures, registration, last access and its address).
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

export function registerAccountCommands(registry: CommandRegistry, world: Pf4World): void {
  const user = (login: number) => world.users.get(login) ?? notFound(`login ${login}`);
  const group = (name: string) => world.groups.find(name) ?? notFound(`group ${name}`);

  registry.on('UserRecordsRequest', (args) => {
    if (!args.has('logins')) return world.users.values();
    return args
      .intArray('logins', { min: 1, max: INT32_MAX, maxItems: 100_000 })
      .map((login) => world.users.get(login))
      .filter((u) => u !== undefined);
  });

  registry.on('UserRecordRequest', (args) => user(args.int('login', { min: 1, max: INT32_MAX })));

  registry.on('UsersRequest', (args) => {
    const { after, limit } = readPaging(args, INT32_MAX);
    return world.users.page(after, limit);
  });

  registry.on('AdmUsersRequestSafe', (args) => {
    const name = args.string('group', { max: 16 });
    group(name);
    return world.users.values().filter((u) => u.group === name);
  });

  registry.on('UserRecordNew', (args) => createUser(world, args.object('record')));

  registry.on('UserRecordUpdate', (args) => {
    const login = args.int('login', { min: 1, max: INT32_MAX });
    const current = user(login);
    const update = parseRecord<Partial<PF4UserRecord>>(PF4UserUpdate, args.object('record'), 'record');
    if (update.group !== undefined && update.group !== null) group(update.group);
    const merged: PF4UserRecord = { ...current };
    for (const [field, value] of Object.entries(update)) {
      if (value !== undefined && value !== null && !SERVER_FIELDS.has(field))
        (merged as unknown as Record<string, unknown>)[field] = value;
    }
    world.editUser(merged);
    world.journal(`'${login}': account updated`);
    return merged;
  });

  registry.on('UserPasswordCheck', (args) => {
    const login = args.int('login', { min: 1, max: INT32_MAX });
    return checkPassword(world, login, args.string('password'));
  });

  registry.on('UserPasswordSet', (args, _ctx, raw) => {
    const login = args.int('login', { min: 1, max: INT32_MAX });
    user(login);
    const password = args.string('password');
    if (password.length < 5) args.fail('password must have at least 5 characters');
    const investor = optionalBool(args, raw, 'changeInvestor') === true;
    optionalBool(args, raw, 'cleanPubkey');
    world.setPassword(login, password, investor);
    world.journal(`'${login}': ${investor ? 'investor ' : ''}password changed`);
    return true;
  });

  registry.on('UsersGroupOp', (args) => {
    const op = parseRecord<{ command?: string; newGroup?: string; leverage?: number; logins?: number[] }>(
      PF4UsersGroupOp,
      args.object('record'),
      'record',
    );
    const logins = op.logins ?? [];
    if (logins.length === 0) args.fail('record.logins must not be empty');
    for (const login of logins) user(login);
    switch (op.command) {
      case 'Delete':
        for (const login of logins) {
          if (world.engine.openOrdersOf(login).length > 0)
            throw new CommandError(bad, `login ${login} has open trades`);
        }
        for (const login of logins) world.deleteUser(login);
        break;
      case 'Enable':
      case 'Disable':
        for (const login of logins) world.editUser({ ...user(login), enableFlags: op.command === 'Enable' ? 1 : 0 });
        break;
      case 'Leverage':
        if (!op.leverage || op.leverage < 1) args.fail('record.leverage must be positive');
        for (const login of logins) world.editUser({ ...user(login), leverage: op.leverage as number });
        break;
      case 'SetGroup':
        group(op.newGroup ?? '');
        for (const login of logins) world.editUser({ ...user(login), group: op.newGroup as string });
        break;
      default:
        args.fail('record.command must be Delete, Enable, Disable, Leverage or SetGroup');
    }
    return true;
  });

  registry.on('GroupsRequest', () => world.groups.list());

  registry.on('GroupRecordRequest', (args) => group(args.string('group', { max: 16 })));

  registry.on('GroupRecordUpdate', (args) => {
    const name = args.string('group', { max: 16 });
    const current = group(name);
    const update = parseRecord<Partial<PF4GroupRecord>>(PF4GroupUpdate, args.object('record'), 'record');
    // The group name is the identity; secMarginsTotal follows the overrides, which this update does not carry.
    const merged = { ...current } as unknown as Record<string, unknown>;
    for (const [field, value] of Object.entries(update))
      if (value !== undefined && value !== null) merged[field] = value;
    world.groups.upsert(merged as unknown as PF4GroupRecord);
    world.engine.onGroupChanged(name);
    world.emit('groups', 'update', world.groupToWire(merged as unknown as PF4GroupRecord));
    world.journal(`group ${name} updated`);
    return merged;
  });

  registry.on('GroupSecGroupsGet', (args) => {
    const name = args.string('group', { max: 16 });
    group(name);
    return world.groupSecurities.get(name) ?? [];
  });

  registry.on('GroupSecMarginsGet', (args) => {
    const name = args.string('group', { max: 16 });
    return world.groupMargins.get(group(name).group)?.slice(0, group(name).secMarginsTotal) ?? [];
  });
}

/** True for the account's main or investor password; the platform's invalid-password answer otherwise. */
export function checkPassword(world: Pf4World, login: number, password: string): boolean {
  if (!world.users.has(login)) throw new CommandError(bad, 'invalid login or password');
  const known = world.passwords.get(login) ?? { main: `demo-${login}`, investor: `view-${login}` };
  // An empty stored password (a new account before UserPasswordSet) matches nothing.
  if ((password !== known.main || !known.main) && (password !== known.investor || !known.investor))
    throw new CommandError(bad, 'invalid login or password');
  return true;
}

function createUser(world: Pf4World, record: Record<string, unknown>): PF4UserRecord {
  const input = parseRecord<Record<string, unknown>>(PF4UserCreate, record, 'record');
  const requested = typeof input.login === 'number' ? input.login : 0;
  if (requested < 0) throw new CommandError(bad, 'record.login must be 0 or positive');
  if (requested > 0 && world.users.has(requested)) throw new CommandError(bad, `login ${requested} already exists`);
  const groupName = typeof input.group === 'string' ? input.group : '';
  if (!groupName) throw new CommandError(bad, 'record.group is required');
  const group = world.groups.find(groupName);
  if (!group) throw new CommandError(bad, `record.group: group ${groupName} does not exist`);
  const name = typeof input.name === 'string' ? input.name : '';
  if (!name) throw new CommandError(bad, 'record.name is required');
  const leverage = typeof input.leverage === 'number' && input.leverage > 0 ? input.leverage : group.defaultLeverage;
  const text = (field: string) => (typeof input[field] === 'string' ? input[field] : '');
  const num = (field: string, fallback: number) => (typeof input[field] === 'number' ? input[field] : fallback);
  const now = iso(Date.now());
  const user: PF4UserRecord = {
    login: requested > 0 ? requested : world.nextFreeLogin(),
    group: groupName,
    name,
    registrationDate: now,
    lastDate: now,
    externalId: text('externalId'),
    status: text('status'),
    country: text('country'),
    city: text('city'),
    state: text('state'),
    zipCode: text('zipCode'),
    address: text('address'),
    leadSource: text('leadSource'),
    phone: text('phone'),
    email: text('email'),
    comment: text('comment'),
    leverage,
    agentAccount: num('agentAccount', 0),
    lastIP: 0,
    balance: 0,
    credit: 0,
    prevMonthBalance: 0,
    prevBalance: 0,
    prevMonthEquity: 0,
    prevEquity: 0,
    interestRate: num('interestRate', 0),
    taxes: num('taxes', 0),
    enableFlags: num('enableFlags', 1),
    sendReports: num('sendReports', 1),
    mqid: num('mqid', 0),
    userColor: num('userColor', -1),
    // A new account has empty password bytes (nothing matches) until UserPasswordSet, as the spec allows.
    ...(NO_ACCOUNT_SECRETS as Pick<
      PF4UserRecord,
      'password' | 'passwordInvestor' | 'passwordPhone' | 'otpSecret' | 'apiData'
    >),
  };
  if (user.login > INT32_MAX) throw new CommandError(bad, 'no free login left');
  world.passwords.set(user.login, { main: '', investor: '' });
  world.addUser(user);
  world.journal(`'${user.login}': account created in ${groupName}`);
  return user;
}
