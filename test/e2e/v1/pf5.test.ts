/**
 * v1 PF5 end to end: every operation's own rule, values checked against the simulator's state read with a manager
 * session of the test's own; bad input answered 400 naming the field; PF5 platform refusals as 400 (404 for
 * ErrNotfound) with the PF5Error body. The quote feed runs slowly (2 ticks per second over 12 symbols) so minute bars
 * exist while positions barely move; 500 accounts leave enough of them without positions or orders for each test to
 * work on accounts no other test here touches; positions and orders are compared without the fields the server
 * computes at the current quote.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pf5V1 } from '../../../shared/catalog/v1/pf5.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackForFile, type Client } from '../support.js';
import { call, notFound, ok, platformRefuses, refuses, type CallOptions } from './api.js';

const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
const managers = [{ login: 1000, password: PASSWORD }];
const setup = stackForFile({
  simConfig: {
    servers: [
      { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, managers },
      { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 2, accounts: 500, managers },
    ],
  },
});

type Row = Record<string, any>;

let c: Client;
let sim: ManagerClient;
/** The accounts the server generated (passwords `Demo<login>a` / `View<login>a`), before any test added one. */
let generated: Set<number>;
beforeAll(async () => {
  c = setup.client;
  sim = await ManagerClient.connect(c.stack.sim.port, 'demo-pf5');
  await sim.ok('login', { login: 1000, password: PASSWORD, pump: false });
  generated = new Set(((await sim.ok<Row>('UsersRequest', {})).items as Row[]).map((u) => u.login as number));
});
afterAll(() => sim?.close());

/** Exact int64 ids beyond 2^53 − 1 reach the server (test/e2e/v1/pf5BigIds.test.ts has accounts there); past int64 is refused. */
const BEYOND_2_53 = '9007199254740993';
const SAFE_MAX = '9007199254740991';
const BEYOND_INT64 = '9223372036854775808';
const EPOCH = '1970-01-01T00:00:00Z';

const shapeUser = shapeRecord('PF5User');
const shapePosition = shapeRecord('PF5Position');
const shapeOrder = shapeRecord('PF5Order');
const shapeDeal = shapeRecord('PF5Deal');
const without = (r: Row, ...fields: string[]) =>
  Object.fromEntries(Object.entries(r).filter(([k]) => !fields.includes(k)));
/** A position or order as stored, without what the server computes at the quote of the moment it sends one. */
const stable = (r: any): Row => without(r, 'priceCurrent', 'profit');
const keysOf = (rows: Row[], key: string) => rows.map((r) => r[key] as number);
const ascending = (xs: number[]) => [...xs].sort((a, b) => a - b);

/** Logins a test took, so no two tests work on the same account. */
const taken = new Set<number>();

/** Groups whose accounts hedge (a position per fill): every generated group but demo\netting. */
const HEDGING = ['demo\\retail', 'real\\pro', 'real\\retail'];

/** An account (of `group`, else of a hedging group) with no positions and no orders that no other test took. */
async function quietLogin(group?: string): Promise<number> {
  const busy = new Set<number>([
    ...((await sim.ok<Row>('PositionsRequest', {})).items as Row[]).map((p) => p.login as number),
    ...((await sim.ok<Row>('OrdersRequest', {})).items as Row[]).map((o) => o.login as number),
  ]);
  const users = (await sim.ok<Row>('UsersRequest', {})).items as Row[];
  const groups = group ? [group] : HEDGING;
  const quiet = (g: string) =>
    users.find((u) => u.group === g && !busy.has(u.login) && !taken.has(u.login) && generated.has(u.login));
  const login = groups.map(quiet).find((u) => u !== undefined)?.login as number | undefined;
  if (login === undefined) throw new Error(`no quiet account left in ${groups.join(', ')}`);
  taken.add(login);
  return login;
}

/** A market order filled for `login`: answers `{order, deal, position}`. */
const buy = (login: number, symbol = 'EURUSD', type: 'Buy' | 'Sell' = 'Buy') =>
  sim.ok<{ order: number; deal: number; position: number }>('DealerSend', { login, symbol, type, volume: 1000 });

/** A pending buy limit far below the market for `login`: answers `{order}`. */
async function pendingOrder(login: number, symbol = 'EURUSD'): Promise<number> {
  const tick = await sim.ok<Row>('TickLast', { symbol });
  const price = Number((tick.bid * 0.9).toFixed(tick.bid > 100 ? 2 : 5));
  return (await sim.ok<{ order: number }>('DealerSend', { login, symbol, type: 'BuyLimit', volume: 1000, price }))
    .order;
}

/** Positions (or orders) of the server created on trade server 2: their deletion is ErrNotMain. */
async function foreignPosition(): Promise<Row> {
  const all = (await sim.ok<Row>('PositionsRequest', {})).items as Row[];
  const found = all.find((p) => String(p.externalId).startsWith('TS2:'));
  if (!found) throw new Error('no position of trade server 2');
  return found;
}

/**
 * Reads the gateway's answer between two identical reads of the server's, so a fill or a tick moving the list while
 * the test reads it cannot make the comparison pass or fail by chance.
 */
async function againstServer<T>(
  read: () => Promise<T>,
  server: () => Promise<T>,
  same: (a: T, b: T) => boolean = (a, b) => JSON.stringify(a) === JSON.stringify(b),
) {
  for (let attempt = 0; attempt < 10; attempt++) {
    const before = await server();
    const got = await read();
    const after = await server();
    if (same(before, after) && same(got, before)) return { got, server: before };
    await new Promise((r) => setTimeout(r, 100));
  }
  const before = await server();
  return { got: await read(), server: before };
}

