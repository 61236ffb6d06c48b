/**
 * v2 PF5 end to end: each operation's own rule, values checked against the simulator's state read with a manager
 * session of the test's own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_MANAGER_LOGIN, DEMO_PF5_SERVER } from '../../../launcher/demo.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackAndManagerForFile, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

type Row = Record<string, any>;

let c: Client;
let sim: ManagerClient;
const setup = stackAndManagerForFile(DEMO_PF5_SERVER);
beforeAll(() => {
  ({ client: c, manager: sim } = setup);
});

/**
 * A group the gateway answered has the report mailer's login and password as null and none of the values the server
 * holds for them (`server`: the server's group) anywhere in it.
 */
function expectNoSmtpCredentials(answered: Row, server: Row) {
  expect(answered).toMatchObject({ reportsSMTPLogin: null, reportsSMTPPass: null });
  const texts: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') texts.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(collect);
  };
  collect(answered);
  for (const field of ['reportsSMTPLogin', 'reportsSMTPPass']) {
    expect(typeof server[field] === 'string' && server[field].length > 0, `the server holds ${field}`).toBe(true);
    expect(
      texts.filter((t) => t.includes(server[field])),
      `the answer carries the server's ${field}`,
    ).toEqual([]);
  }
}

const without = (record: Row, ...fields: string[]) =>
  Object.fromEntries(Object.entries(record).filter(([k]) => !fields.includes(k)));
const tickets = (rows: Row[], key: string) => rows.map((r) => r[key] as number);
const ascending = (xs: number[]) => [...xs].sort((a, b) => a - b);

/** A login with no positions and no orders, so nothing but the test moves its record. */
async function quietLogin(group: string, skip = 0): Promise<Row> {
  const busy = new Set<number>([
    ...(await sim.ok<Row>('PositionsRequest', {})).items.map((p: Row) => p.login as number),
    ...(await sim.ok<Row>('OrdersRequest', {})).items.map((o: Row) => o.login as number),
  ]);
  const users = (await sim.ok<Row>('UsersRequest', {})).items as Row[];
  const quiet = users.filter((u) => u.group === group && !busy.has(u.login));
  expect(quiet.length).toBeGreaterThan(skip);
  return quiet[skip];
}

describe('v2.PF5.ServerTime', () => {
  it('answers the trading server clock', async () => {
    const before = Date.parse(await sim.ok<string>('ServerTime'));
    const time = await ok<string>(c, 'v2.PF5.ServerTime');
    const after = Date.parse(await sim.ok<string>('ServerTime'));
    expect(Date.parse(time)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(time)).toBeLessThanOrEqual(after);
  });
});

describe('v2.PF5.TimeGet', () => {
  it('answers the server time configuration as the server holds it', async () => {
    const time = await ok<Row>(c, 'v2.PF5.TimeGet');
    expect(time).toEqual(shapeRecord('PF5Time')(await sim.ok('TimeGet')));
    expect(Object.keys(time).sort()).toEqual(['daylight', 'daylightState', 'timeServer', 'timeZone']);
  });
});

describe('v2.PF5.ManagerCurrent', () => {
  it('answers the manager the gateway is logged in as, with its rights', async () => {
    const manager = await ok<Row>(c, 'v2.PF5.ManagerCurrent');
    expect(manager.login).toBe(DEMO_MANAGER_LOGIN);
    // The test's session logs in as the same manager with the same configured rights.
    expect(manager).toEqual(shapeRecord('PF5ConManager')(await sim.ok('ManagerCurrent')));
    expect(manager.right).toContain('CfgGroups');
  });
});

describe('v2.PF5.UserGet', () => {
  it('answers a cached account as the server holds it, and NotFound for an unknown login', async () => {
    const [first] = (await sim.ok<Row>('UsersRequest', { limit: 1 })).items as Row[];
    const user = await ok<Row>(c, 'v2.PF5.UserGet', { params: { login: first.login } });
    expect(user).toEqual(shapeRecord('PF5User')(first));
    const missing = await fails(c, 'v2.PF5.UserGet', { params: { login: 999_999_999 } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'ErrNotfound' });
    await refuses(c, 'v2.PF5.UserGet', 'login', { params: { login: 0 } });
    await refuses(c, 'v2.PF5.UserGet', 'login', { params: { login: 'abc' } });
  });
});

