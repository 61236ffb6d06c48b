/**
 * The correct PF4 test server: a tiny world (the manager's own account and three client accounts in two groups) and
 * its bridge-kit driver, on which every conformance rule passes or is skipped for what it does not declare. It pushes
 * `users` and `groups`; its reads are paged accounts, one account, groups, one group, a password check and the
 * server time; its writes create, edit, fund (balance and credit transactions only: it keeps no trades), regroup and
 * delete accounts, set a password, edit a group, and restart the server.
 *
 * The broken variants (servers.ts) start from `pf4Driver` and replace one part.
 */
import type { BridgeDriver, CommandHandler } from '../../kit/index.js';
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import { ResultError } from '../../kit/index.js';
import { ArgReader, type Args } from './args.js';
import { TinyWorld, type Manager, type Row } from './world.js';

export const PF4_MANAGER = { login: 1000, password: 'pf4-test-manager-password' } as const;

const INT32_MAX = 2_147_483_647;
const BAD = PF4_RESULT.InvalidData;
const NAME_MAX = 128;
/** Fields of an account UserRecordUpdate edits; the rest (login, money, dates) are the server's. */
const EDITABLE_USER = ['group', 'name', 'email', 'leverage', 'comment', 'enable'] as const;
/** Fields of a group GroupRecordUpdate edits (the name is its identity). */
const EDITABLE_GROUP = ['company', 'currency', 'defaultLeverage', 'marginCall', 'marginStopOut'] as const;

const iso = (at: number) => new Date(at).toISOString();

export function pf4World(): TinyWorld {
  const managers = new Map<number, Manager>([
    [PF4_MANAGER.login, { password: PF4_MANAGER.password, rights: ['admin', 'manager'] }],
  ]);
  const world = new TinyWorld(managers, PF4_RESULT.InvalidData);
  // A group as the change stream carries it (PF4GroupRecord): its 32 security entries and its margin overrides, none.
  const security = { show: 1, trade: 1, spreadDiff: 0, lotMin: 1, lotMax: 10_000, lotStep: 1 };
  const group = (name: string, marginCall: number): Row => ({
    group: name,
    company: 'Test Broker',
    currency: 'USD',
    defaultLeverage: 100,
    marginCall,
    marginStopOut: marginCall / 2,
    sessions: 0,
    secGroups: Array.from({ length: 32 }, () => ({ ...security })),
    secMargins: [],
    secMarginsTotal: 0,
  });
  world.groups.set('demo', group('demo', 80));
  world.groups.set('managers', group('managers', 50));
  const registered = Date.UTC(2024, 0, 2);
  const account = (login: number, groupName: string, name: string, balance: number): Row => ({
    login,
    group: groupName,
    name,
    email: `${login}@example.invalid`,
    leverage: 100,
    balance,
    credit: 0,
    enable: true,
    registrationDate: iso(registered),
    lastDate: iso(registered),
    comment: '',
  });
  for (const row of [
    account(1000, 'managers', 'Desk Manager', 0),
    account(1001, 'demo', 'Ada Client', 5000),
    account(1002, 'demo', 'Ben Client', 12_500.5),
    account(1003, 'demo', 'Cy Client', 0),
  ]) {
    world.users.set(row.login as number, row);
    world.passwords.set(row.login as number, `account-${String(row.login)}-password`);
  }
  return world;
}

function user(world: TinyWorld, login: number): Row {
  const found = world.users.get(login);
  if (!found) throw new ResultError(BAD, `login ${login} not found`);
  return found;
}

function groupOf(world: TinyWorld, name: string): Row {
  const found = world.groups.get(name);
  if (!found) throw new ResultError(BAD, `group ${name} not found`);
  return found;
}

/** The fields of `record` among `editable`, checked; anything else refused by name. */
function edits(world: TinyWorld, record: ArgReader, editable: readonly string[]): Row {
  record.only(editable);
  const out: Row = {};
  for (const [field] of record.entries()) {
    if (field === 'group') out.group = groupOf(world, record.string('group', 16)).group;
    else if (field === 'name') out.name = record.string('name', NAME_MAX);
    else if (field === 'email' || field === 'comment' || field === 'company' || field === 'currency')
      out[field] = record.string(field, NAME_MAX, 0);
    else if (field === 'leverage' || field === 'defaultLeverage') out[field] = record.int(field, 1, 1000);
    else if (field === 'marginCall' || field === 'marginStopOut') out[field] = record.int(field, 0, 1000);
    else if (field === 'enable') out.enable = record.boolean('enable');
  }
  return out;
}