/** Expects the PF5 platform's refusal with the PF5Error body naming the result code (`ErrNotfound` answers 404). */
async function pf5Refuses(id: string, code: string, options: CallOptions): Promise<string> {
  if (code === 'ErrNotfound') {
    const error = await notFound(c, id, options);
    expect(error).toMatchObject({ errorType: 'PF5API', errorCode: 'ErrNotfound' });
    expect(error.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    return error.errorDescription ?? '';
  }
  const error = await platformRefuses(c, id, code, options);
  expect(error.requestId).toMatch(/^[0-9a-f]{8}-/);
  return error.errorDescription ?? '';
}

// ---- Users -----------------------------------------------------------------------------------------------------------

describe('v1.PF5.UserGet', () => {
  it('answers the cached account as the server holds it; 404 with the PF5Error body for an unknown login', async () => {
    const login = await quietLogin();
    expect(await ok(c, 'v1.PF5.UserGet', { params: { login } })).toEqual(shapeUser(await sim.ok('UserGet', { login })));
    const missing = await pf5Refuses('v1.PF5.UserGet', 'ErrNotfound', { params: { login: 999_999_999 } });
    expect(missing).toContain('999999999');
  });

  it('refuses a login that is not a positive int64, and takes one beyond 2^53 − 1 exactly', async () => {
    await refuses(c, 'v1.PF5.UserGet', 'login', { params: { login: 0 } });
    await refuses(c, 'v1.PF5.UserGet', 'login', { params: { login: 'abc' } });
    await refuses(c, 'v1.PF5.UserGet', 'login', { params: { login: '-5' } });
    const message = await refuses(c, 'v1.PF5.UserGet', 'login', { params: { login: BEYOND_INT64 } });
    expect(message).toContain('at most 9223372036854775807');
    // Ids past 2^53 − 1 pass validation exactly and reach the cache, which has no such account.
    expect(await pf5Refuses('v1.PF5.UserGet', 'ErrNotfound', { params: { login: SAFE_MAX } })).toContain(SAFE_MAX);
    expect(await pf5Refuses('v1.PF5.UserGet', 'ErrNotfound', { params: { login: BEYOND_2_53 } })).toContain(
      BEYOND_2_53,
    );
  });
});

describe('v1.PF5.UserRequest', () => {
  it('answers the account live, as the server holds it; 404 for an unknown login; 400 naming a bad login', async () => {
    const login = await quietLogin('real\\pro');
    expect(await ok(c, 'v1.PF5.UserRequest', { params: { login } })).toEqual(
      shapeUser(await sim.ok('UserRequest', { login })),
    );
    await pf5Refuses('v1.PF5.UserRequest', 'ErrNotfound', { params: { login: 999_999_998 } });
    expect(await pf5Refuses('v1.PF5.UserRequest', 'ErrNotfound', { params: { login: BEYOND_2_53 } })).toContain(
      BEYOND_2_53,
    );
    await refuses(c, 'v1.PF5.UserRequest', 'login', { params: { login: BEYOND_INT64 } });
    await refuses(c, 'v1.PF5.UserRequest', 'login', { params: { login: '1.5' } });
  });
});

for (const id of ['v1.PF5.UserAccountGet', 'v1.PF5.UserAccountRequest'] as const) {
  describe(id, () => {
    it("answers the account's money at the current quotes as the server computes it; 404 for an unknown login", async () => {
      const login = await quietLogin('real\\retail');
      const account = await ok<Row>(c, id, { params: { login } });
      expect(account).toEqual(await sim.ok('UserAccountGet', { login }));
      expect(Object.keys(account)).toEqual([
        'login',
        'balance',
        'credit',
        'equity',
        'margin',
        'marginFree',
        'marginLevel',
        'profit',
        'storage',
      ]);
      expect(account.equity).toBe(account.balance + account.credit);
      // An account with an open position carries its margin.
      const withPosition = ((await sim.ok<Row>('PositionsRequest', {})).items as Row[])[0].login as number;
      const { got, server } = await againstServer(
        () => ok<Row>(c, id, { params: { login: withPosition } }),
        () => sim.ok<Row>('UserAccountGet', { login: withPosition }),
      );
      expect(got).toEqual(server);
      expect(got.margin).toBeGreaterThan(0);
      await pf5Refuses(id, 'ErrNotfound', { params: { login: 999_999_997 } });
      await refuses(c, id, 'login', { params: { login: 'x' } });
    });
  });
}

describe('v1.PF5.UserGetByLogins', () => {
  it('answers the known accounts among repeated logins from the cache, each once, in the order asked', async () => {
    const [a, b] = [await quietLogin(), await quietLogin('real\\pro')];
    const users = await ok<Row[]>(c, 'v1.PF5.UserGetByLogins', { query: { logins: [b, 999_999_996, a, b] } });
    expect(users.map((u) => u.login)).toEqual([b, a]);
    expect(users).toEqual([
      shapeUser(await sim.ok('UserGet', { login: b })),
      shapeUser(await sim.ok('UserGet', { login: a })),
    ]);
    expect(await ok(c, 'v1.PF5.UserGetByLogins', { query: { logins: [999_999_996] } })).toEqual([]);
  });

  it('refuses no logins, a login that is not a positive integer and one beyond int64, naming logins', async () => {
    await refuses(c, 'v1.PF5.UserGetByLogins', 'logins', {});
    await refuses(c, 'v1.PF5.UserGetByLogins', 'logins', { query: { logins: ['500000', 'abc'] } });
    await refuses(c, 'v1.PF5.UserGetByLogins', 'logins', { query: { logins: [BEYOND_INT64] } });
    expect(await ok(c, 'v1.PF5.UserGetByLogins', { query: { logins: [BEYOND_2_53] } })).toEqual([]);
  });
});

describe('v1.PF5.UserGetByGroup', () => {
  it('selects accounts by full group names with patterns, exclusions and lists, as the server does', async () => {
    for (const mask of ['real\\*,!real\\pro', 'demo\\retail,real\\pro', '*', 'demo\\net*']) {
      const users = await ok<Row[]>(c, 'v1.PF5.UserGetByGroup', { params: { mask } });
      const server = await sim.ok<Row[]>('UserGetByGroup', { mask });
      expect(
        users.map((u) => u.login),
        mask,
      ).toEqual(ascending(server.map((u) => u.login)));
      expect(users.length, mask).toBeGreaterThan(0);
    }
    const groups = new Set(
      (await ok<Row[]>(c, 'v1.PF5.UserGetByGroup', { params: { mask: 'real\\*,!real\\pro' } })).map((u) => u.group),
    );
    expect([...groups]).toEqual(['real\\retail']);
    // Names match in full and case-sensitively: a bare prefix or another case selects nothing.
    expect(await ok(c, 'v1.PF5.UserGetByGroup', { params: { mask: 'real' } })).toEqual([]);
    expect(await ok(c, 'v1.PF5.UserGetByGroup', { params: { mask: 'REAL\\*' } })).toEqual([]);
    await refuses(c, 'v1.PF5.UserGetByGroup', 'mask', { params: { mask: 'x'.repeat(1025) } });
  });
});

describe('v1.PF5.UserAdd', () => {
  const person = { group: 'demo\\retail', leverage: 100, firstName: 'Ada', lastName: 'Lovelace' };

  it('allocates the next login of the server range when login is absent, 0 or null, and answers the new account', async () => {
    const max = Math.max(...((await sim.ok<Row>('UsersRequest', {})).items as Row[]).map((u) => u.login as number));
    const first = await ok<Row>(c, 'v1.PF5.UserAdd', {
      body: { ...person, comment: 'first', password: 'Secret12ab', passwordInvestor: 'Viewer12ab' },
    });
    expect(first.login).toBe(max + 1);
    expect(first).toEqual(shapeUser(await sim.ok('UserGet', { login: first.login })));
    expect(first).toMatchObject({
      group: 'demo\\retail',
      leverage: 100,
      firstName: 'Ada',
      lastName: 'Lovelace',
      name: 'Ada Lovelace',
      comment: 'first',
      balance: 0,
    });
    expect(JSON.stringify(first)).not.toContain('Secret12ab');
    const second = await ok<Row>(c, 'v1.PF5.UserAdd', { body: { ...person, login: 0 } });
    const third = await ok<Row>(c, 'v1.PF5.UserAdd', {
      body: { ...person, login: null, certSerialNumber: null, registration: null },
    });
    expect([second.login, third.login]).toEqual([max + 2, max + 3]);
    // The given passwords are the account's.
    expect(await sim.ok('UserPasswordCheck', { login: first.login, password: 'Secret12ab', type: 'Main' })).toBe(true);
    expect(await sim.ok('UserPasswordCheck', { login: first.login, password: 'Viewer12ab', type: 'Investor' })).toBe(
      true,
    );
    // The change event reaches the cache.
    const cached = await eventually(
      async () => (await call<Row>(c, 'v1.PF5.UserGet', { params: { login: third.login } })).status === 200,
    );
    expect(cached).toBe(true);
  });

  it('takes a login of the server range that is free', async () => {
    const users = ((await sim.ok<Row>('UsersRequest', {})).items as Row[]).map((u) => u.login as number);
    let login = 600_000;
    while (users.includes(login)) login++;
    const created = await ok<Row>(c, 'v1.PF5.UserAdd', { body: { ...person, login, lastName: '' } });
    expect(created).toMatchObject({ login, name: 'Ada' });
    expect((await sim.ok<Row>('UserGet', { login })).firstName).toBe('Ada');
  });

  it('generates both passwords when one is missing or empty: a given one alone is not used', async () => {
    const created = await ok<Row>(c, 'v1.PF5.UserAdd', { body: { ...person, password: 'Secret12ab' } });
    expect(
      (await sim.fails('UserPasswordCheck', { login: created.login, password: 'Secret12ab', type: 'Main' })).message,
    ).toContain('invalid');
    const emptied = await ok<Row>(c, 'v1.PF5.UserAdd', {
      body: { ...person, password: 'Secret12ab', passwordInvestor: '' },
    });
    expect(
      (await sim.fails('UserPasswordCheck', { login: emptied.login, password: 'Secret12ab', type: 'Main' })).message,
    ).toContain('invalid');
  });

  it("fails after 10 generated pairs the group's password rule rejects, creating nothing", async () => {
    const group = 'demo\\netting';
    const before = ((await sim.ok<Row>('UsersRequest', {})).items as Row[]).length;
    await sim.ok('GroupRecord', { group, patch: { authPasswordMin: 16 } });
    try {
      const message = await pf5Refuses('v1.PF5.UserAdd', 'UsrInvalidPassword', { body: { ...person, group } });
      expect(message).toContain('10 attempts');
    } finally {
      await sim.ok('GroupRecord', { group, patch: { authPasswordMin: 8 } });
    }
    expect(((await sim.ok<Row>('UsersRequest', {})).items as Row[]).length).toBe(before);
    // Given passwords must pass the rule too.
    await pf5Refuses('v1.PF5.UserAdd', 'UsrInvalidPassword', {
      body: { ...person, password: 'short', passwordInvestor: 'Viewer12ab' },
    });
  });

  it("answers the platform's codes: an existing login UsrLoginExist, another server's UsrLoginProhibited, an incorrect record ErrParams", async () => {
    const existing = await quietLogin();
    expect(await pf5Refuses('v1.PF5.UserAdd', 'UsrLoginExist', { body: { ...person, login: existing } })).toContain(
      String(existing),
    );
    expect(await pf5Refuses('v1.PF5.UserAdd', 'UsrLoginProhibited', { body: { ...person, login: 100 } })).toContain(
      'another trade server',
    );
    expect(await pf5Refuses('v1.PF5.UserAdd', 'ErrParams', { body: { ...person, group: 'demo\\nowhere' } })).toContain(
      'record.group',
    );
    expect(await sim.fails('UserGet', { login: 100 })).toMatchObject({ message: 'login 100 not found' });
  });

  it('refuses a record without group, leverage or a name, with unknown or server fields, naming the field', async () => {
    const { group: _g, ...noGroup } = person;
    const { leverage: _l, ...noLeverage } = person;
    await refuses(c, 'v1.PF5.UserAdd', 'body.group', { body: noGroup });
    await refuses(c, 'v1.PF5.UserAdd', 'body.group', { body: { ...person, group: '' } });
    await refuses(c, 'v1.PF5.UserAdd', 'body.leverage', { body: noLeverage });
    await refuses(c, 'v1.PF5.UserAdd', 'body.leverage', { body: { ...person, leverage: 0 } });
    await refuses(c, 'v1.PF5.UserAdd', 'body.firstName', { body: { ...person, firstName: ' ', lastName: null } });
    await refuses(c, 'v1.PF5.UserAdd', 'balance', { body: { ...person, balance: 1e6 } });
    await refuses(c, 'v1.PF5.UserAdd', 'nickname', { body: { ...person, nickname: 'x' } });
    await refuses(c, 'v1.PF5.UserAdd', 'body.login', { body: { ...person, login: -1 } });
    await refuses(c, 'v1.PF5.UserAdd', 'body.password', { body: { ...person, password: 12345 } });
    await refuses(c, 'v1.PF5.UserAdd', 'body', { rawBody: '{"group":' });
    await refuses(c, 'v1.PF5.UserAdd', 'body', {});
    const big = await refuses(c, 'v1.PF5.UserAdd', 'body.login', {
      rawBody: `{"group":"demo\\\\retail","leverage":100,"firstName":"Big","login":${BEYOND_INT64}}`,
    });
    expect(big).toContain('at most 9223372036854775807');
    // An exact login past 2^53 − 1 reaches the server: outside this server's range, as the server says.
    expect(
      await pf5Refuses('v1.PF5.UserAdd', 'UsrLoginProhibited', {
        rawBody: `{"group":"demo\\\\retail","leverage":100,"firstName":"Big","login":${BEYOND_2_53}}`,
      }),
    ).toContain(BEYOND_2_53);
  });
});

describe('v1.PF5.UserUpdate', () => {
  it("writes the fields given for the login the body names, keeps the server's figures, answers the account", async () => {
    const login = await quietLogin();
    const before = await sim.ok<Row>('UserGet', { login });
    const updated = await ok<Row>(c, 'v1.PF5.UserUpdate', {
      body: { login, comment: 'updated over v1', city: 'Paphos', balance: before.balance + 500 },
    });
    const now = await sim.ok<Row>('UserGet', { login });
    expect(now).toMatchObject({ comment: 'updated over v1', city: 'Paphos', balance: before.balance });
    expect(without(now, 'comment', 'city')).toEqual(without(before, 'comment', 'city'));
    expect(updated).toEqual(shapeUser(now));
    const cached = await eventually(async () => {
      const u = await ok<Row>(c, 'v1.PF5.UserGet', { params: { login } });
      return u.comment === 'updated over v1' ? u : null;
    });
    expect(cached).toEqual(updated);
  });

  it('refuses a body without a login or with an unknown field; passes the server refusals on', async () => {
    const login = await quietLogin();
    await refuses(c, 'v1.PF5.UserUpdate', 'body.login', { body: { comment: 'x' } });
    await refuses(c, 'v1.PF5.UserUpdate', 'body.login', { body: { login: 0, comment: 'x' } });
    await refuses(c, 'v1.PF5.UserUpdate', 'nickname', { body: { login, nickname: 'x' } });
    await refuses(c, 'v1.PF5.UserUpdate', 'body.leverage', { body: { login, leverage: 'high' } });
    expect(await pf5Refuses('v1.PF5.UserUpdate', 'ErrParams', { body: { login, group: null } })).toContain(
      'record.group',
    );
    expect(await pf5Refuses('v1.PF5.UserUpdate', 'ErrParams', { body: { login, group: 'demo\\nowhere' } })).toContain(
      'record.group',
    );
    await pf5Refuses('v1.PF5.UserUpdate', 'ErrNotfound', { body: { login: 999_999_995, comment: 'x' } });
  });
});

describe('v1.PF5.UserPasswordCheck', () => {
  it("answers true for the main and the investor password (a JSON string body), the platform's refusal otherwise", async () => {
    const login = await quietLogin();
    expect(await ok(c, 'v1.PF5.UserPasswordCheck', { params: { login, type: 'Main' }, body: `Demo${login}a` })).toBe(
      true,
    );
    expect(
      await ok(c, 'v1.PF5.UserPasswordCheck', { params: { login, type: 'Investor' }, body: `View${login}a` }),
    ).toBe(true);
    await pf5Refuses('v1.PF5.UserPasswordCheck', 'UsrInvalidPassword', {
      params: { login, type: 'Main' },
      body: `View${login}a`,
    });
    await pf5Refuses('v1.PF5.UserPasswordCheck', 'UsrInvalidPassword', {
      params: { login: 999_999_994, type: 'Main' },
      body: 'Whatever1a',
    });
  });

  it('refuses a password that is not a JSON string, an empty one and an unknown password type', async () => {
    const login = await quietLogin();
    await refuses(c, 'v1.PF5.UserPasswordCheck', 'body', { params: { login, type: 'Main' }, body: 12345 });
    await refuses(c, 'v1.PF5.UserPasswordCheck', 'body', { params: { login, type: 'Main' }, rawBody: 'Demo1a' });
    await refuses(c, 'v1.PF5.UserPasswordCheck', 'body', { params: { login, type: 'Main' }, body: '' });
    await refuses(c, 'v1.PF5.UserPasswordCheck', 'type', { params: { login, type: 'Phone' }, body: 'x' });
    await refuses(c, 'v1.PF5.UserPasswordCheck', 'login', { params: { login: BEYOND_INT64, type: 'Main' }, body: 'x' });
  });
});

describe('v1.PF5.UserPasswordChange', () => {
  it('sets the main or investor password (a JSON string body): the new one checks, the old one no longer', async () => {
    const login = await quietLogin();
    const before = await sim.ok<Row>('UserGet', { login });
    expect(await ok(c, 'v1.PF5.UserPasswordChange', { params: { login, type: 'Investor' }, body: 'NewView123x' })).toBe(
      true,
    );
    expect(await sim.ok('UserPasswordCheck', { login, password: 'NewView123x', type: 'Investor' })).toBe(true);
    await sim.fails('UserPasswordCheck', { login, password: `View${login}a`, type: 'Investor' });
    expect(await sim.ok('UserPasswordCheck', { login, password: `Demo${login}a`, type: 'Main' })).toBe(true);
    expect(Date.parse((await sim.ok<Row>('UserGet', { login })).lastPassChange)).toBeGreaterThan(
      Date.parse(before.lastPassChange),
    );
    expect(await ok(c, 'v1.PF5.UserPasswordChange', { params: { login, type: 'Main' }, body: 'NewMain123x' })).toBe(
      true,
    );
    expect(await sim.ok('UserPasswordCheck', { login, password: 'NewMain123x', type: 'Main' })).toBe(true);
  });

  it("passes the group's password rule on and refuses bad input, naming the field", async () => {
    const login = await quietLogin();
    expect(
      await pf5Refuses('v1.PF5.UserPasswordChange', 'UsrInvalidPassword', {
        params: { login, type: 'Main' },
        body: 'weak',
      }),
    ).toContain('at least 8');
    expect(await sim.ok('UserPasswordCheck', { login, password: `Demo${login}a`, type: 'Main' })).toBe(true);
    await pf5Refuses('v1.PF5.UserPasswordChange', 'ErrNotfound', {
      params: { login: 999_999_993, type: 'Main' },
      body: 'Strong123x',
    });
    await refuses(c, 'v1.PF5.UserPasswordChange', 'body', { params: { login, type: 'Main' }, body: ['Strong123x'] });
    await refuses(c, 'v1.PF5.UserPasswordChange', 'type', { params: { login, type: 'Master' }, body: 'Strong123x' });
    await refuses(c, 'v1.PF5.UserPasswordChange', 'login', { params: { login: 0, type: 'Main' }, body: 'Strong123x' });
  });
});

// ---- Positions -------------------------------------------------------------------------------------------------------

describe('v1.PF5.PositionGet', () => {
  it("answers the account's open positions from the cache; a hedging account's positions in one symbol each by its ticket", async () => {
    const login = await quietLogin();
    const first = await buy(login);
    const second = await buy(login);
    const third = await buy(login, 'GBPUSD', 'Sell');
    expect(new Set([first.position, second.position, third.position]).size).toBe(3);
    const positions = await eventually(async () => {
      const p = await ok<Row[]>(c, 'v1.PF5.PositionGet', { params: { login } });
      return p.length === 3 ? p : null;
    });
    expect(keysOf(positions!, 'position')).toEqual([first.position, second.position, third.position]);
    expect(positions!.filter((p) => p.symbol === 'EURUSD').map((p) => p.position)).toEqual([
      first.position,
      second.position,
    ]);
    const server = await sim.ok<Row[]>('PositionGet', { login });
    expect(positions!.map(stable)).toEqual(server.map((p) => stable(shapePosition(p))));
    expect(await ok(c, 'v1.PF5.PositionGet', { params: { login: 999_999_992 } })).toEqual([]);
    await refuses(c, 'v1.PF5.PositionGet', 'login', { params: { login: BEYOND_INT64 } });
    expect(await ok(c, 'v1.PF5.PositionGet', { params: { login: BEYOND_2_53 } })).toEqual([]);
  });
});

describe('v1.PF5.PositionGetByLogins', () => {
  it("answers the accounts' positions from the cache, account by account in the order asked", async () => {
    const [a, b] = [await quietLogin(), await quietLogin()];
    const pa = await buy(a);
    const pb1 = await buy(b, 'USDJPY');
    const pb2 = await buy(b, 'EURUSD', 'Sell');
    const positions = await eventually(async () => {
      const p = await ok<Row[]>(c, 'v1.PF5.PositionGetByLogins', { query: { logins: [b, a, 999_999_991, b] } });
      return p.length === 3 ? p : null;
    });
    expect(keysOf(positions!, 'position')).toEqual([pb1.position, pb2.position, pa.position]);
    const server = await sim.ok<Row[]>('PositionGetByTickets', { tickets: [pb1.position, pb2.position, pa.position] });
    expect(positions!.map(stable)).toEqual(server.map((p) => stable(shapePosition(p))));
    await refuses(c, 'v1.PF5.PositionGetByLogins', 'logins', {});
    await refuses(c, 'v1.PF5.PositionGetByLogins', 'logins', { query: { logins: ['0'] } });
  });
});

describe('v1.PF5.PositionGetByTickets', () => {
  it('answers the open positions among the tickets from the cache, each once, in the order asked', async () => {
    const all = (await sim.ok<Row>('PositionsRequest', {})).items as Row[];
    const [t1, t2] = [all[3].position as number, all[10].position as number];
    const positions = await ok<Row[]>(c, 'v1.PF5.PositionGetByTickets', {
      query: { tickets: [t2, 999_999_990, t1, t2] },
    });
    expect(keysOf(positions, 'position')).toEqual([t2, t1]);
    const server = await sim.ok<Row[]>('PositionGetByTickets', { tickets: [t2, t1] });
    expect(positions.map(stable)).toEqual(server.map((p) => stable(shapePosition(p))));
    await refuses(c, 'v1.PF5.PositionGetByTickets', 'tickets', { query: { tickets: [BEYOND_INT64] } });
    await refuses(c, 'v1.PF5.PositionGetByTickets', 'tickets', {});
  });
});

describe('v1.PF5.PositionRequestByGroup', () => {
  it('reads the positions of the groups a mask selects live, as the server selects them', async () => {
    for (const mask of ['real\\*,!real\\pro', 'demo\\retail,real\\pro']) {
      const { got, server } = await againstServer(
        async () => keysOf(await ok<Row[]>(c, 'v1.PF5.PositionRequestByGroup', { params: { mask } }), 'position'),
        async () => keysOf(await sim.ok<Row[]>('PositionRequestByGroup', { mask }), 'position'),
      );
      expect(got, mask).toEqual(server);
      expect(got.length, mask).toBeGreaterThan(0);
    }
    const positions = await ok<Row[]>(c, 'v1.PF5.PositionRequestByGroup', { params: { mask: 'real\\*,!real\\pro' } });
    const groups = new Set(
      (await sim.ok<Row[]>('UserGetByLogins', { logins: [...new Set(positions.map((p) => p.login))] })).map(
        (u) => u.group,
      ),
    );
    expect([...groups]).toEqual(['real\\retail']);
    expect(await ok(c, 'v1.PF5.PositionRequestByGroup', { params: { mask: 'nobody' } })).toEqual([]);
  });
});

describe('v1.PF5.PositionGetBySymbol', () => {
  it("selects cached positions by the account's group and a list of symbols, as the server does", async () => {
    for (const [mask, symbol] of [
      ['*,!demo\\*', 'EURUSD,XAUUSD,BTCUSD'],
      ['demo\\*', 'EURUSD'],
      ['real\\pro', ' GBPUSD , ,USDJPY'],
    ]) {
      const { got, server } = await againstServer(
        async () => keysOf(await ok<Row[]>(c, 'v1.PF5.PositionGetBySymbol', { params: { mask, symbol } }), 'position'),
        async () => ascending(keysOf(await sim.ok<Row[]>('PositionGetBySymbol', { mask, symbol }), 'position')),
      );
      expect(got, `${mask} ${symbol}`).toEqual(server);
      expect(got.length, `${mask} ${symbol}`).toBeGreaterThan(0);
    }
    const rows = await ok<Row[]>(c, 'v1.PF5.PositionGetBySymbol', { params: { mask: '*', symbol: 'EURUSD,XAUUSD' } });
    expect(new Set(rows.map((r) => r.symbol))).toEqual(new Set(['EURUSD', 'XAUUSD']));
    expect(await ok(c, 'v1.PF5.PositionGetBySymbol', { params: { mask: '*', symbol: 'NOPE' } })).toEqual([]);
    await refuses(c, 'v1.PF5.PositionGetBySymbol', 'symbol', { params: { mask: '*', symbol: ' , ' } });
  });
});

describe('v1.PF5.PositionDeleteBatch', () => {
  it('deletes the positions, leaving deals and balances; the cache follows', async () => {
    const login = await quietLogin();
    const [p1, p2] = [await buy(login), await buy(login, 'USDCHF')];
    const balance = (await sim.ok<Row>('UserGet', { login })).balance;
    const deals = await sim.ok<Row[]>('DealRequest', { login });
    expect(await ok(c, 'v1.PF5.PositionDeleteBatch', { body: [p1.position, p2.position] })).toBe(true);
    expect(await sim.ok('PositionGet', { login })).toEqual([]);
    expect(await sim.ok('DealRequest', { login })).toEqual(deals);
    expect((await sim.ok<Row>('UserGet', { login })).balance).toBe(balance);
    expect(
      await eventually(async () => (await ok<Row[]>(c, 'v1.PF5.PositionGet', { params: { login } })).length === 0),
    ).toBe(true);
  });

  it('deletes nothing when one position was created on another trade server (ErrNotMain) or is unknown (ErrNotfound)', async () => {
    const login = await quietLogin();
    const mine = await buy(login);
    const foreign = await foreignPosition();
    expect(
      await pf5Refuses('v1.PF5.PositionDeleteBatch', 'ErrNotMain', { body: [mine.position, foreign.position] }),
    ).toContain(String(foreign.position));
    expect(
      await pf5Refuses('v1.PF5.PositionDeleteBatch', 'ErrNotfound', { body: [mine.position, 999_999_989] }),
    ).toContain('999999989');
    expect(
      keysOf(await sim.ok<Row[]>('PositionGetByTickets', { tickets: [mine.position, foreign.position] }), 'position'),
    ).toEqual([mine.position, foreign.position]);
  });

  it('refuses a body that is not a non-empty JSON array of tickets, naming it', async () => {
    await refuses(c, 'v1.PF5.PositionDeleteBatch', 'body', { body: [] });
    await refuses(c, 'v1.PF5.PositionDeleteBatch', 'body', { body: { tickets: [1] } });
    await refuses(c, 'v1.PF5.PositionDeleteBatch', 'body.1', { body: [1000000, 'x'] });
    await refuses(c, 'v1.PF5.PositionDeleteBatch', 'body.0', { body: [0] });
    await refuses(c, 'v1.PF5.PositionDeleteBatch', 'body.0', { body: [1.5] });
    expect(await refuses(c, 'v1.PF5.PositionDeleteBatch', 'body.0', { rawBody: `[${BEYOND_INT64}]` })).toContain(
      'at most 9223372036854775807',
    );
    expect(await pf5Refuses('v1.PF5.PositionDeleteBatch', 'ErrNotfound', { rawBody: `[${BEYOND_2_53}]` })).toContain(
      BEYOND_2_53,
    );
    await refuses(c, 'v1.PF5.PositionDeleteBatch', 'body', {});
  });
});

// ---- Orders ----------------------------------------------------------------------------------------------------------

describe('v1.PF5.OrderGet', () => {
  it('answers an open order from the cache; 404 for a ticket that is not an open order', async () => {
    const [first] = (await sim.ok<Row>('OrdersRequest', { limit: 1 })).items as Row[];
    const order = await ok<Row>(c, 'v1.PF5.OrderGet', { params: { ticket: first.order } });
    expect(stable(order)).toEqual(stable(shapeOrder(await sim.ok('OrderGet', { ticket: first.order }))));
    await pf5Refuses('v1.PF5.OrderGet', 'ErrNotfound', { params: { ticket: 999_999_988 } });
    await refuses(c, 'v1.PF5.OrderGet', 'ticket', { params: { ticket: BEYOND_INT64 } });
    expect(await pf5Refuses('v1.PF5.OrderGet', 'ErrNotfound', { params: { ticket: BEYOND_2_53 } })).toContain(
      BEYOND_2_53,
    );
    await refuses(c, 'v1.PF5.OrderGet', 'ticket', { params: { ticket: 'first' } });
  });
});

describe('v1.PF5.OrderGetByGroup', () => {
  it("selects the cached open orders by the account's group, as the server does", async () => {
    for (const mask of ['*', 'real\\*,!real\\pro', 'demo\\retail,real\\pro']) {
      const { got, server } = await againstServer(
        async () => keysOf(await ok<Row[]>(c, 'v1.PF5.OrderGetByGroup', { params: { mask } }), 'order'),
        async () => ascending(keysOf(await sim.ok<Row[]>('OrderRequestByGroup', { mask }), 'order')),
      );
      expect(got, mask).toEqual(server);
      expect(got.length, mask).toBeGreaterThan(0);
    }
    expect(await ok(c, 'v1.PF5.OrderGetByGroup', { params: { mask: 'real' } })).toEqual([]);
  });
});

describe('v1.PF5.OrderGetBySymbol', () => {
  it("selects the cached open orders by the account's group and a list of symbols, as the server does", async () => {
    const symbols = (await sim.ok<Row[]>('SymbolsRequest')).map((s) => s.symbol as string);
    const list = symbols.slice(0, 6).join(',');
    for (const mask of ['*', 'real\\*']) {
      const { got, server } = await againstServer(
        async () => keysOf(await ok<Row[]>(c, 'v1.PF5.OrderGetBySymbol', { params: { mask, symbol: list } }), 'order'),
        async () => ascending(keysOf(await sim.ok<Row[]>('OrderGetBySymbol', { mask, symbol: list }), 'order')),
      );
      expect(got, mask).toEqual(server);
      expect(got.length, mask).toBeGreaterThan(0);
    }
    await refuses(c, 'v1.PF5.OrderGetBySymbol', 'symbol', { params: { mask: '*', symbol: ',' } });
  });
});

describe('v1.PF5.OrderGetByLogins', () => {
  it("answers the accounts' open orders from the cache, account by account in the order asked", async () => {
    const [a, b] = [await quietLogin(), await quietLogin()];
    const oa = await pendingOrder(a);
    const ob = await pendingOrder(b, 'XAUUSD');
    const orders = await eventually(async () => {
      const o = await ok<Row[]>(c, 'v1.PF5.OrderGetByLogins', { query: { logins: [b, a] } });
      return o.length === 2 ? o : null;
    });
    expect(keysOf(orders!, 'order')).toEqual([ob, oa]);
    expect(orders!.map(stable)).toEqual(
      (await sim.ok<Row[]>('OrderGetByTickets', { tickets: [ob, oa] })).map((o) => stable(shapeOrder(o))),
    );
    await refuses(c, 'v1.PF5.OrderGetByLogins', 'logins', { query: { logins: [BEYOND_INT64] } });
  });
});

describe('v1.PF5.OrderGetByTickets', () => {
  it('answers the open orders among the tickets from the cache, each once, in the order asked', async () => {
    const orders = (await sim.ok<Row>('OrdersRequest', {})).items as Row[];
    const [t1, t2] = [orders[1].order as number, orders[5].order as number];
    const got = await ok<Row[]>(c, 'v1.PF5.OrderGetByTickets', { query: { tickets: [t2, t1, 999_999_987, t1] } });
    expect(keysOf(got, 'order')).toEqual([t2, t1]);
    await refuses(c, 'v1.PF5.OrderGetByTickets', 'tickets', { query: { tickets: ['-1'] } });
  });
});

describe('v1.PF5.OrderRequestByGroup', () => {
  it('reads the open orders of the groups a mask selects live, as the server selects them', async () => {
    for (const mask of ['real\\*,!real\\pro', 'demo\\*']) {
      const { got, server } = await againstServer(
        () => ok<Row[]>(c, 'v1.PF5.OrderRequestByGroup', { params: { mask } }).then((r) => keysOf(r, 'order')),
        () => sim.ok<Row[]>('OrderRequestByGroup', { mask }).then((r) => keysOf(r, 'order')),
      );
      expect(got, mask).toEqual(server);
      expect(got.length, mask).toBeGreaterThan(0);
    }
    await refuses(c, 'v1.PF5.OrderRequestByGroup', 'mask', { params: { mask: 'm'.repeat(1025) } });
  });
});

describe('v1.PF5.OrderRequestByGroupSymbol', () => {
  it('reads the open orders in the listed symbols of the groups a mask selects live, as the server selects them', async () => {
    const list = (await sim.ok<Row[]>('SymbolsRequest'))
      .map((s) => s.symbol as string)
      .slice(4)
      .join(',');
    const { got, server } = await againstServer(
      () => ok<Row[]>(c, 'v1.PF5.OrderRequestByGroupSymbol', { params: { mask: '*,!real\\pro', symbol: list } }),
      () => sim.ok<Row[]>('OrderRequestByGroupSymbol', { mask: '*,!real\\pro', symbol: list }),
      (a, b) => JSON.stringify(keysOf(a, 'order')) === JSON.stringify(keysOf(b, 'order')),
    );
    expect(keysOf(got, 'order')).toEqual(keysOf(server, 'order'));
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((o) => list.split(',').includes(o.symbol))).toBe(true);
    await refuses(c, 'v1.PF5.OrderRequestByGroupSymbol', 'symbol', { params: { mask: '*', symbol: 's'.repeat(1025) } });
  });
});