describe('v2.PF5.UserRecord', () => {
  it('patches one field of an account natively, answers the updated account and leaves the other fields', async () => {
    const target = await quietLogin('demo\\retail');
    const before = await sim.ok<Row>('UserGet', { login: target.login });
    const comment = `vip ${Date.now() % 100_000}`;
    const updated = await ok<Row>(c, 'v2.PF5.UserRecord', { params: { login: target.login }, body: { comment } });
    expect(updated.comment).toBe(comment);
    const now = await sim.ok<Row>('UserGet', { login: target.login });
    expect(now.comment).toBe(comment);
    expect(without(now, 'comment')).toEqual(without(before, 'comment'));
    expect(updated).toEqual(shapeRecord('PF5User')(now));
    // The change event reaches the cache.
    const cached = await eventually(async () => {
      const u = await ok<Row>(c, 'v2.PF5.UserGet', { params: { login: target.login } });
      return u.comment === comment ? u : null;
    });
    expect(cached).toEqual(updated);
  });

  it('empties a field patched with null', async () => {
    const target = await quietLogin('demo\\retail', 1);
    expect((await sim.ok<Row>('UserGet', { login: target.login })).city).not.toBe('');
    const updated = await ok<Row>(c, 'v2.PF5.UserRecord', { params: { login: target.login }, body: { city: null } });
    expect(updated.city).toBe('');
    expect((await sim.ok<Row>('UserGet', { login: target.login })).city).toBe('');
  });

  it('refuses the login and the server-derived figures at the edge, naming the field, and changes nothing', async () => {
    const target = await quietLogin('demo\\retail', 2);
    const before = await sim.ok<Row>('UserGet', { login: target.login });
    for (const field of ['login', 'balance', 'credit', 'registration', 'lastAccess', 'equityPrevDay']) {
      const message = await refuses(c, 'v2.PF5.UserRecord', `body.${field}`, {
        params: { login: target.login },
        body: { [field]: 1, comment: 'x' },
      });
      expect(message).toContain('cannot be changed');
    }
    expect(await sim.ok<Row>('UserGet', { login: target.login })).toEqual(before);
  });

  it('refuses a body that is not a merge patch of an account, naming the problem', async () => {
    const { login } = await quietLogin('demo\\retail', 2);
    await refuses(c, 'v2.PF5.UserRecord', 'unknown field nope', { params: { login }, body: { nope: 1 } });
    await refuses(c, 'v2.PF5.UserRecord', 'body.leverage', { params: { login }, body: { leverage: 'high' } });
    await refuses(c, 'v2.PF5.UserRecord', 'body', { params: { login }, body: [] });
    await refuses(c, 'v2.PF5.UserRecord', 'body', { params: { login }, body: {} });
    await refuses(c, 'v2.PF5.UserRecord', 'body', { params: { login }, rawBody: '{"comment":' });
    await refuses(c, 'v2.PF5.UserRecord', 'login', { params: { login: -5 }, body: { comment: 'x' } });
  });

  it('passes the server refusals on: a required field removed, an unknown group, an unknown login', async () => {
    const { login } = await quietLogin('demo\\retail', 2);
    const removed = await fails(c, 'v2.PF5.UserRecord', { params: { login }, body: { group: null } });
    expect(removed).toMatchObject({ code: 'PF5Error', managerCode: 'ErrParams' });
    expect(removed.message).toContain('patch.group');
    const unknown = await fails(c, 'v2.PF5.UserRecord', { params: { login: 999_999_999 }, body: { comment: 'x' } });
    expect(unknown).toMatchObject({ code: 'NotFound', managerCode: 'ErrNotfound' });
  });
});

describe('v2.PF5.GroupGet', () => {
  it('answers a cached group as the server holds it, and NotFound for an unknown group', async () => {
    const group = await ok<Row>(c, 'v2.PF5.GroupGet', { params: { group: 'real\\pro' } });
    const server = await sim.ok<Row>('GroupGet', { group: 'real\\pro' });
    expect(group).toEqual(shapeRecord('PF5ConGroup')(server));
    expect(group.reportsSMTP).toBe(server.reportsSMTP);
    expectNoSmtpCredentials(group, server);
    expect(group).toMatchObject({ group: 'real\\pro', currency: 'USD', marginMode: 'RetailHedged' });
    const missing = await fails(c, 'v2.PF5.GroupGet', { params: { group: 'real\\none' } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'ErrNotfound' });
    await refuses(c, 'v2.PF5.GroupGet', 'group', { params: { group: 'x'.repeat(17) } });
  });
});

