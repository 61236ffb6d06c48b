/**
 * The correct PF5 test server: a tiny world (three accounts whose logins lie beyond 2^53 − 1, two groups) and its
 * bridge-kit driver, on which every conformance rule passes or is skipped for what it does not declare. It pushes
 * `users` and `groups`; its reads are paged accounts, one account by login, groups and the server time; its writes
 * add and patch an account and patch a group. Logins travel as exact int64 (bare digits, read back exactly).
 *
 * The broken variants (servers.ts) start from `pf5Driver` and replace one part.
 */
import type { BridgeDriver, CommandHandler } from '../../kit/index.js';
import { ResultError } from '../../kit/index.js';
import { addInt64, type Int64 } from '../../../shared/int64.js';
import { PF5_RESULT } from '../../../shared/resultCodes.js';
import { ArgReader, type Args } from './args.js';
import { TinyWorld, type Manager, type Row } from './world.js';

export const PF5_MANAGER = { login: 1000, password: 'pf5-test-manager-password' } as const;

/** The first account's login: 2^53 + 1, which a double cannot hold. */
export const PF5_FIRST_LOGIN = 9_007_199_254_740_993n;

const BAD = PF5_RESULT.ErrParams;
const NAME_MAX = 128;
const EDITABLE_USER = ['group', 'firstName', 'lastName', 'leverage', 'comment'] as const;
const EDITABLE_GROUP = ['currency', 'marginMode', 'marginCall', 'marginStopOut'] as const;
/** The contract's margin modes (EnMarginMode). */
const MARGIN_MODES = ['Retail', 'ExchangeDiscount', 'RetailHedged'];

export function pf5World(): TinyWorld {
  const managers = new Map<number, Manager>([
    [PF5_MANAGER.login, { password: PF5_MANAGER.password, rights: ['admin', 'manager'] }],
  ]);
  const world = new TinyWorld(managers, PF5_RESULT.AuthAccountInvalid);
  world.groups.set('real\\retail', {
    group: 'real\\retail',
    currency: 'USD',
    marginMode: 'RetailHedged',
    marginCall: 100,
    marginStopOut: 50,
  });
  world.groups.set('real\\pro', {
    group: 'real\\pro',
    currency: 'EUR',
    marginMode: 'Retail',
    marginCall: 80,
    marginStopOut: 30,
  });
  const registered = '2024-01-02T00:00:00.000Z';
  const names: Array<[string, string, string, number]> = [
    ['Ada', 'Client', 'real\\retail', 5000],
    ['Ben', 'Client', 'real\\retail', 0],
    ['Cy', 'Client', 'real\\pro', 250.25],
  ];
  names.forEach(([firstName, lastName, group, balance], i) => {
    const login = addInt64(PF5_FIRST_LOGIN, i);
    world.users.set(login, {
      login,
      group,
      firstName,
      lastName,
      leverage: 100,
      balance,
      credit: 0,
      comment: '',
      registration: registered,
    });
  });
  return world;
}

function user(world: TinyWorld, login: Int64): Row {
  const found = world.users.get(login);
  if (!found) throw new ResultError(PF5_RESULT.ErrNotfound, `login ${String(login)} not found`);
  return found;
}

function groupOf(world: TinyWorld, name: string): Row {
  const found = world.groups.get(name);
  if (!found) throw new ResultError(PF5_RESULT.ErrNotfound, `group ${name} not found`);
  return found;
}

function edits(world: TinyWorld, patch: ArgReader, editable: readonly string[]): Row {
  patch.only(editable);
  const out: Row = {};
  for (const [field] of patch.entries()) {
    if (field === 'group') out.group = groupOf(world, patch.string('group', 64)).group;
    else if (field === 'leverage') out.leverage = patch.int('leverage', 1, 1000);
    else if (field === 'marginCall' || field === 'marginStopOut') out[field] = patch.int(field, 0, 1000);
    else if (field === 'marginMode') {
      const mode = patch.string('marginMode', 32);
      if (!MARGIN_MODES.includes(mode)) patch.fail(`marginMode must be one of ${MARGIN_MODES.join(', ')}`);
      out.marginMode = mode;
    } else out[field] = patch.string(field, NAME_MAX, 0);
  }
  return out;
}

export function pf5Commands(world: TinyWorld): Record<string, CommandHandler> {
  const read = (args: Args) => new ArgReader(args, BAD);
  return {
    ServerTime: () => new Date().toISOString(),
    UsersRequest: (raw) => {
      const args = read(raw);
      args.only(['after', 'limit']);
      return world.usersPage(args.optionalId('after'), args.optionalInt('limit', 1, 100_000) ?? 1000);
    },
    UserGet: (raw) => user(world, read(raw).id('login')),
    GroupsRequest: () => [...world.groups.values()],
    UserAdd: (raw) => {
      const record = read(raw).object('record');
      if (!record.has('group')) record.fail('record.group is required');
      const fields = edits(world, record, EDITABLE_USER);
      const last = world.sortedUsers().at(-1)?.login as Int64 | undefined;
      const login = last === undefined ? PF5_FIRST_LOGIN : addInt64(last, 1);
      const created: Row = {
        login,
        group: fields.group,
        firstName: '',
        lastName: '',
        leverage: 100,
        balance: 0,
        credit: 0,
        comment: '',
        registration: new Date().toISOString(),
        ...fields,
      };
      world.putUser(created);
      return created;
    },
    UserRecord: (raw) => {
      const args = read(raw);
      const merged = { ...user(world, args.id('login')), ...edits(world, args.object('patch'), EDITABLE_USER) };
      world.putUser(merged);
      return merged;
    },
    GroupRecord: (raw) => {
      const args = read(raw);
      const merged = {
        ...groupOf(world, args.string('group', 64)),
        ...edits(world, args.object('patch'), EDITABLE_GROUP),
      };
      world.putGroup(merged);
      return merged;
    },
  };
}

/** The correct PF5 server's driver, named `name`. */
export function pf5Driver(world: TinyWorld, name: string): BridgeDriver {
  return {
    name,
    family: 'PF5',
    build: 4150,
    events: ['users', 'groups'],
    commands: pf5Commands(world),
    authenticate: ({ login, password }) => world.authenticate(login, password),
    snapshot: () => [
      { kind: 'users', rows: world.sortedUsers() },
      { kind: 'groups', rows: [...world.groups.values()] },
    ],
    subscribe: (emit) => world.subscribe(emit),
    available: () => world.available,
  };
}