describe('v1.PF5.OrderRequestByTickets', () => {
  it('reads the open orders among a JSON array of tickets live', async () => {
    const orders = (await sim.ok<Row>('OrdersRequest', {})).items as Row[];
    const tickets = [orders[2].order as number, 999_999_986, orders[0].order as number];
    const got = await ok<Row[]>(c, 'v1.PF5.OrderRequestByTickets', { body: tickets });
    expect(got.map(stable)).toEqual(
      (await sim.ok<Row[]>('OrderRequestByTickets', { tickets })).map((o) => stable(shapeOrder(o))),
    );
    expect(keysOf(got, 'order')).toEqual([orders[2].order, orders[0].order]);
    await refuses(c, 'v1.PF5.OrderRequestByTickets', 'body', { body: 'all' });
  });
});

/** The trading server's time once its clock has passed `time` (ms): what comes after then is strictly later. */
async function serverClockPast(time: number): Promise<number> {
  let now = Date.parse(await sim.ok<string>('ServerTime'));
  expect(await eventually(async () => (now = Date.parse(await sim.ok<string>('ServerTime'))) > time, 5000, 2)).toBe(
    true,
  );
  return now;
}

/** An account with finished orders: a filled market order, a cancelled pending one; answers their tickets and times. */
async function accountWithHistory(group?: string) {
  const login = await quietLogin(group);
  const start = Date.parse(await sim.ok<string>('ServerTime'));
  const filled = await buy(login, 'EURUSD');
  const middle = await serverClockPast(Date.parse(await sim.ok<string>('ServerTime')));
  await serverClockPast(middle);
  const pending = await pendingOrder(login, 'GBPUSD');
  await sim.ok('DealerCancel', { order: pending });
  const end = Date.parse(await sim.ok<string>('ServerTime'));
  return { login, filled: filled.order, cancelled: pending, deal: filled.deal, start, middle, end };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('v1.PF5.HistoryRequest', () => {
  it("reads the account's finished orders in a window, from a time on, and over all time, as the server does", async () => {
    const h = await accountWithHistory();
    const all = await ok<Row[]>(c, 'v1.PF5.HistoryRequestAll', { params: { login: h.login } });
    expect(keysOf(all, 'order')).toEqual([h.filled, h.cancelled]);
    expect(all).toEqual((await sim.ok<Row[]>('HistoryRequest', { login: h.login })).map(shapeOrder));
    expect(all.map((o) => o.state)).toEqual(['Filled', 'Canceled']);
    const since = await ok<Row[]>(c, 'v1.PF5.HistoryRequestSince', {
      params: { login: h.login, fromTime: iso(h.middle) },
    });
    expect(keysOf(since, 'order')).toEqual([h.cancelled]);
    const window = await ok<Row[]>(c, 'v1.PF5.HistoryRequest', {
      params: { login: h.login, fromTime: iso(h.start), toTime: iso(h.middle) },
    });
    expect(keysOf(window, 'order')).toEqual([h.filled]);
    expect(
      await ok(c, 'v1.PF5.HistoryRequest', {
        params: { login: h.login, fromTime: EPOCH, toTime: iso(h.start - 1000) },
      }),
    ).toEqual([]);
    // An offset time is the same instant.
    const offset = new Date(h.middle).toISOString().replace('Z', '+00:00');
    expect(
      keysOf(
        await ok<Row[]>(c, 'v1.PF5.HistoryRequestSince', { params: { login: h.login, fromTime: offset } }),
        'order',
      ),
    ).toEqual([h.cancelled]);
  });

  it('refuses a time that is not ISO 8601 and a window ending before it starts, naming the field', async () => {
    await refuses(c, 'v1.PF5.HistoryRequestSince', 'fromTime', { params: { login: 500000, fromTime: 'yesterday' } });
    await refuses(c, 'v1.PF5.HistoryRequest', 'toTime', {
      params: { login: 500000, fromTime: '2025-01-02T00:00:00Z', toTime: '2025-01-01T00:00:00Z' },
    });
    await refuses(c, 'v1.PF5.HistoryRequest', 'toTime', {
      params: { login: 500000, fromTime: '2025-01-02T00:00:00Z', toTime: '13' },
    });
    await refuses(c, 'v1.PF5.HistoryRequestAll', 'login', { params: { login: BEYOND_INT64 } });
  });
});

describe('v1.PF5.HistoryRequestByGroup', () => {
  it('reads the finished orders of the groups a mask selects, in a window, from a time on and over all time', async () => {
    const h = await accountWithHistory('real\\retail');
    const mask = 'real\\*,!real\\pro';
    const all = await ok<Row[]>(c, 'v1.PF5.HistoryRequestByGroupAll', { params: { mask } });
    expect(keysOf(all, 'order')).toEqual(keysOf(await sim.ok<Row[]>('HistoryRequestByGroup', { mask }), 'order'));
    expect(keysOf(all, 'order')).toEqual(expect.arrayContaining([h.filled, h.cancelled]));
    const since = await ok<Row[]>(c, 'v1.PF5.HistoryRequestByGroupSince', {
      params: { mask, fromTime: iso(h.middle) },
    });
    expect(keysOf(since, 'order')).toEqual(
      keysOf(await sim.ok<Row[]>('HistoryRequestByGroup', { mask, fromTime: iso(h.middle) }), 'order'),
    );
    expect(keysOf(since, 'order')).toContain(h.cancelled);
    expect(keysOf(since, 'order')).not.toContain(h.filled);
    const window = await ok<Row[]>(c, 'v1.PF5.HistoryRequestByGroup', {
      params: { mask, fromTime: iso(h.start), toTime: iso(h.middle) },
    });
    expect(keysOf(window, 'order')).toContain(h.filled);
    expect(keysOf(window, 'order')).not.toContain(h.cancelled);
    expect(
      await ok(c, 'v1.PF5.HistoryRequestByGroup', {
        params: { mask: 'real\\pro', fromTime: iso(h.start), toTime: iso(h.end) },
      }),
    ).toEqual(
      (
        await sim.ok<Row[]>('HistoryRequestByGroup', { mask: 'real\\pro', fromTime: iso(h.start), toTime: iso(h.end) })
      ).map(shapeOrder),
    );
    await refuses(c, 'v1.PF5.HistoryRequestByGroupSince', 'fromTime', {
      params: { mask, fromTime: '2025-13-01T00:00:00Z' },
    });
  });
});

describe('v1.PF5.HistoryRequestByTickets', () => {
  it('reads the finished orders among a JSON array of tickets live', async () => {
    const h = await accountWithHistory();
    const got = await ok<Row[]>(c, 'v1.PF5.HistoryRequestByTickets', { body: [h.cancelled, 999_999_985, h.filled] });
    expect(got).toEqual(
      (await sim.ok<Row[]>('HistoryRequestByTickets', { tickets: [h.cancelled, h.filled] })).map(shapeOrder),
    );
    expect(keysOf(got, 'order')).toEqual([h.cancelled, h.filled]);
    await refuses(c, 'v1.PF5.HistoryRequestByTickets', 'body.0', { body: [null] });
  });
});

describe('v1.PF5.OrderDeleteBatch', () => {
  it('deletes open and finished orders; the cache follows', async () => {
    const login = await quietLogin();
    const [o1, o2] = [await pendingOrder(login), await pendingOrder(login, 'AUDUSD')];
    const filled = (await buy(login)).order;
    expect(await ok(c, 'v1.PF5.OrderDeleteBatch', { body: [o1, o2, filled] })).toBe(true);
    expect(await sim.ok('OrderGetByTickets', { tickets: [o1, o2] })).toEqual([]);
    expect(await sim.ok('HistoryRequestByTickets', { tickets: [filled] })).toEqual([]);
    expect(
      await eventually(
        async () => (await ok<Row[]>(c, 'v1.PF5.OrderGetByLogins', { query: { logins: [login] } })).length === 0,
      ),
    ).toBe(true);
    await pf5Refuses('v1.PF5.OrderGet', 'ErrNotfound', { params: { ticket: o1 } });
  });

  it('deletes nothing when one order was created on another trade server (ErrNotMain) or is unknown (ErrNotfound)', async () => {
    const login = await quietLogin();
    const mine = await pendingOrder(login);
    const foreign = ((await sim.ok<Row>('OrdersRequest', {})).items as Row[]).find((o) =>
      String(o.externalID).startsWith('TS2:'),
    )!;
    expect(foreign).toBeDefined();
    expect(await pf5Refuses('v1.PF5.OrderDeleteBatch', 'ErrNotMain', { body: [mine, foreign.order] })).toContain(
      String(foreign.order),
    );
    await pf5Refuses('v1.PF5.OrderDeleteBatch', 'ErrNotfound', { body: [999_999_984, mine] });
    expect(keysOf(await sim.ok<Row[]>('OrderGetByTickets', { tickets: [mine, foreign.order] }), 'order')).toEqual([
      mine,
      foreign.order,
    ]);
    await refuses(c, 'v1.PF5.OrderDeleteBatch', 'body', { body: [] });
  });
});

// ---- Deals -----------------------------------------------------------------------------------------------------------

/** An account with three deals at known times: the opening deposit, a fill in EURUSD and a fill in GBPUSD. */
async function accountWithDeals(group?: string) {
  const login = await quietLogin(group);
  const start = Date.parse(await sim.ok<string>('ServerTime'));
  const eur = await buy(login, 'EURUSD');
  const middle = await serverClockPast(Date.parse(await sim.ok<string>('ServerTime')));
  await serverClockPast(middle);
  const gbp = await buy(login, 'GBPUSD');
  const end = Date.parse(await sim.ok<string>('ServerTime'));
  const deposit = (await sim.ok<Row[]>('DealRequest', { login }))[0].deal as number;
  return { login, deposit, eur: eur.deal, gbp: gbp.deal, start, middle, end };
}

describe('v1.PF5.DealRequest', () => {
  it("reads the account's deals in a window, from a time on, and over all time, as the server does", async () => {
    const d = await accountWithDeals();
    const all = await ok<Row[]>(c, 'v1.PF5.DealRequestAll', { params: { login: d.login } });
    expect(keysOf(all, 'deal')).toEqual([d.deposit, d.eur, d.gbp]);
    expect(all).toEqual((await sim.ok<Row[]>('DealRequest', { login: d.login })).map(shapeDeal));
    expect(
      keysOf(
        await ok<Row[]>(c, 'v1.PF5.DealRequestSince', { params: { login: d.login, fromTime: iso(d.middle) } }),
        'deal',
      ),
    ).toEqual([d.gbp]);
    expect(
      keysOf(
        await ok<Row[]>(c, 'v1.PF5.DealRequest', {
          params: { login: d.login, fromTime: iso(d.start), toTime: iso(d.middle) },
        }),
        'deal',
      ),
    ).toEqual([d.eur]);
    expect(
      keysOf(
        await ok<Row[]>(c, 'v1.PF5.DealRequest', {
          params: { login: d.login, fromTime: EPOCH, toTime: iso(d.start - 1) },
        }),
        'deal',
      ),
    ).toEqual([d.deposit]);
    await refuses(c, 'v1.PF5.DealRequest', 'toTime', {
      params: { login: d.login, fromTime: iso(d.end), toTime: iso(d.start) },
    });
    await refuses(c, 'v1.PF5.DealRequestSince', 'fromTime', { params: { login: d.login, fromTime: '1700000000' } });
  });
});

describe('v1.PF5.DealRequestByGroup', () => {
  it('reads the deals of the groups a mask selects, in a window, from a time on and over all time, as the server does', async () => {
    const d = await accountWithDeals('real\\retail');
    const mask = 'real\\*,!real\\pro';
    const all = await ok<Row[]>(c, 'v1.PF5.DealRequestByGroupAll', { params: { mask } });
    expect(keysOf(all, 'deal')).toEqual(keysOf(await sim.ok<Row[]>('DealRequestByGroup', { mask }), 'deal'));
    expect(keysOf(all, 'deal')).toEqual(expect.arrayContaining([d.deposit, d.eur, d.gbp]));
    const since = await ok<Row[]>(c, 'v1.PF5.DealRequestByGroupSince', { params: { mask, fromTime: iso(d.middle) } });
    expect(keysOf(since, 'deal')).toEqual(
      keysOf(await sim.ok<Row[]>('DealRequestByGroup', { mask, fromTime: iso(d.middle) }), 'deal'),
    );
    expect(keysOf(since, 'deal')).toContain(d.gbp);
    expect(keysOf(since, 'deal')).not.toContain(d.eur);
    const window = await ok<Row[]>(c, 'v1.PF5.DealRequestByGroup', {
      params: { mask, fromTime: iso(d.start), toTime: iso(d.middle) },
    });
    expect(window).toEqual(
      (await sim.ok<Row[]>('DealRequestByGroup', { mask, fromTime: iso(d.start), toTime: iso(d.middle) })).map(
        shapeDeal,
      ),
    );
    expect(keysOf(window, 'deal')).toContain(d.eur);
    expect(await ok(c, 'v1.PF5.DealRequestByGroupAll', { params: { mask: 'nobody\\*' } })).toEqual([]);
    await refuses(c, 'v1.PF5.DealRequestByGroupSince', 'fromTime', { params: { mask, fromTime: 'now' } });
    await refuses(c, 'v1.PF5.DealRequestByGroup', 'toTime', {
      params: { mask, fromTime: iso(d.middle), toTime: iso(d.start) },
    });
  });
});

describe('v1.PF5.DealRequestByGroupSymbol', () => {
  it('reads the deals in the listed symbols of the groups a mask selects, in a window, from a time on and over all time', async () => {
    const d = await accountWithDeals('real\\retail');
    const mask = 'real\\retail';
    const all = await ok<Row[]>(c, 'v1.PF5.DealRequestByGroupSymbolAll', { params: { mask, symbol: 'GBPUSD,EURUSD' } });
    expect(keysOf(all, 'deal')).toEqual(
      keysOf(await sim.ok<Row[]>('DealRequestByGroupSymbol', { mask, symbol: 'GBPUSD,EURUSD' }), 'deal'),
    );
    expect(keysOf(all, 'deal')).toEqual(expect.arrayContaining([d.eur, d.gbp]));
    expect(keysOf(all, 'deal')).not.toContain(d.deposit);
    expect(all.every((x) => x.symbol === 'EURUSD' || x.symbol === 'GBPUSD')).toBe(true);
    const since = await ok<Row[]>(c, 'v1.PF5.DealRequestByGroupSymbolSince', {
      params: { mask, symbol: 'EURUSD', fromTime: iso(d.start) },
    });
    expect(keysOf(since, 'deal')).toEqual([d.eur]);
    const window = await ok<Row[]>(c, 'v1.PF5.DealRequestByGroupSymbol', {
      params: { mask, symbol: 'GBPUSD', fromTime: iso(d.start), toTime: iso(d.end) },
    });
    expect(keysOf(window, 'deal')).toEqual([d.gbp]);
    await refuses(c, 'v1.PF5.DealRequestByGroupSymbolAll', 'symbol', { params: { mask, symbol: ',,' } });
    await refuses(c, 'v1.PF5.DealRequestByGroupSymbol', 'toTime', {
      params: { mask, symbol: 'EURUSD', fromTime: iso(d.end), toTime: iso(d.start) },
    });
  });
});

describe('v1.PF5.DealRequestByLogins', () => {
  it('reads the deals of repeated logins in a window, from a time on and over all time, as the server does', async () => {
    const [d, e] = [await accountWithDeals(), await accountWithDeals()];
    const logins = [e.login, d.login];
    const all = await ok<Row[]>(c, 'v1.PF5.DealRequestByLoginsAll', { query: { logins } });
    expect(all).toEqual((await sim.ok<Row[]>('DealRequestByLogins', { logins })).map(shapeDeal));
    expect(ascending(keysOf(all, 'deal'))).toEqual(ascending([d.deposit, d.eur, d.gbp, e.deposit, e.eur, e.gbp]));
    const since = await ok<Row[]>(c, 'v1.PF5.DealRequestByLoginsSince', {
      params: { fromTime: iso(d.middle) },
      query: { logins },
    });
    expect(since).toEqual(
      (await sim.ok<Row[]>('DealRequestByLogins', { logins, fromTime: iso(d.middle) })).map(shapeDeal),
    );
    expect(keysOf(since, 'deal')).toEqual(expect.arrayContaining([d.gbp, e.eur, e.gbp]));
    expect(keysOf(since, 'deal')).not.toContain(d.eur);
    const window = await ok<Row[]>(c, 'v1.PF5.DealRequestByLogins', {
      params: { fromTime: iso(d.start), toTime: iso(d.middle) },
      query: { logins },
    });
    expect(keysOf(window, 'deal')).toEqual([d.eur]);
    await refuses(c, 'v1.PF5.DealRequestByLoginsAll', 'logins', {});
    await refuses(c, 'v1.PF5.DealRequestByLogins', 'logins', {
      params: { fromTime: EPOCH, toTime: iso(d.end) },
      query: { logins: ['x'] },
    });
  });
});

describe('v1.PF5.DealRequestByTicket', () => {
  it('reads one deal live; 404 for an unknown ticket', async () => {
    const d = await accountWithDeals();
    expect(await ok(c, 'v1.PF5.DealRequestByTicket', { params: { ticket: d.eur } })).toEqual(
      shapeDeal(await sim.ok('DealRequestByTicket', { ticket: d.eur })),
    );
    await pf5Refuses('v1.PF5.DealRequestByTicket', 'ErrNotfound', { params: { ticket: 999_999_983 } });
    await refuses(c, 'v1.PF5.DealRequestByTicket', 'ticket', { params: { ticket: BEYOND_INT64 } });
    expect(
      await pf5Refuses('v1.PF5.DealRequestByTicket', 'ErrNotfound', { params: { ticket: BEYOND_2_53 } }),
    ).toContain(BEYOND_2_53);
  });
});

describe('v1.PF5.DealRequestByTickets', () => {
  it('reads the known deals among a JSON array of tickets live', async () => {
    const d = await accountWithDeals();
    const got = await ok<Row[]>(c, 'v1.PF5.DealRequestByTickets', { body: [d.gbp, 999_999_982, d.deposit] });
    expect(got).toEqual((await sim.ok<Row[]>('DealRequestByTickets', { tickets: [d.gbp, d.deposit] })).map(shapeDeal));
    expect(keysOf(got, 'deal')).toEqual([d.gbp, d.deposit]);
    await refuses(c, 'v1.PF5.DealRequestByTickets', 'body', { body: [] });
  });
});

describe('v1.PF5.DealRequestByTicketsQuery', () => {
  it('reads the known deals among repeated query tickets live (the GET form of DealRequestByTickets)', async () => {
    const d = await accountWithDeals();
    const got = await ok<Row[]>(c, 'v1.PF5.DealRequestByTicketsQuery', {
      query: { tickets: [d.eur, d.deposit, 999_999_981] },
    });
    expect(got).toEqual((await sim.ok<Row[]>('DealRequestByTickets', { tickets: [d.eur, d.deposit] })).map(shapeDeal));
    await refuses(c, 'v1.PF5.DealRequestByTicketsQuery', 'tickets', {});
    await refuses(c, 'v1.PF5.DealRequestByTicketsQuery', 'tickets', { query: { tickets: [BEYOND_INT64] } });
  });
});

describe('v1.PF5.DealUpdate', () => {
  it('applies only the supplied fields to the deal read from the server; the balance is untouched', async () => {
    const login = await quietLogin();
    const deal = await sim.ok<Row>('DealerBalance', { login, amount: 250, comment: 'bonus' });
    const balance = (await sim.ok<Row>('UserGet', { login })).balance;
    const before = await sim.ok<Row>('DealRequestByTicket', { ticket: deal.deal });
    const updated = await ok<Row>(c, 'v1.PF5.DealUpdate', {
      body: { deal: deal.deal, comment: 'bonus corrected', externalID: 'EXT-7', price: null },
    });
    const now = await sim.ok<Row>('DealRequestByTicket', { ticket: deal.deal });
    expect(now).toMatchObject({ comment: 'bonus corrected', externalID: 'EXT-7', price: before.price, profit: 250 });
    expect(without(now, 'comment', 'externalID')).toEqual(without(before, 'comment', 'externalID'));
    expect(updated).toEqual(shapeDeal(now));
    expect((await sim.ok<Row>('UserGet', { login })).balance).toBe(balance);
  });

  it('refuses a body without the deal ticket or with an unknown field; 404 for an unknown deal; the account cannot change', async () => {
    const login = await quietLogin();
    const deal = await sim.ok<Row>('DealerBalance', { login, amount: 100 });
    await refuses(c, 'v1.PF5.DealUpdate', 'body.deal', { body: { comment: 'x' } });
    await refuses(c, 'v1.PF5.DealUpdate', 'body.deal', { rawBody: `{"deal":${BEYOND_INT64},"comment":"x"}` });
    expect(
      await pf5Refuses('v1.PF5.DealUpdate', 'ErrNotfound', { rawBody: `{"deal":${BEYOND_2_53},"comment":"x"}` }),
    ).toContain(BEYOND_2_53);
    await refuses(c, 'v1.PF5.DealUpdate', 'colour', { body: { deal: deal.deal, colour: 1 } });
    await refuses(c, 'v1.PF5.DealUpdate', 'body.action', { body: { deal: deal.deal, action: 'Gift' } });
    await pf5Refuses('v1.PF5.DealUpdate', 'ErrNotfound', { body: { deal: 999_999_980, comment: 'x' } });
    expect(
      await pf5Refuses('v1.PF5.DealUpdate', 'ErrParams', { body: { deal: deal.deal, login: login + 1 } }),
    ).toContain('record.login');
    expect((await sim.ok<Row>('DealRequestByTicket', { ticket: deal.deal })).login).toBe(login);
  });
});

describe('v1.PF5.DealDeleteBatch', () => {
  it('deletes the deals, leaving balances and positions', async () => {
    const login = await quietLogin();
    const bonus = await sim.ok<Row>('DealerBalance', { login, amount: 300 });
    const fill = await buy(login);
    const balance = (await sim.ok<Row>('UserGet', { login })).balance;
    expect(await ok(c, 'v1.PF5.DealDeleteBatch', { body: [bonus.deal, fill.deal] })).toBe(true);
    expect(await sim.ok('DealRequestByTickets', { tickets: [bonus.deal, fill.deal] })).toEqual([]);
    expect((await sim.ok<Row>('UserGet', { login })).balance).toBe(balance);
    expect(keysOf(await sim.ok<Row[]>('PositionGet', { login }), 'position')).toEqual([fill.position]);
  });

  it('deletes nothing when one deal was created on another trade server (ErrNotMain) or is unknown (ErrNotfound)', async () => {
    const login = await quietLogin();
    const mine = await sim.ok<Row>('DealerBalance', { login, amount: 50 });
    const foreign = await foreignPosition();
    const opening = (await sim.ok<Row[]>('DealRequest', { login: foreign.login })).find(
      (d) => d.positionID === foreign.position,
    )!;
    expect(opening).toBeDefined();
    expect(await pf5Refuses('v1.PF5.DealDeleteBatch', 'ErrNotMain', { body: [mine.deal, opening.deal] })).toContain(
      String(opening.deal),
    );
    await pf5Refuses('v1.PF5.DealDeleteBatch', 'ErrNotfound', { body: [mine.deal, 999_999_979] });
    expect(keysOf(await sim.ok<Row[]>('DealRequestByTickets', { tickets: [mine.deal, opening.deal] }), 'deal')).toEqual(
      [mine.deal, opening.deal],
    );
    await refuses(c, 'v1.PF5.DealDeleteBatch', 'body.0', { body: ['20000000'] });
  });
});

// ---- Groups, symbols, history ----------------------------------------------------------------------------------------

describe('v1.PF5.GroupGet', () => {
  it('answers the cached group by its full name, credentials stripped; 404 when unknown', async () => {
    const group = await ok<Row>(c, 'v1.PF5.GroupGet', { params: { group: 'real\\pro' } });
    expect(group).toEqual(shapeRecord('PF5ConGroup')(await sim.ok('GroupGet', { group: 'real\\pro' })));
    expect(group).toMatchObject({ group: 'real\\pro', marginMode: 'RetailHedged', reportsSMTPPass: null });
    await pf5Refuses('v1.PF5.GroupGet', 'ErrNotfound', { params: { group: 'real\\none' } });
    await refuses(c, 'v1.PF5.GroupGet', 'group', { params: { group: 'x'.repeat(65) } });
  });
});

describe('v1.PF5.GroupRequest', () => {
  it('answers the group live as the server holds it; 404 when unknown', async () => {
    expect(await ok(c, 'v1.PF5.GroupRequest', { params: { group: 'demo\\netting' } })).toEqual(
      shapeRecord('PF5ConGroup')(await sim.ok('GroupRequest', { group: 'demo\\netting' })),
    );
    await pf5Refuses('v1.PF5.GroupRequest', 'ErrNotfound', { params: { group: 'demo' } });
    await refuses(c, 'v1.PF5.GroupRequest', 'group', { params: { group: 'g'.repeat(65) } });
  });
});

describe('v1.PF5.GroupRequestArray', () => {
  it('answers the groups whose full names a mask selects, as the server does', async () => {
    for (const [mask, names] of [
      ['real\\*', ['real\\retail', 'real\\pro']],
      ['*,!demo\\*', ['real\\retail', 'real\\pro']],
      ['demo\\retail,real\\pro', ['demo\\retail', 'real\\pro']],
      ['retail', []],
    ] as const) {
      const groups = await ok<Row[]>(c, 'v1.PF5.GroupRequestArray', { params: { mask } });
      expect(groups.map((g) => g.group).sort(), mask).toEqual([...names].sort());
      expect(groups, mask).toEqual(
        (await sim.ok<Row[]>('GroupRequestArray', { mask })).map(shapeRecord('PF5ConGroup')),
      );
    }
    await refuses(c, 'v1.PF5.GroupRequestArray', 'mask', { params: { mask: 'x'.repeat(1025) } });
  });
});

describe('v1.PF5.SymbolGet', () => {
  it('answers the cached symbol; 404 when unknown', async () => {
    expect(await ok(c, 'v1.PF5.SymbolGet', { params: { symbol: 'XAUUSD' } })).toEqual(
      shapeRecord('PF5Symbol')(await sim.ok('SymbolGet', { symbol: 'XAUUSD' })),
    );
    await pf5Refuses('v1.PF5.SymbolGet', 'ErrNotfound', { params: { symbol: 'NOPE' } });
    await refuses(c, 'v1.PF5.SymbolGet', 'symbol', { params: { symbol: 'S'.repeat(33) } });
  });
});

describe('v1.PF5.SymbolUpdate', () => {
  it('applies only execMode, color, stopsLevel, spreadBalance, spreadDiff and spreadDiffBalance; the rest is ignored', async () => {
    const symbol = 'NZDUSD';
    const before = await sim.ok<Row>('SymbolGet', { symbol });
    const body = {
      ...(shapeRecord('PF5Symbol')(before) as Row),
      execMode: 'Market',
      color: 255,
      stopsLevel: 25,
      spreadBalance: 2,
      spreadDiff: 3,
      spreadDiffBalance: -1,
      description: 'ignored',
      digits: 2,
      tradeMode: 'Disabled',
      symbol: 'OTHER',
    };
    const updated = await ok<Row>(c, 'v1.PF5.SymbolUpdate', { params: { symbol }, body });
    const now = await sim.ok<Row>('SymbolGet', { symbol });
    const six = {
      execMode: 'Market',
      color: 255,
      stopsLevel: 25,
      spreadBalance: 2,
      spreadDiff: 3,
      spreadDiffBalance: -1,
    };
    expect(now).toMatchObject(six);
    expect(without(now, ...Object.keys(six))).toEqual(without(before, ...Object.keys(six)));
    expect(updated).toEqual(shapeRecord('PF5Symbol')(now));
    const cached = await eventually(async () => {
      const s = await ok<Row>(c, 'v1.PF5.SymbolGet', { params: { symbol } });
      return s.stopsLevel === 25 ? s : null;
    });
    expect(cached).toEqual(updated);
  });

  it('refuses a body that is not a PF5Symbol, naming the field; 404 for an unknown symbol', async () => {
    const before = await sim.ok<Row>('SymbolGet', { symbol: 'USDCAD' });
    await refuses(c, 'v1.PF5.SymbolUpdate', 'body.execMode', {
      params: { symbol: 'USDCAD' },
      body: { execMode: 'Fast' },
    });
    await refuses(c, 'v1.PF5.SymbolUpdate', 'body.stopsLevel', {
      params: { symbol: 'USDCAD' },
      body: { stopsLevel: 'wide' },
    });
    await refuses(c, 'v1.PF5.SymbolUpdate', 'flavour', { params: { symbol: 'USDCAD' }, body: { flavour: 'x' } });
    await refuses(c, 'v1.PF5.SymbolUpdate', 'body', { params: { symbol: 'USDCAD' }, body: [1] });
    expect(await sim.ok('SymbolGet', { symbol: 'USDCAD' })).toEqual(before);
    await pf5Refuses('v1.PF5.SymbolUpdate', 'ErrNotfound', { params: { symbol: 'NOPE' }, body: { stopsLevel: 5 } });
  });
});

describe('v1.PF5.SymbolRequestArray', () => {
  it('answers the symbols a mask selects by full path, with their base settings or as a group trades them', async () => {
    const base = await ok<Row[]>(c, 'v1.PF5.SymbolRequestArrayBase', { params: { mask: 'Metals\\*,Crypto\\*' } });
    expect(base.map((s) => s.symbol)).toEqual(['XAUUSD', 'XAGUSD', 'BTCUSD']);
    expect(base).toEqual(
      (await sim.ok<Row[]>('SymbolRequestArray', { mask: 'Metals\\*,Crypto\\*' })).map(shapeRecord('PF5Symbol')),
    );
    const forGroup = await ok<Row[]>(c, 'v1.PF5.SymbolRequestArray', {
      params: { mask: 'Forex\\*,!Forex\\EUR*', group: 'real\\pro' },
    });
    expect(forGroup).toEqual(
      (await sim.ok<Row[]>('SymbolRequestArray', { mask: 'Forex\\*,!Forex\\EUR*', group: 'real\\pro' })).map(
        shapeRecord('PF5Symbol'),
      ),
    );
    expect(forGroup.length).toBeGreaterThan(0);
    expect(forGroup.some((s) => s.symbol.startsWith('EUR'))).toBe(false);
    await pf5Refuses('v1.PF5.SymbolRequestArray', 'ErrNotfound', { params: { mask: '*', group: 'real\\none' } });
    await refuses(c, 'v1.PF5.SymbolRequestArray', 'group', { params: { mask: '*', group: 'g'.repeat(65) } });
    await refuses(c, 'v1.PF5.SymbolRequestArrayBase', 'mask', { params: { mask: 'm'.repeat(1025) } });
  });
});

describe('v1.PF5.ChartRequest', () => {
  it("answers the symbol's minute bars in a window, from a time on and over all time, as the server has them", async () => {
    const symbol = 'EURUSD';
    const bars = await eventually(
      async () => {
        const b = await sim.ok<Row[]>('ChartRequest', { symbol });
        return b.length > 0 ? b : null;
      },
      30_000,
      250,
    );
    expect(bars).not.toBeNull();
    const { got, server } = await againstServer(
      () => ok<Row[]>(c, 'v1.PF5.ChartRequestAll', { params: { symbol } }),
      () => sim.ok<Row[]>('ChartRequest', { symbol }),
    );
    expect(got).toEqual(server);
    expect(Object.keys(got[0])).toEqual(['dateTime', 'open', 'high', 'low', 'close', 'tickVolume', 'spread', 'volume']);
    const first = Date.parse(got[0].dateTime);
    const since = await againstServer(
      () => ok<Row[]>(c, 'v1.PF5.ChartRequestSince', { params: { symbol, fromTime: iso(first) } }),
      () => sim.ok<Row[]>('ChartRequest', { symbol, fromTime: iso(first) }),
    );
    expect(since.got).toEqual(since.server);
    expect(since.got.length).toBeGreaterThan(0);
    expect(await ok(c, 'v1.PF5.ChartRequestSince', { params: { symbol, fromTime: iso(first + 3_600_000) } })).toEqual(
      [],
    );
    const window = await ok<Row[]>(c, 'v1.PF5.ChartRequest', {
      params: { symbol, fromTime: iso(first), toTime: iso(first) },
    });
    expect(window.map((b) => b.dateTime)).toEqual([got[0].dateTime]);
    expect(await ok(c, 'v1.PF5.ChartRequest', { params: { symbol, fromTime: EPOCH, toTime: iso(first - 1) } })).toEqual(
      [],
    );
    await pf5Refuses('v1.PF5.ChartRequestAll', 'ErrNotfound', { params: { symbol: 'NOPE' } });
    await refuses(c, 'v1.PF5.ChartRequest', 'toTime', {
      params: { symbol, fromTime: iso(first), toTime: iso(first - 60_000) },
    });
    await refuses(c, 'v1.PF5.ChartRequestSince', 'fromTime', { params: { symbol, fromTime: '2025-02-30' } });
    await refuses(c, 'v1.PF5.ChartRequestAll', 'symbol', { params: { symbol: 's'.repeat(33) } });
  });
});

// ---- Every route, bad input ------------------------------------------------------------------------------------------

describe('v1 PF5 routes under bad input', () => {
  /** Path values that are not what any parameter takes, or are extreme, or are badly encoded. */
  const WEIRD = [
    '0',
    '-1',
    'abc',
    '1e3',
    '9'.repeat(400),
    BEYOND_2_53,
    '%25',
    '%E0%A4%A',
    'x'.repeat(2000),
    '%00',
    BEYOND_INT64,
  ];
  const BODIES = [
    undefined,
    '{',
    'null',
    '[]',
    '"s"',
    '{"a":1}',
    '[1e400]',
    '{"login":1e400}',
    '[' + '1,'.repeat(10) + ']',
  ];

  it('answers every v1 PF5 route with 200, 400 or 404 (never another 5xx than 503/504), changing nothing', async () => {
    const entries = Object.values(pf5V1);
    const users = ((await sim.ok<Row>('UsersRequest', {})).items as Row[]).length;
    const symbols = JSON.stringify(await sim.ok('SymbolsRequest'));
    const statuses = new Set<number>();
    for (const entry of entries) {
      const names = [...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((n) => n !== 'tradePlatform');
      for (const [i, weird] of WEIRD.entries()) {
        const platform = entry.family === 'PF5' ? c.stack.platforms.pf5 : c.stack.platforms.pf4;
        let path = entry.path.replace('{tradePlatform}', platform);
        for (const name of names) path = path.replace(`{${name}}`, weird);
        const query = `?logins=${encodeURIComponent(weird)}&tickets=${encodeURIComponent(weird)}`;
        const body = BODIES[i % BODIES.length];
        const res = await fetch(`${c.stack.edgeUrl}${path}${query}`, {
          method: entry.method,
          headers: {
            authorization: `Bearer ${c.token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: entry.method === 'GET' ? undefined : body,
        });
        const text = await res.text();
        statuses.add(res.status);
        expect([200, 400, 404], `${entry.id} ${path} ${body}: ${res.status} ${text.slice(0, 200)}`).toContain(
          res.status,
        );
        if (res.status === 400) {
          // A refusal names what it refuses: `login: ...`, `body.0: ...`, or the platform's code.
          const error = JSON.parse(text) as Row;
          if (error.errorType === 'Validation')
            expect(error.errorDescription, `${entry.id} ${path}`).toMatch(/^[\w.]+: \S/);
          else expect(error.errorType, `${entry.id} ${path}`).toBe('PF5API');
        }
      }
    }
    expect(statuses).toContain(400);
    expect(((await sim.ok<Row>('UsersRequest', {})).items as Row[]).length).toBe(users);
    expect(JSON.stringify(await sim.ok('SymbolsRequest'))).toBe(symbols);
  });
});

// ---- Last: it uses up the server's login range -----------------------------------------------------------------------

describe('v1.PF5.UserAdd when the range is used up', () => {
  it('answers UsrLoginExhausted for an allocated login once the last login of the range is taken', async () => {
    const top = await ok<Row>(c, 'v1.PF5.UserAdd', {
      body: { group: 'real\\retail', leverage: 50, lastName: 'Last', login: 999_999 },
    });
    expect(top.login).toBe(999_999);
    const before = ((await sim.ok<Row>('UsersRequest', {})).items as Row[]).length;
    expect(
      await pf5Refuses('v1.PF5.UserAdd', 'UsrLoginExhausted', {
        body: { group: 'real\\retail', leverage: 50, lastName: 'Next' },
      }),
    ).toContain('range');
    expect(((await sim.ok<Row>('UsersRequest', {})).items as Row[]).length).toBe(before);
    // An explicit free login of the range is still accepted.
    const users = ((await sim.ok<Row>('UsersRequest', {})).items as Row[]).map((u) => u.login as number);
    let free = 700_000;
    while (users.includes(free)) free++;
    expect(
      (
        await ok<Row>(c, 'v1.PF5.UserAdd', {
          body: { group: 'real\\retail', leverage: 50, lastName: 'Explicit', login: free },
        })
      ).login,
    ).toBe(free);
  });
});