describe('v2.PF5.GroupRecord', () => {
  const group = 'demo\\netting';

  it('patches one field natively, answers the updated group and leaves the other fields', async () => {
    const before = await sim.ok<Row>('GroupGet', { group });
    const companyPage = `https://netting-${Date.now() % 100_000}.example.com`;
    const updated = await ok<Row>(c, 'v2.PF5.GroupRecord', { params: { group }, body: { companyPage } });
    expect(updated.companyPage).toBe(companyPage);
    const now = await sim.ok<Row>('GroupGet', { group });
    expect(now.companyPage).toBe(companyPage);
    expect(without(now, 'companyPage')).toEqual(without(before, 'companyPage'));
    // The report mailer's login and password stay the server's, and are not answered.
    expect(now.reportsSMTPLogin).toBe(before.reportsSMTPLogin);
    expect(now.reportsSMTPPass).toBe(before.reportsSMTPPass);
    expectNoSmtpCredentials(updated, now);
    expect(updated).toEqual(shapeRecord('PF5ConGroup')(now));
    const cached = await eventually(async () => {
      const g = await ok<Row>(c, 'v2.PF5.GroupGet', { params: { group } });
      return g.companyPage === companyPage ? g : null;
    });
    expect(cached).toEqual(updated);
    expectNoSmtpCredentials(cached!, now);
  });

  it('writes SMTP credentials but never answers them, neither from the patch nor from the cache', async () => {
    const updated = await ok<Row>(c, 'v2.PF5.GroupRecord', {
      params: { group },
      body: { reportsSMTP: 'smtp.example.com:587', reportsSMTPLogin: 'reports', reportsSMTPPass: 'S3cret-pass' },
    });
    const now = await sim.ok<Row>('GroupGet', { group });
    expect(now).toMatchObject({ reportsSMTPLogin: 'reports', reportsSMTPPass: 'S3cret-pass' });
    expect(updated).toMatchObject({
      reportsSMTP: 'smtp.example.com:587',
      reportsSMTPLogin: null,
      reportsSMTPPass: null,
    });
    const cached = await eventually(async () => {
      const g = await ok<Row>(c, 'v2.PF5.GroupGet', { params: { group } });
      return g.reportsSMTP === 'smtp.example.com:587' ? g : null;
    });
    expect(cached).toMatchObject({ reportsSMTPLogin: null, reportsSMTPPass: null });
    expect(JSON.stringify(cached)).not.toContain('S3cret-pass');
  });

  it('removes a field patched with null', async () => {
    const before = await sim.ok<Row>('GroupGet', { group });
    const updated = await ok<Row>(c, 'v2.PF5.GroupRecord', {
      params: { group },
      body: { companyCatalog: 'catalog', companySupportPage: null },
    });
    expect(updated).toMatchObject({ companyCatalog: 'catalog', companySupportPage: null });
    const now = await sim.ok<Row>('GroupGet', { group });
    expect(now).not.toHaveProperty('companySupportPage');
    expect(without(now, 'companyCatalog')).toEqual(without(before, 'companyCatalog', 'companySupportPage'));
    expectNoSmtpCredentials(updated, now);
  });

  it('refuses the name, newsLang and commissions at the edge, naming the field, and changes nothing', async () => {
    const before = await sim.ok<Row>('GroupGet', { group });
    for (const [field, value] of [
      ['group', 'demo\\other'],
      ['newsLang', [1]],
      ['commissions', null],
    ] as const) {
      const message = await refuses(c, 'v2.PF5.GroupRecord', `body.${field}`, {
        params: { group },
        body: { [field]: value, company: 'x' },
      });
      expect(message).toContain('cannot be changed');
    }
    await refuses(c, 'v2.PF5.GroupRecord', 'body.marginCall', { params: { group }, body: { marginCall: 'high' } });
    await refuses(c, 'v2.PF5.GroupRecord', 'unknown field nope', { params: { group }, body: { nope: 1 } });
    await refuses(c, 'v2.PF5.GroupRecord', 'body', { params: { group }, body: {} });
    expect(await sim.ok<Row>('GroupGet', { group })).toEqual(before);
  });

  it('passes the server refusals on: a required field removed, an unknown group', async () => {
    const removed = await fails(c, 'v2.PF5.GroupRecord', { params: { group }, body: { currency: null } });
    expect(removed).toMatchObject({ code: 'PF5Error', managerCode: 'ErrParams' });
    expect(removed.message).toContain('patch.currency');
    const unknown = await fails(c, 'v2.PF5.GroupRecord', { params: { group: 'demo\\none' }, body: { company: 'x' } });
    expect(unknown).toMatchObject({ code: 'NotFound', managerCode: 'ErrNotfound' });
  });
});

