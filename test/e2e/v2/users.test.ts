/**
 * v2 PF4 Users and Authentication end to end: cached and live account reads, creation, Type 1 and Type 2 updates,
 * balance checks and fixes, passwords, group operations and sync starts, each checked against the simulator's state
 * read directly over the manager protocol. The quote feed is off, so no trade closes and moves a balance while a test
 * compares one. Each test works on logins of its own (seeded ones by position, or accounts it creates).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiComponents } from '../../../shared/records/contract.js';
import { PF4_SERVER_ONLY, passwordHash } from '../../../sim/pf4/serverOnlyFields.js';
import { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackForFile, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
/** 1000 is the gateway's manager; 1001 is this file's own, so it keeps its rights when 1000's are cut. */
const managers = [
  { login: 1000, password: PASSWORD },
  { login: 1001, password: PASSWORD },
];
const setup = stackForFile({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, managers },
      { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
    ],
  },
});

type Rec = Record<string, any>;
let c: Client;
let sim: ManagerClient;
/** Every seeded login, ascending. */
let logins: number[];

async function simClient(): Promise<ManagerClient> {
  const client = await ManagerClient.connect(c.stack.sim.port, 'demo-pf4');
  await client.ok('login', { login: 1001, password: PASSWORD, pump: false });
  return client;
}

beforeAll(async () => {
  c = setup.client;
  sim = await simClient();
  logins = (await sim.ok<Rec[]>('UserRecordsRequest')).map((u) => u.login as number).sort((a, b) => a - b);
  expect(logins.length).toBeGreaterThan(150);
});
afterAll(() => sim?.close());

const simUser = (login: number) => sim.ok<Rec>('UserRecordRequest', { login });

/** Every field the gateway answered equals the server's (the contract drops nothing the server keeps for it). */
function expectSameAsServer(answered: Rec, server: Rec) {
  for (const [field, value] of Object.entries(answered)) {
    if (field in server) expect(value, field).toEqual(server[field]);
  }
}

/** The account's server-only fields as the server holds them: password hashes, phone password, OTP secret, API data. */
const secretsOf = (user: Rec) => Object.fromEntries(PF4_SERVER_ONLY.user.map((f) => [f, user[f]]));

/**
 * An account the gateway answered has exactly the PF4User fields, and none of the values of the server-only fields the
 * server sent with it (a password hash, the OTP secret, ...) appears in it.
 */
function expectNoServerOnly(answered: Rec, server: Rec) {
  const fields = Object.keys((openapiComponents as Record<string, { properties: Rec }>).PF4User.properties);
  expect(Object.keys(answered).sort()).toEqual([...fields].sort());
  const text = JSON.stringify(answered);
  for (const field of PF4_SERVER_ONLY.user) {
    expect(fields, field).not.toContain(field);
    if (typeof server[field] === 'string' && server[field] !== '')
      expect(text, `the answer carries the server's ${field}`).not.toContain(server[field]);
  }
}

/** A seeded account has every server-only field set. */
const expectAllSecrets = (user: Rec) => {
  for (const field of PF4_SERVER_ONLY.user)
    expect(typeof user[field] === 'string' && user[field].length > 0, `${user.login} ${field}`).toBe(true);
};

/** A fresh account on the server, created directly, with its main password set. */
async function newAccount(fields: Rec = {}): Promise<Rec> {
  const user = await sim.ok<Rec>('UserRecordNew', {
    record: { login: 0, group: 'demo\\forex', name: 'Test Account', ...fields },
  });
  await sim.ok('UserPasswordSet', { login: user.login, password: `pw-${user.login}` });
  return user;
}

/** Gives the account a balance its history does not explain: a restore writes the balance without a deal. */
async function unexplainedBalance(login: number, by: number): Promise<void> {
  const user = await simUser(login);
  await sim.ok('BackupRestoreUsers', { records: [{ login, balance: Math.round((user.balance + by) * 100) / 100 }] });
}

