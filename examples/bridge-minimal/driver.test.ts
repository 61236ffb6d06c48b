/**
 * The minimal bridge's driver, command by command, over the seed world: each answer (records whole, in the contract's
 * shape), each refusal (InvalidData naming the field or the key, never a password), the snapshot's parts and the
 * `users` event every write raises before its answer, carrying the record the write answered.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ResultError, type BridgeDriver, type ChangeOp, type Session } from '../../bridge/kit/index.js';
import type { ChangeKind } from '../../shared/protocol.js';
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { openapiComponents } from '../../shared/records/contract.js';
import { MANAGER_RIGHTS, minimalDriver } from './driver.js';
import { DEFAULT_WORLD } from './options.js';
import { World } from './world.js';

const PASSWORD = 'driver-test-manager-password';
const USER_FIELDS = Object.keys((openapiComponents.PF4User as { properties: object }).properties);

let world: World;
let driver: BridgeDriver;
let events: Array<{ kind: ChangeKind; op: ChangeOp; record: Record<string, unknown> }>;

beforeEach(() => {
  world = World.load(DEFAULT_WORLD);
  driver = minimalDriver(world, { name: 'minimal-test', manager: { login: 1000, password: PASSWORD } });
  events = [];
  driver.subscribe!((kind, op, record) => events.push({ kind, op, record: record as Record<string, unknown> }));
});

const session = {
  peer: '127.0.0.1:1',
  login: 1000,
  rights: new Set(MANAGER_RIGHTS),
  pumping: true,
} as unknown as Session;
const call = (cmd: string, args: Record<string, unknown> = {}) => driver.commands[cmd](args, session) as any;
/** The ResultError a command answers with. */
function refusal(cmd: string, args: Record<string, unknown>): { code: number; message: string } {
  try {
    call(cmd, args);
  } catch (error) {
    if (error instanceof ResultError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error(`${cmd} answered instead of refusing`);
}

describe('who the server is', () => {
  it('is a PF4 server pushing users and groups, with one command per handler', () => {
    expect(driver).toMatchObject({ name: 'minimal-test', family: 'PF4', events: ['users', 'groups'] });
    expect(Object.keys(driver.commands).sort()).toEqual([
      'GroupsRequest',
      'ServerTime',
      'UserPasswordCheck',
      'UserRecordNew',
      'UserRecordRequest',
      'UserRecordUpdate',
      'UserRecordsRequest',
    ]);
  });

  it('logs in only its manager with its password; a refusal never holds the password', async () => {
    expect(await driver.authenticate({ login: 1000, password: PASSWORD, peer: 'p' })).toEqual({
      ok: true,
      rights: ['manager'],
    });
    for (const attempt of [
      { login: 1000, password: `${PASSWORD}x` },
      { login: 1001, password: PASSWORD },
      { login: 1000, password: '' },
    ]) {
      const verdict = await driver.authenticate({ ...attempt, peer: 'p' });
      expect(verdict).toEqual({
        ok: false,
        code: PF4_RESULT.InvalidData,
        message: 'invalid manager login or password',
      });
    }
  });

  it("snapshots the world's accounts and groups as they stand", async () => {
    const parts = await driver.snapshot(session);
    expect(parts.map((p) => p.kind)).toEqual(['users', 'groups']);
    expect(parts[0].rows).toEqual(world.users());
    expect(parts[0].rows.map((u: any) => u.login)).toEqual([100001, 100002, 100003]);
    expect(parts[1].rows.map((g: any) => g.group)).toEqual(['demo', 'vip']);
    // A change after the snapshot leaves the rows handed out as they were.
    call('UserRecordUpdate', { login: 100001, record: { name: 'Changed Later' } });
    expect((parts[0].rows[0] as any).name).toBe('Alice Example');
  });
});

describe('reads', () => {
  it('ServerTime answers the time as an ISO string', () => {
    const before = Date.now();
    const time = call('ServerTime');
    expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(time)).toBeGreaterThanOrEqual(before);
  });

  it('UserRecordRequest answers the whole account', () => {
    const user = call('UserRecordRequest', { login: 100003 });
    expect(Object.keys(user)).toEqual(USER_FIELDS);
    expect(user).toMatchObject({
      login: 100003,
      group: 'vip',
      name: 'Chiara Example',
      balance: 125000,
      credit: 5000,
      leverage: 200,
    });
  });

  it('UserRecordRequest: an unknown login is not found, bad arguments name the field', () => {
    expect(refusal('UserRecordRequest', { login: 999 })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'login 999 not found',
    });
    expect(refusal('UserRecordRequest', {})).toEqual({ code: PF4_RESULT.InvalidData, message: 'login is required' });
    for (const login of ['100001', 0, 1.5, 2147483648]) {
      expect(refusal('UserRecordRequest', { login })).toEqual({
        code: PF4_RESULT.InvalidData,
        message: 'login must be an integer from 1 to 2147483647',
      });
    }
  });

  it('UserRecordsRequest answers every account, or those among logins (unknown ones left out)', () => {
    expect(call('UserRecordsRequest').map((u: any) => u.login)).toEqual([100001, 100002, 100003]);
    expect(call('UserRecordsRequest', { logins: [100002, 5, 100001] }).map((u: any) => u.name)).toEqual([
      'Bruno Example',
      'Alice Example',
    ]);
    expect(call('UserRecordsRequest', { logins: [] })).toEqual([]);
    expect(refusal('UserRecordsRequest', { logins: [1, 'x'] })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'logins must be an array of integers from 1 to 2147483647',
    });
    expect(refusal('UserRecordsRequest', { logins: 100001 }).message).toMatch(/^logins must be an array/);
  });

  it('GroupsRequest answers the groups, whole', () => {
    const groups = call('GroupsRequest');
    expect(groups.map((g: any) => [g.group, g.currency, g.defaultLeverage])).toEqual([
      ['demo', 'USD', 100],
      ['vip', 'EUR', 200],
    ]);
    expect(Object.keys(groups[0])).toEqual([
      ...Object.keys((openapiComponents.PF4Group as { properties: object }).properties),
      'secGroups',
      'secMargins',
    ]);
    expect(groups[0].secGroups).toHaveLength(32);
  });

  it("UserPasswordCheck: true for the account's password; a wrong one, or an unknown login, InvalidData without it", () => {
    expect(call('UserPasswordCheck', { login: 100001, password: 'demo-100001' })).toBe(true);
    const wrong = { code: PF4_RESULT.InvalidData, message: 'invalid login or password' };
    expect(refusal('UserPasswordCheck', { login: 100001, password: 'demo-100002' })).toEqual(wrong);
    expect(refusal('UserPasswordCheck', { login: 424242, password: 'demo-424242' })).toEqual(wrong);
    expect(refusal('UserPasswordCheck', { login: 100001 })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'password must be a string',
    });
  });
});