describe('v2.PF5.SymbolGet', () => {
  it('answers a cached symbol as the server holds it, and NotFound for an unknown symbol', async () => {
    const symbols = await sim.ok<Row[]>('SymbolsRequest');
    const last = symbols[symbols.length - 1];
    const symbol = await ok<Row>(c, 'v2.PF5.SymbolGet', { params: { symbol: last.symbol } });
    expect(symbol).toEqual(shapeRecord('PF5Symbol')(last));
    const missing = await fails(c, 'v2.PF5.SymbolGet', { params: { symbol: 'NOPE' } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'ErrNotfound' });
    await refuses(c, 'v2.PF5.SymbolGet', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
  });
});

describe('v2.PF5.SymbolRecord', () => {
  let symbol: string;
  beforeAll(async () => {
    symbol = (await sim.ok<Row[]>('SymbolsRequest'))[1].symbol;
  });

  it('patches fields natively, answers the updated symbol, leaves the others and reaches the cache', async () => {
    const before = await sim.ok<Row>('SymbolGet', { symbol });
    const description = `Patched ${Date.now() % 100_000}`;
    const updated = await ok<Row>(c, 'v2.PF5.SymbolRecord', {
      params: { symbol },
      body: { description, stopsLevel: before.stopsLevel + 5 },
    });
    expect(updated).toMatchObject({ symbol, description, stopsLevel: before.stopsLevel + 5 });
    const now = await sim.ok<Row>('SymbolGet', { symbol });
    expect(now).toMatchObject({ description, stopsLevel: before.stopsLevel + 5 });
    expect(without(now, 'description', 'stopsLevel')).toEqual(without(before, 'description', 'stopsLevel'));
    expect(updated).toEqual(shapeRecord('PF5Symbol')(now));
    const cached = await eventually(async () => {
      const s = await ok<Row>(c, 'v2.PF5.SymbolGet', { params: { symbol } });
      return s.description === description ? s : null;
    });
    expect(cached).toEqual(updated);
  });

  it('removes a field patched with null', async () => {
    const updated = await ok<Row>(c, 'v2.PF5.SymbolRecord', { params: { symbol }, body: { page: null } });
    expect(updated.page).toBeNull();
    expect(await sim.ok<Row>('SymbolGet', { symbol })).not.toHaveProperty('page');
  });

  it('refuses the name, read-only fields and sessions at the edge, naming the field, and changes nothing', async () => {
    const before = await sim.ok<Row>('SymbolGet', { symbol });
    for (const [field, value] of [
      ['symbol', 'OTHER'],
      ['multiply', 10],
      ['currencyBaseDigits', 3],
      ['sessionQuote', []],
      ['sessionTrade', null],
    ] as const) {
      const message = await refuses(c, 'v2.PF5.SymbolRecord', `body.${field}`, {
        params: { symbol },
        body: { [field]: value, description: 'x' },
      });
      expect(message).toContain('cannot be changed');
    }
    await refuses(c, 'v2.PF5.SymbolRecord', 'body.digits', { params: { symbol }, body: { digits: 2.5 } });
    await refuses(c, 'v2.PF5.SymbolRecord', 'body.tradeMode', { params: { symbol }, body: { tradeMode: 'Sometimes' } });
    await refuses(c, 'v2.PF5.SymbolRecord', 'symbol', {
      params: { symbol: 'ABCDEFGHIJKLM' },
      body: { description: 'x' },
    });
    expect(await sim.ok<Row>('SymbolGet', { symbol })).toEqual(before);
  });

  it('passes the server refusals on: a required field removed, an unknown symbol', async () => {
    const removed = await fails(c, 'v2.PF5.SymbolRecord', { params: { symbol }, body: { digits: null } });
    expect(removed).toMatchObject({ code: 'PF5Error', managerCode: 'ErrParams' });
    expect(removed.message).toContain('patch.digits');
    const unknown = await fails(c, 'v2.PF5.SymbolRecord', { params: { symbol: 'NOPE' }, body: { description: 'x' } });
    expect(unknown).toMatchObject({ code: 'NotFound', managerCode: 'ErrNotfound' });
  });
});

/**
 * The `*ByGroup` lists against the server's own unpaged selection of the same mask. Fills, closes and stop-outs
 * move the lists while the test walks them, so a walk counts only when the server's selection was the same before
 * and after it.
 */
async function walkAgainstServer(id: string, serverCommand: string, key: string, mask: string, limit: number) {
  for (let attempt = 0; attempt < 8; attempt++) {
    const before = ascending(tickets(await sim.ok<Row[]>(serverCommand, { mask }), key));
    const walk = await allPages<Row>(c, id, limit, { params: { mask } });
    const after = ascending(tickets(await sim.ok<Row[]>(serverCommand, { mask }), key));
    if (JSON.stringify(before) === JSON.stringify(after)) return { server: before, ...walk };
  }
  throw new Error(`${id}: the server's selection of ${mask} kept changing during the walk`);
}

async function groupsOf(logins: number[]): Promise<Map<number, string>> {
  const users = await sim.ok<Row[]>('UserGetByLogins', { logins: [...new Set(logins)] });
  return new Map(users.map((u) => [u.login as number, u.group as string]));
}

for (const [id, serverCommand, key] of [
  ['v2.PF5.PositionByGroup', 'PositionRequestByGroup', 'position'],
  ['v2.PF5.OrderByGroup', 'OrderRequestByGroup', 'order'],
  ['v2.PF5.DealByGroup', 'DealRequestByGroup', 'deal'],
] as const) {
  describe(id, () => {
    it('pages the selection of a group pattern by ticket ascending; the pages make the whole list', async () => {
      const mask = 'real\\*';
      const limit = 7;
      const { server, items, pages } = await walkAgainstServer(id, serverCommand, key, mask, limit);
      const walked = tickets(items, key);
      expect(walked.length).toBeGreaterThan(limit);
      expect(walked).toEqual(server);
      expect(pages).toBe(Math.ceil(walked.length / limit));
      const groups = await groupsOf(items.map((r) => r.login as number));
      for (const row of items) expect(groups.get(row.login), `${key} ${row[key]}`).toMatch(/^real\\/);
      expect(new Set(groups.values()).size).toBe(2);
      // Without a limit the whole selection is one page.
      const whole = await call<Row[]>(c, id, { params: { mask } });
      expect(whole.body.meta.paging).toEqual({ nextCursor: null, hasMore: false });
      const all = tickets(whole.body.data!, key);
      expect(all).toEqual(ascending(all));
      expect(all.length).toBeGreaterThan(limit);
    });

    it('reads a list of groups and an exclusion as the server does', async () => {
      const list = await walkAgainstServer(id, serverCommand, key, 'demo\\retail,real\\pro', 50);
      expect(tickets(list.items, key)).toEqual(list.server);
      const listGroups = new Set((await groupsOf(list.items.map((r) => r.login as number))).values());
      expect([...listGroups].sort()).toEqual(['demo\\retail', 'real\\pro']);
      const excluded = await walkAgainstServer(id, serverCommand, key, '*,!demo\\*', 50);
      expect(tickets(excluded.items, key)).toEqual(excluded.server);
      const excludedGroups = new Set((await groupsOf(excluded.items.map((r) => r.login as number))).values());
      expect([...excludedGroups].sort()).toEqual(['real\\pro', 'real\\retail']);
      const none = await ok<Row[]>(c, id, { params: { mask: 'nobody\\*' } });
      expect(none).toEqual([]);
    });

    it('refuses a tampered cursor, a limit out of range and an overlong mask, naming the field', async () => {
      await refusesTamperedCursor(c, id, { params: { mask: 'real\\*' } });
      await refuses(c, id, 'limit', { params: { mask: 'real\\*' }, query: { limit: 5001 } });
      await refuses(c, id, 'limit', { params: { mask: 'real\\*' }, query: { limit: 0 } });
      await refuses(c, id, 'mask', { params: { mask: 'x'.repeat(1025) } });
    });
  });
}