describe('v2.PF4.UserRecordGet', () => {
  it('answers an account from the cache as the server holds it, and follows a change', async () => {
    const login = logins[0];
    const user = await ok<Rec>(c, 'v2.PF4.UserRecordGet', { params: { login } });
    const server = await simUser(login);
    expectSameAsServer(user, server);
    expectAllSecrets(server);
    expectNoServerOnly(user, server);
    expect(user.login).toBe(login);
    await sim.ok('UserRecordUpdate', { login, record: { comment: 'cache follows' } });
    const changed = await eventually(async () => {
      const u = await ok<Rec>(c, 'v2.PF4.UserRecordGet', { params: { login } });
      return u.comment === 'cache follows' ? u : null;
    });
    expect(changed).not.toBeNull();
  });

  it('answers NotFound with the manager code for a login the cache does not hold, and refuses a bad login', async () => {
    const missing = await fails(c, 'v2.PF4.UserRecordGet', { params: { login: 99_999_999 } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.UserRecordGet', 'login', { params: { login: 'abc' } });
    await refuses(c, 'v2.PF4.UserRecordGet', 'login', { params: { login: 0 } });
    await refuses(c, 'v2.PF4.UserRecordGet', 'login', { params: { login: 2_147_483_648 } });
  });
});

describe('v2.PF4.UserRecordRequest', () => {
  it('answers the account live: a change on the server shows at once', async () => {
    const login = logins[1];
    await sim.ok('UserRecordUpdate', { login, record: { city: `Live ${Date.now()}` } });
    const server = await simUser(login);
    const user = await ok<Rec>(c, 'v2.PF4.UserRecordRequest', { params: { login } });
    expectSameAsServer(user, server);
    expectAllSecrets(server);
    expectNoServerOnly(user, server);
    expect(user.city).toBe(server.city);
  });

  it('answers NotFound with the manager code for an unknown login, and refuses a bad one', async () => {
    expect(await fails(c, 'v2.PF4.UserRecordRequest', { params: { login: 99_999_999 } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.UserRecordRequest', 'login', { params: { login: '-5' } });
  });
});

describe('v2.PF4.UserRecordsRequest', () => {
  it('answers the known accounts among the logins, leaving unknown ones out', async () => {
    const asked = [logins[2], logins[3], logins[4]];
    const users = await ok<Rec[]>(c, 'v2.PF4.UserRecordsRequest', { query: { logins: [...asked, 99_999_999] } });
    expect(users.map((u) => u.login).sort((a, b) => a - b)).toEqual(asked);
    for (const user of users) {
      const server = await simUser(user.login);
      expectSameAsServer(user, server);
      expectNoServerOnly(user, server);
    }
    expect(await ok<Rec[]>(c, 'v2.PF4.UserRecordsRequest', { query: { logins: [99_999_998, 99_999_999] } })).toEqual(
      [],
    );
  });

  it('refuses no logins, an empty one and a non-positive one, naming logins', async () => {
    await refuses(c, 'v2.PF4.UserRecordsRequest', 'logins');
    await refuses(c, 'v2.PF4.UserRecordsRequest', 'logins', { query: { logins: '' } });
    await refuses(c, 'v2.PF4.UserRecordsRequest', 'logins', { query: { logins: [logins[2], 0] } });
  });
});

describe('v2.PF4.UsersRequest', () => {
  it('pages every account live by ascending login, the same as the whole list and the server', async () => {
    const { items, pages } = await allPages<Rec>(c, 'v2.PF4.UsersRequest', 37);
    const paged = items.map((u) => u.login as number);
    const server = (await sim.ok<Rec[]>('UserRecordsRequest')).map((u) => u.login as number).sort((a, b) => a - b);
    expect(paged).toEqual(server);
    expect(pages).toBe(Math.ceil(server.length / 37));
    const whole = await ok<Rec[]>(c, 'v2.PF4.UsersRequest');
    expect(whole.map((u) => u.login)).toEqual(server);
    expectSameAsServer(whole[5], await simUser(whole[5].login));
    const held = new Map((await sim.ok<Rec[]>('UserRecordsRequest')).map((u) => [u.login as number, u]));
    for (const user of [...whole, ...items]) expectNoServerOnly(user, held.get(user.login)!);
  });

  it('refuses a tampered cursor and a limit out of range', async () => {
    await refusesTamperedCursor(c, 'v2.PF4.UsersRequest');
    await refuses(c, 'v2.PF4.UsersRequest', 'limit', { query: { limit: 5001 } });
    await refuses(c, 'v2.PF4.UsersRequest', 'limit', { query: { limit: 0 } });
  });
});

describe('v2.PF4.UserRecordNew', () => {
  it('creates an account at the next free login when asked for login 0, and at the login asked otherwise', async () => {
    const highest = Math.max(...(await sim.ok<Rec[]>('UserRecordsRequest')).map((u) => u.login as number));
    const created = await ok<Rec>(c, 'v2.PF4.UserRecordNew', {
      body: { login: 0, group: 'demo\\pro', name: 'Ada New', email: 'ada@example.com', leverage: 50 },
    });
    expect(created).toMatchObject({
      login: highest + 1,
      group: 'demo\\pro',
      name: 'Ada New',
      email: 'ada@example.com',
      leverage: 50,
      balance: 0,
    });
    expectSameAsServer(created, await simUser(created.login));
    expectNoServerOnly(created, await simUser(created.login));
    const cached = await eventually(
      async () => (await call<Rec>(c, 'v2.PF4.UserRecordGet', { params: { login: created.login } })).body.data,
    );
    expect(cached).toMatchObject({ login: created.login, name: 'Ada New' });

    const chosen = highest + 500;
    const exact = await ok<Rec>(c, 'v2.PF4.UserRecordNew', {
      body: { login: chosen, group: 'real\\vip', name: 'Chosen Login' },
    });
    expect(exact).toMatchObject({ login: chosen, group: 'real\\vip' });
    expect((await simUser(chosen)).leverage).toBe(200); // the group's default leverage
  });

  it('answers the platform error for a login already taken and an unknown group, creating nothing', async () => {
    const before = (await sim.ok<Rec[]>('UserRecordsRequest')).length;
    const taken = await fails(c, 'v2.PF4.UserRecordNew', {
      body: { login: logins[0], group: 'demo\\forex', name: 'Dup' },
    });
    expect(taken).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    const noGroup = await fails(c, 'v2.PF4.UserRecordNew', { body: { group: 'no\\such', name: 'Orphan' } });
    expect(noGroup).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    expect((await sim.ok<Rec[]>('UserRecordsRequest')).length).toBe(before);
  });

  it('refuses a missing name, a group over 16 characters, a negative login and an unknown field, naming them', async () => {
    await refuses(c, 'v2.PF4.UserRecordNew', 'body.name', { body: { group: 'demo\\forex' } });
    await refuses(c, 'v2.PF4.UserRecordNew', 'body.group', { body: { group: 'g'.repeat(17), name: 'X' } });
    await refuses(c, 'v2.PF4.UserRecordNew', 'body.login', { body: { login: -1, group: 'demo\\forex', name: 'X' } });
    await refuses(c, 'v2.PF4.UserRecordNew', 'balance', { body: { group: 'demo\\forex', name: 'X', balance: 5 } });
  });
});

describe('v2.PF4.UserRecordUpdate', () => {
  it('lays the DTO over the live account: given fields change, absent ones, secrets, money and server fields survive', async () => {
    const login = logins[10];
    const before = await simUser(login);
    const updated = await ok<Rec>(c, 'v2.PF4.UserRecordUpdate', {
      params: { login },
      body: {
        name: 'Replaced Name',
        email: 'replaced@example.com',
        comment: 'type 1',
        leverage: 300,
        balance: before.balance + 1000,
        credit: 77,
      },
    });
    const after = await simUser(login);
    expectSameAsServer(updated, after);
    expect(after).toMatchObject({
      name: 'Replaced Name',
      email: 'replaced@example.com',
      comment: 'type 1',
      leverage: 300,
    });
    for (const kept of [
      'balance',
      'credit',
      'city',
      'country',
      'phone',
      'group',
      'registrationDate',
      'lastDate',
      'lastIP',
      'prevBalance',
      'prevMonthEquity',
    ]) {
      expect(after[kept], kept).toEqual(before[kept]);
    }
    // The secrets survive: the password hashes, phone password, OTP secret and API data are the server's as before
    // (the account's password still opens it), and the answer carries none of them.
    expectAllSecrets(before);
    expect(secretsOf(after)).toEqual(secretsOf(before));
    expect(await sim.ok('UserPasswordCheck', { login, password: `demo-${login}` })).toBe(true);
    expectNoServerOnly(updated, after);
  });

  it('moves the account to another existing group, and answers the platform error for an unknown one', async () => {
    const login = logins[11];
    const moved = await ok<Rec>(c, 'v2.PF4.UserRecordUpdate', { params: { login }, body: { group: 'real\\ecn' } });
    expect(moved.group).toBe('real\\ecn');
    expect((await simUser(login)).group).toBe('real\\ecn');
    expect(await fails(c, 'v2.PF4.UserRecordUpdate', { params: { login }, body: { group: 'no\\such' } })).toMatchObject(
      { code: 'PF4Error', managerCode: 'InvalidData' },
    );
    expect((await simUser(login)).group).toBe('real\\ecn');
  });

  it('answers NotFound for an unknown login and refuses bad input naming the field', async () => {
    expect(
      await fails(c, 'v2.PF4.UserRecordUpdate', { params: { login: 99_999_999 }, body: { name: 'Nobody' } }),
    ).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.UserRecordUpdate', 'body.group', {
      params: { login: logins[11] },
      body: { group: 'g'.repeat(17) },
    });
    await refuses(c, 'v2.PF4.UserRecordUpdate', 'body.leverage', {
      params: { login: logins[11] },
      body: { leverage: 0 },
    });
    await refuses(c, 'v2.PF4.UserRecordUpdate', 'registrationDate', {
      params: { login: logins[11] },
      body: { registrationDate: '2020-01-01T00:00:00Z' },
    });
    await refuses(c, 'v2.PF4.UserRecordUpdate', 'body', { params: { login: logins[11] }, rawBody: '{"name":' });
  });
});

describe('v2.PF4.UserRecord', () => {
  it('merges the patch into the live account: patched fields change, null empties, everything else stays', async () => {
    const login = logins[12];
    const before = await simUser(login);
    const patched = await ok<Rec>(c, 'v2.PF4.UserRecord', {
      params: { login },
      body: { comment: 'type 2', leverage: 25, email: null },
    });
    const after = await simUser(login);
    expectSameAsServer(patched, after);
    expect(after).toMatchObject({ comment: 'type 2', leverage: 25, email: '' });
    for (const [field, value] of Object.entries(before)) {
      if (!['comment', 'leverage', 'email'].includes(field)) expect(after[field], field).toEqual(value);
    }
    // The secrets are the server's as before, and the answer carries none of them.
    expectAllSecrets(before);
    expect(secretsOf(after)).toEqual(secretsOf(before));
    expectNoServerOnly(patched, after);
  });

  it('refuses an unknown field, money, removing the group, an empty patch and a non-object, naming them', async () => {
    const login = logins[12];
    await refuses(c, 'v2.PF4.UserRecord', 'nickname', { params: { login }, body: { nickname: 'x' } });
    await refuses(c, 'v2.PF4.UserRecord', 'body.balance', { params: { login }, body: { balance: 1 } });
    await refuses(c, 'v2.PF4.UserRecord', 'body.group', { params: { login }, body: { group: null } });
    await refuses(c, 'v2.PF4.UserRecord', 'body.leverage', { params: { login }, body: { leverage: 0 } });
    await refuses(c, 'v2.PF4.UserRecord', 'body', { params: { login }, body: {} });
    await refuses(c, 'v2.PF4.UserRecord', 'body', { params: { login }, body: ['comment'] });
    expect(
      await fails(c, 'v2.PF4.UserRecord', { params: { login: 99_999_999 }, body: { comment: 'x' } }),
    ).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
  });
});

describe('v2.PF4.AdmBalanceCheckLogin', () => {
  it('answers the difference the history does not explain, 0 for an intact account', async () => {
    const [broken, intact] = [logins[20], logins[21]];
    await unexplainedBalance(broken, 123.45);
    const server = await sim.ok<Rec>('AdmBalanceCheck', { login: broken });
    expect(server.diff).not.toBe(0);
    expect(await ok(c, 'v2.PF4.AdmBalanceCheckLogin', { params: { login: broken } })).toEqual({
      login: broken,
      diff: server.diff,
    });
    expect(await ok(c, 'v2.PF4.AdmBalanceCheckLogin', { params: { login: intact } })).toEqual({
      login: intact,
      diff: 0,
    });
    expect(await sim.ok('AdmBalanceCheck', { login: intact })).toEqual({ login: intact, diff: 0 });
  });

  it('answers NotFound for an unknown login and refuses a bad one', async () => {
    expect(await fails(c, 'v2.PF4.AdmBalanceCheckLogin', { params: { login: 99_999_999 } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.AdmBalanceCheckLogin', 'login', { params: { login: 'x' } });
  });
});

describe('v2.PF4.AdmBalanceCheck', () => {
  it('lists only the asked accounts with a non-zero difference; unknown logins are skipped', async () => {
    const [broken, intact] = [logins[22], logins[23]];
    await unexplainedBalance(broken, -50);
    expect((await sim.ok<Rec>('AdmBalanceCheck', { login: intact })).diff).toBe(0);
    const listed = await ok<Rec[]>(c, 'v2.PF4.AdmBalanceCheck', { query: { logins: [broken, intact, 99_999_999] } });
    const brokenDiff = (await sim.ok<Rec>('AdmBalanceCheck', { login: broken })).diff;
    expect(brokenDiff).toBeCloseTo(-50, 6);
    // The intact account (difference 0) and the unknown login are absent: only non-zero differences are listed.
    expect(listed).toEqual([{ login: broken, diff: brokenDiff }]);
    expect(await ok(c, 'v2.PF4.AdmBalanceCheck', { query: { logins: [99_999_999] } })).toEqual([]);
  });

  it('refuses an empty logins list, naming logins', async () => {
    await refuses(c, 'v2.PF4.AdmBalanceCheck', 'logins');
    await refuses(c, 'v2.PF4.AdmBalanceCheck', 'logins', { query: { logins: 'a' } });
  });
});

describe('v2.PF4.AdmBalanceFix', () => {
  it('writes the differences to the asked accounts only, within the trade time-out class', async () => {
    const [fixed, untouched] = [logins[24], logins[25]];
    await unexplainedBalance(fixed, 42.5);
    await unexplainedBalance(untouched, 10);
    const [before, otherBefore] = [await simUser(fixed), await simUser(untouched)];
    const diff = (await sim.ok<Rec>('AdmBalanceCheck', { login: fixed })).diff as number;
    const r = await call<boolean>(c, 'v2.PF4.AdmBalanceFix', { query: { logins: [fixed] } });
    expect(r.body).toMatchObject({ data: true, error: null });
    expect(r.headers.get('x-request-timeout-applied')).toBe('5');
    expect((await simUser(fixed)).balance).toBeCloseTo(before.balance - diff, 2);
    expect((await sim.ok<Rec>('AdmBalanceCheck', { login: fixed })).diff).toBe(0);
    expect((await simUser(untouched)).balance).toBe(otherBefore.balance);
    expect((await sim.ok<Rec>('AdmBalanceCheck', { login: untouched })).diff).not.toBe(0);
  });

  it('changes nothing when a login is unknown, and refuses an empty list', async () => {
    const login = logins[26];
    await unexplainedBalance(login, 7);
    const before = await simUser(login);
    expect(await fails(c, 'v2.PF4.AdmBalanceFix', { query: { logins: [login, 99_999_999] } })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
    });
    expect((await simUser(login)).balance).toBe(before.balance);
    await refuses(c, 'v2.PF4.AdmBalanceFix', 'logins');
  });
});

describe('v2.PF4.UserPasswordCheck', () => {
  it('answers true for the main and the investor password', async () => {
    const login = logins[30];
    expect(await ok(c, 'v2.PF4.UserPasswordCheck', { params: { login }, body: `demo-${login}` })).toBe(true);
    expect(await ok(c, 'v2.PF4.UserPasswordCheck', { params: { login }, body: `view-${login}` })).toBe(true);
  });

  it('answers false with the platform refusal for a wrong password or an unknown login, changing nothing', async () => {
    const login = logins[30];
    for (const [who, password] of [
      [login, 'wrong-password'],
      [99_999_999, 'anything'],
    ] as const) {
      const r = await call(c, 'v2.PF4.UserPasswordCheck', { params: { login: who }, body: password });
      expect(r.body.data).toBe(false);
      expect(r.body.error).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
      expect(r.body.error!.message).toMatch(/invalid login or password/);
    }
    expect(await sim.ok('UserPasswordCheck', { login, password: `demo-${login}` })).toBe(true);
  });

  it('refuses a missing body, a body that is not a JSON string and an empty password', async () => {
    const login = logins[30];
    await refuses(c, 'v2.PF4.UserPasswordCheck', 'body', { params: { login } });
    await refuses(c, 'v2.PF4.UserPasswordCheck', 'body', { params: { login }, body: { password: 'x' } });
    await refuses(c, 'v2.PF4.UserPasswordCheck', 'body', { params: { login }, body: '' });
    await refuses(c, 'v2.PF4.UserPasswordCheck', 'login', { params: { login: 'me' }, body: 'x' });
  });
});

describe('v2.PF4.UserPasswordSet', () => {
  it('overwrites the main password, or the investor one with changeInvestor, and the other stays', async () => {
    const login = logins[31];
    const before = secretsOf(await simUser(login));
    expect(await ok(c, 'v2.PF4.UserPasswordSet', { params: { login }, body: 'main-secret-1' })).toBe(true);
    // The server stores the new password's hash; every other secret stays.
    expect(secretsOf(await simUser(login))).toEqual({ ...before, password: passwordHash(login, 'main-secret-1') });
    expect(await sim.ok('UserPasswordCheck', { login, password: 'main-secret-1' })).toBe(true);
    expect((await sim.fails('UserPasswordCheck', { login, password: `demo-${login}` })).message).toMatch(/invalid/);
    expect(await sim.ok('UserPasswordCheck', { login, password: `view-${login}` })).toBe(true);

    expect(
      await ok(c, 'v2.PF4.UserPasswordSet', {
        params: { login },
        query: { changeInvestor: true, cleanPubkey: true },
        body: 'investor-2',
      }),
    ).toBe(true);
    expect(await sim.ok('UserPasswordCheck', { login, password: 'investor-2' })).toBe(true);
    expect((await sim.fails('UserPasswordCheck', { login, password: `view-${login}` })).message).toMatch(/invalid/);
    expect(await sim.ok('UserPasswordCheck', { login, password: 'main-secret-1' })).toBe(true);
    expect(secretsOf(await simUser(login))).toEqual({
      ...before,
      password: passwordHash(login, 'main-secret-1'),
      passwordInvestor: passwordHash(login, 'investor-2'),
    });
    // Neither is read back.
    const answered = await ok<Rec>(c, 'v2.PF4.UserRecordRequest', { params: { login } });
    expectNoServerOnly(answered, await simUser(login));
  });

  it('lets a new account with empty password bytes in once a password is set', async () => {
    const created = await ok<Rec>(c, 'v2.PF4.UserRecordNew', {
      body: { group: 'demo\\forex', name: 'No Password Yet' },
    });
    const before = await call(c, 'v2.PF4.UserPasswordCheck', { params: { login: created.login }, body: 'first-pass' });
    expect(before.body.data).toBe(false);
    expect(await ok(c, 'v2.PF4.UserPasswordSet', { params: { login: created.login }, body: 'first-pass' })).toBe(true);
    expect(await ok(c, 'v2.PF4.UserPasswordCheck', { params: { login: created.login }, body: 'first-pass' })).toBe(
      true,
    );
  });

  it('answers the platform error for a password it refuses and an unknown login, and refuses bad flags', async () => {
    const login = logins[32];
    expect(await fails(c, 'v2.PF4.UserPasswordSet', { params: { login }, body: 'abc' })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
    });
    expect(await sim.ok('UserPasswordCheck', { login, password: `demo-${login}` })).toBe(true);
    expect(
      await fails(c, 'v2.PF4.UserPasswordSet', { params: { login: 99_999_999 }, body: 'long-enough' }),
    ).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.UserPasswordSet', 'changeInvestor', {
      params: { login },
      query: { changeInvestor: 'yes' },
      body: 'long-enough',
    });
    await refuses(c, 'v2.PF4.UserPasswordSet', 'cleanPubkey', {
      params: { login },
      query: { cleanPubkey: 1 },
      body: 'long-enough',
    });
    await refuses(c, 'v2.PF4.UserPasswordSet', 'body', { params: { login }, body: 12345 });
  });
});

describe('v2.PF4.AdmUsersRequestSafe', () => {
  it('answers exactly the accounts of the group, live', async () => {
    const group = 'real\\vip';
    const server = (await sim.ok<Rec[]>('UserRecordsRequest')).filter((u) => u.group === group);
    expect(server.length).toBeGreaterThan(0);
    const users = await ok<Rec[]>(c, 'v2.PF4.AdmUsersRequestSafe', { params: { group } });
    expect(users.map((u) => u.login).sort((a, b) => a - b)).toEqual(server.map((u) => u.login).sort((a, b) => a - b));
    const first = users[0];
    expectSameAsServer(first, server.find((u) => u.login === first.login)!);
    for (const user of users) expectNoServerOnly(user, server.find((u) => u.login === user.login)!);
  });

  it('answers NotFound for an unknown group (names are case sensitive) and refuses a name over 16 characters', async () => {
    expect(await fails(c, 'v2.PF4.AdmUsersRequestSafe', { params: { group: 'REAL\\VIP' } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.AdmUsersRequestSafe', 'group', { params: { group: 'g'.repeat(17) } });
  });
});

describe('v2.PF4.UsersSyncStart', () => {
  it('opens a sync session from a timestamp (or from the beginning), in the maintenance time-out class', async () => {
    const r = await call<boolean>(c, 'v2.PF4.UsersSyncStart', { query: { timestamp: 0 } });
    expect(r.body).toMatchObject({ data: true, error: null });
    expect(r.headers.get('x-request-timeout-applied')).toBe('60');
    expect(await ok(c, 'v2.PF4.UsersSyncStart', { query: { timestamp: Math.floor(Date.now() / 1000) } })).toBe(true);
    expect(await ok(c, 'v2.PF4.UsersSyncStart')).toBe(true);
  });

  it('refuses a timestamp that is not a 32-bit count of seconds', async () => {
    await refuses(c, 'v2.PF4.UsersSyncStart', 'timestamp', { query: { timestamp: -1 } });
    await refuses(c, 'v2.PF4.UsersSyncStart', 'timestamp', { query: { timestamp: 2_147_483_648 } });
    await refuses(c, 'v2.PF4.UsersSyncStart', 'timestamp', { query: { timestamp: 'yesterday' } });
  });
});

describe('v2.PF4.UsersGroupOp', () => {
  it('disables, enables, sets the leverage and moves only the listed accounts', async () => {
    const [a, b, bystander] = [await newAccount(), await newAccount(), await newAccount()];
    const op = (body: Rec) => ok(c, 'v2.PF4.UsersGroupOp', { body: { logins: [a.login, b.login], ...body } });
    expect(await op({ command: 'Disable' })).toBe(true);
    expect((await simUser(a.login)).enableFlags).toBe(0);
    expect((await simUser(b.login)).enableFlags).toBe(0);
    expect((await simUser(bystander.login)).enableFlags).toBe(1);
    expect(await op({ command: 'Enable' })).toBe(true);
    expect((await simUser(a.login)).enableFlags).toBe(1);
    expect(await op({ command: 'Leverage', leverage: 333 })).toBe(true);
    expect((await simUser(b.login)).leverage).toBe(333);
    expect(await op({ command: 'SetGroup', newGroup: 'real\\standard' })).toBe(true);
    expect((await simUser(a.login)).group).toBe('real\\standard');
    expect(await simUser(bystander.login)).toMatchObject({ group: 'demo\\forex', leverage: bystander.leverage });
  });

  it('deletes accounts, and the cache follows', async () => {
    const gone = await newAccount();
    await eventually(
      async () => (await call(c, 'v2.PF4.UserRecordGet', { params: { login: gone.login } })).body.error === null,
    );
    expect(await ok(c, 'v2.PF4.UsersGroupOp', { body: { command: 'Delete', logins: [gone.login] } })).toBe(true);
    expect((await sim.fails('UserRecordRequest', { login: gone.login })).message).toMatch(/not found/);
    const missing = await eventually(async () => {
      const r = await call(c, 'v2.PF4.UserRecordGet', { params: { login: gone.login } });
      return r.body.error?.code === 'NotFound' ? r.body.error : null;
    });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
  });

  it('changes nothing when a login is unknown or, for Delete, has open trades', async () => {
    const fresh = await newAccount();
    const trading = (await sim.ok<{ items: Rec[] }>('TradesRequest', { limit: 1 })).items[0].login as number;
    expect(
      await fails(c, 'v2.PF4.UsersGroupOp', { body: { command: 'Delete', logins: [fresh.login, trading] } }),
    ).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    expect((await simUser(fresh.login)).login).toBe(fresh.login);
    expect((await simUser(trading)).login).toBe(trading);
    expect(
      await fails(c, 'v2.PF4.UsersGroupOp', { body: { command: 'Disable', logins: [fresh.login, 99_999_999] } }),
    ).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    expect((await simUser(fresh.login)).enableFlags).toBe(1);
    expect(
      await fails(c, 'v2.PF4.UsersGroupOp', {
        body: { command: 'SetGroup', newGroup: 'no\\such', logins: [fresh.login] },
      }),
    ).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    expect((await simUser(fresh.login)).group).toBe('demo\\forex');
  });

  it('refuses an unknown command, no logins, and a missing group or leverage, naming the field', async () => {
    const login = logins[40];
    await refuses(c, 'v2.PF4.UsersGroupOp', 'body.command', { body: { command: 'Explode', logins: [login] } });
    await refuses(c, 'v2.PF4.UsersGroupOp', 'body.logins', { body: { command: 'Enable', logins: [] } });
    await refuses(c, 'v2.PF4.UsersGroupOp', 'body.logins', { body: { command: 'Enable' } });
    await refuses(c, 'v2.PF4.UsersGroupOp', 'body.newGroup', { body: { command: 'SetGroup', logins: [login] } });
    await refuses(c, 'v2.PF4.UsersGroupOp', 'body.newGroup', {
      body: { command: 'SetGroup', newGroup: 'g'.repeat(17), logins: [login] },
    });
    await refuses(c, 'v2.PF4.UsersGroupOp', 'body.leverage', { body: { command: 'Leverage', logins: [login] } });
  });
});

describe('manager rights', () => {
  it('answers the platform refusal with its code when the gateway manager lacks the right an operation needs', async () => {
    const login = logins[50];
    const managersList = await sim.ok<Rec[]>('CfgRequestManager');
    const record = managersList.find((m) => m.login === 1000)!;
    expect(record.manager).toBe(true);
    await sim.ok('CfgUpdateManager', { record: { ...record, manager: false } });
    try {
      // Rights are read at login: make the gateway's manager log in again.
      await c.stack.control('demo-pf4', 'drop');
      sim.close();
      sim = await simClient();
      const refused = await eventually(
        async () => {
          const r = await call(c, 'v2.PF4.UserPasswordSet', { params: { login }, body: 'needs-manager' });
          return r.body.error?.managerCode === 'NotEnoughRights' ? r.body.error : null;
        },
        15_000,
        200,
      );
      expect(refused).toMatchObject({ code: 'PF4Error', managerCode: 'NotEnoughRights' });
      expect(await fails(c, 'v2.PF4.UsersGroupOp', { body: { command: 'Disable', logins: [login] } })).toMatchObject({
        code: 'PF4Error',
        managerCode: 'NotEnoughRights',
      });
      expect((await simUser(login)).enableFlags).toBe(1);
      // A check needs no right.
      expect(await ok(c, 'v2.PF4.UserPasswordCheck', { params: { login }, body: `demo-${login}` })).toBe(true);
    } finally {
      await sim.ok('CfgUpdateManager', { record });
      await c.stack.control('demo-pf4', 'drop');
      sim.close();
      sim = await simClient();
    }
    const restored = await eventually(
      async () =>
        (await call(c, 'v2.PF4.UserPasswordSet', { params: { login }, body: `demo-${login}` })).body.data === true,
      15_000,
      200,
    );
    expect(restored).toBe(true);
  });
});