export function pf4Commands(world: TinyWorld): Record<string, CommandHandler> {
  const read = (args: Args) => new ArgReader(args, BAD);
  const login = (args: ArgReader) => args.int('login', 1, INT32_MAX);
  return {
    ServerTime: () => new Date().toISOString(),
    SrvRestart: () => {
      world.scheduleRestart();
      return true;
    },
    UsersRequest: (raw) => {
      const args = read(raw);
      args.only(['after', 'limit']);
      return world.usersPage(args.optionalInt('after', 0, INT32_MAX), args.optionalInt('limit', 1, 100_000) ?? 1000);
    },
    UserRecordRequest: (raw) => user(world, login(read(raw))),
    UserPasswordCheck: (raw) => {
      const args = read(raw);
      const account = user(world, login(args));
      return world.passwords.get(account.login as number) === args.string('password', 1024);
    },
    UserPasswordSet: (raw) => {
      const args = read(raw);
      const account = user(world, login(args));
      world.passwords.set(account.login as number, args.string('password', 1024, 5));
      return true;
    },
    UserRecordNew: (raw) => {
      const record = read(raw).object('record');
      if (!record.has('group')) record.fail('record.group is required');
      if (!record.has('name')) record.fail('record.name is required');
      const fields = edits(world, record, EDITABLE_USER);
      const next = Math.max(PF4_MANAGER.login, ...(world.users.keys() as Iterable<number>)) + 1;
      const now = iso(Date.now());
      const created: Row = {
        login: next,
        group: fields.group,
        name: fields.name,
        email: '',
        leverage: groupOf(world, fields.group as string).defaultLeverage,
        balance: 0,
        credit: 0,
        enable: true,
        registrationDate: now,
        lastDate: now,
        comment: '',
        ...fields,
      };
      world.putUser(created);
      return created;
    },
    UserRecordUpdate: (raw) => {
      const args = read(raw);
      const current = user(world, login(args));
      const merged = { ...current, ...edits(world, args.object('record'), EDITABLE_USER) };
      world.putUser(merged);
      return merged;
    },
    TradeTransaction: (raw) => {
      const args = read(raw);
      const type = args.string('tradeTransactionType', 32);
      if (type !== 'BrBalance') args.fail(`tradeTransactionType must be BrBalance: this server keeps no trades`);
      const command = args.string('tradeCommand', 16);
      if (command !== 'Balance' && command !== 'Credit')
        args.fail('tradeCommand must be Balance or Credit for BrBalance');
      const account = user(world, args.int('orderBy', 1, INT32_MAX));
      const amount = args.number('price');
      if (amount === 0) args.fail('price (the amount) must not be 0');
      args.optionalString('comment', 32);
      const field = command === 'Balance' ? 'balance' : 'credit';
      const funded = { ...account, [field]: Math.round(((account[field] as number) + amount) * 100) / 100 };
      world.putUser(funded);
      return funded;
    },
    UsersGroupOp: (raw) => {
      const op = read(raw).object('record');
      op.only(['command', 'logins', 'newGroup', 'leverage']);
      const logins = op.intList('logins', 1, INT32_MAX, 1000);
      if (logins.length === 0) op.fail('record.logins must not be empty');
      const accounts = logins.map((l) => user(world, l));
      const command = op.string('command', 16);
      if (command === 'Delete') for (const a of accounts) world.deleteUser(a.login as number);
      else if (command === 'SetGroup') {
        const group = groupOf(world, op.string('newGroup', 16)).group;
        for (const a of accounts) world.putUser({ ...a, group });
      } else if (command === 'Leverage') {
        const leverage = op.int('leverage', 1, 1000);
        for (const a of accounts) world.putUser({ ...a, leverage });
      } else op.fail('record.command must be Delete, SetGroup or Leverage');
      return true;
    },
    GroupsRequest: () => [...world.groups.values()],
    GroupRecordRequest: (raw) => groupOf(world, read(raw).string('group', 16)),
    GroupRecordUpdate: (raw) => {
      const args = read(raw);
      const current = groupOf(world, args.string('group', 16));
      const merged = { ...current, ...edits(world, args.object('record'), EDITABLE_GROUP) };
      world.putGroup(merged);
      return merged;
    },
  };
}

/** The correct PF4 server's driver, named `name`. */
export function pf4Driver(world: TinyWorld, name: string): BridgeDriver {
  return {
    name,
    family: 'PF4',
    build: 1420,
    events: ['users', 'groups'],
    commands: pf4Commands(world),
    authenticate: ({ login, password }) => world.authenticate(login, password),
    snapshot: () => [
      { kind: 'users', rows: world.sortedUsers() },
      { kind: 'groups', rows: [...world.groups.values()] },
    ],
    subscribe: (emit) => world.subscribe(emit),
    available: () => world.available,
    observe: {
      loggedIn: (session) => {
        if (session.pumping) world.countSession(session.login as number);
      },
    },
  };
}