describe('writes and their events', () => {
  it('UserRecordUpdate lays the given fields over the account and raises a users update with the answer', () => {
    const before = call('UserRecordRequest', { login: 100002 });
    const answer = call('UserRecordUpdate', {
      login: 100002,
      record: { name: 'Bruno Renamed', city: 'Lisbon', balance: 1, comment: null },
    });
    // balance stays (moved only by balance transactions); a null member keeps the stored value.
    expect(answer).toEqual({ ...before, name: 'Bruno Renamed', city: 'Lisbon' });
    expect(events).toEqual([{ kind: 'users', op: 'update', record: answer }]);
    expect(call('UserRecordRequest', { login: 100002 })).toEqual(answer);
  });

  it('UserRecordUpdate refuses, changing nothing: an unknown login, a field the update does not have, a group that does not exist', () => {
    expect(refusal('UserRecordUpdate', { login: 999, record: { name: 'X' } })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'login 999 not found',
    });
    expect(refusal('UserRecordUpdate', { login: 100001, record: { nickname: 'X' } })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'record.nickname: Unrecognized key: "nickname"',
    });
    expect(refusal('UserRecordUpdate', { login: 100001, record: { leverage: 'high' } }).message).toMatch(
      /^record\.leverage: /,
    );
    expect(refusal('UserRecordUpdate', { login: 100001, record: { group: 'nowhere' } })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'record.group: group nowhere does not exist',
    });
    expect(refusal('UserRecordUpdate', { login: 100001 })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'record is required (an object)',
    });
    expect(events).toEqual([]);
    expect(call('UserRecordRequest', { login: 100001 }).name).toBe('Alice Example');
  });

  it('UserRecordNew creates an account on the next free login and raises a users add with the answer', () => {
    const user = call('UserRecordNew', { record: { group: 'vip', name: 'Dario Example', email: 'dario@example.com' } });
    expect(Object.keys(user)).toEqual(USER_FIELDS);
    expect(user).toMatchObject({
      login: 100004,
      group: 'vip',
      name: 'Dario Example',
      email: 'dario@example.com',
      leverage: 200,
      balance: 0,
      enableFlags: 1,
    });
    expect(events).toEqual([{ kind: 'users', op: 'add', record: user }]);
    expect(call('UserRecordNew', { record: { login: 7, group: 'demo', name: 'Seven', leverage: 33 } })).toMatchObject({
      login: 7,
      leverage: 33,
    });
    expect(call('UserRecordsRequest').map((u: any) => u.login)).toEqual([100001, 100002, 100003, 100004, 7]);
  });

  it('UserRecordNew refuses a taken login, a missing group or name, and a negative login', () => {
    const bad = (record: Record<string, unknown>) => refusal('UserRecordNew', { record });
    expect(bad({ login: 100001, group: 'demo', name: 'Again' })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'record.login: login 100001 already exists',
    });
    expect(bad({ name: 'No Group' }).message).toBe('record.group is required');
    expect(bad({ group: 'nowhere', name: 'No Such Group' }).message).toBe('record.group: group nowhere does not exist');
    expect(bad({ group: 'demo' }).message).toBe('record.name is required');
    expect(bad({ login: -1, group: 'demo', name: 'Negative' }).message).toBe(
      'record.login must be 0 (the server assigns one) or positive',
    );
    expect(events).toEqual([]);
  });
});
