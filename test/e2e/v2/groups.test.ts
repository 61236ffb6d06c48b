/**
 * v2 PF4 Groups end to end: the cached group list and records, their security entries and margin overrides, the live
 * paged list, the name check, and the Type 1 / Type 2 updates, each checked against the simulator's state read
 * directly over the manager protocol. The quote feed is off, so a changed margin level closes nothing. Each writing
 * test works on a group of its own.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiComponents } from '../../../shared/records/contract.js';
import { PF4_SERVER_ONLY } from '../../../sim/pf4/serverOnlyFields.js';
import { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackForFile, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
const managers = [{ login: 1000, password: PASSWORD }];
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
beforeAll(async () => {
  c = setup.client;
  sim = await ManagerClient.connect(c.stack.sim.port, 'demo-pf4');
  await sim.ok('login', { login: 1000, password: PASSWORD, pump: false });
});
afterAll(() => sim?.close());

const simGroup = (group: string) => sim.ok<Rec>('GroupRecordRequest', { group });
const simGroups = () => sim.ok<Rec[]>('GroupsRequest');
const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Every field the gateway answered equals the server's, where the server has the field. */
function expectSameAsServer(answered: Rec, server: Rec) {
  for (const [field, value] of Object.entries(answered)) {
    if (field in server) expect(value, field).toEqual(server[field]);
  }
}

/** The group's server-only fields as the server holds them: report mailer, template path, securities hash. */
const serverOnly = (group: Rec) => Object.fromEntries(PF4_SERVER_ONLY.group.map((f) => [f, group[f]]));

/**
 * A group the gateway answered has exactly the PF4Group fields: none of the server-only fields the server sends beside
 * them (SMTP credentials, template path, securities hash), nor any of their values, nor the nested security arrays.
 */
function expectNoServerOnly(answered: Rec, server: Rec) {
  const fields = Object.keys((openapiComponents as Record<string, { properties: Rec }>).PF4Group.properties);
  expect(Object.keys(answered).sort()).toEqual([...fields].sort());
  for (const field of [...PF4_SERVER_ONLY.group, 'secGroups', 'secMargins']) expect(fields, field).not.toContain(field);
  const text = JSON.stringify(answered);
  for (const field of PF4_SERVER_ONLY.group) {
    expect(typeof server[field] === 'string' && server[field].length > 0, `the server sends ${field}`).toBe(true);
    expect(text, `the answer carries the server's ${field}`).not.toContain(server[field]);
  }
}

/** The cached group once `check` holds for it. */
function cachedGroupWhen(group: string, check: (g: Rec) => boolean) {
  return eventually(async () => {
    const r = await call<Rec>(c, 'v2.PF4.GroupRecordGet', { params: { group } });
    return r.body.error === null && check(r.body.data!) ? r.body.data : null;
  });
}

describe('v2.PF4.GroupsGet', () => {
  it('answers every group from the cache as the server holds it, without the nested security arrays', async () => {
    const server = await simGroups();
    const cached = await ok<Rec[]>(c, 'v2.PF4.GroupsGet');
    expect(cached.map((g) => g.group).sort(ordinal)).toEqual(server.map((g) => g.group).sort(ordinal));
    for (const group of cached) {
      const held = server.find((g) => g.group === group.group)!;
      expectSameAsServer(group, held);
      expectNoServerOnly(group, held);
    }
  });

  it('follows a change of a group on the server', async () => {
    const company = `Followed ${Date.now()}`;
    await sim.ok('GroupRecordUpdate', { group: 'real\\ecn', record: { company } });
    const seen = await eventually(async () =>
      (await ok<Rec[]>(c, 'v2.PF4.GroupsGet')).find((g) => g.group === 'real\\ecn' && g.company === company),
    );
    expect(seen).toBeTruthy();
  });
});

describe('v2.PF4.GroupRecordGet', () => {
  it('answers one group from the cache by its exact name', async () => {
    const group = await ok<Rec>(c, 'v2.PF4.GroupRecordGet', { params: { group: 'demo\\forex' } });
    expect(group.group).toBe('demo\\forex');
    expectSameAsServer(group, await simGroup('demo\\forex'));
    expectNoServerOnly(group, await simGroup('demo\\forex'));
  });

  it('answers NotFound with the manager code for an absent or differently cased name, and refuses a long name', async () => {
    for (const group of ['DEMO\\FOREX', 'no\\such']) {
      expect(await fails(c, 'v2.PF4.GroupRecordGet', { params: { group } })).toMatchObject({
        code: 'NotFound',
        managerCode: 'InvalidData',
      });
    }
    await refuses(c, 'v2.PF4.GroupRecordGet', 'group', { params: { group: 'g'.repeat(17) } });
  });
});

describe('v2.PF4.GroupsRequest', () => {
  it("pages every group live by ascending (ordinal) name, whatever the server's list order", async () => {
    const server = await simGroups();
    const byName = server.map((g) => g.group as string).sort(ordinal);
    expect(server.map((g) => g.group)).not.toEqual(byName); // the server lists them in its own order
    const { items, pages } = await allPages<Rec>(c, 'v2.PF4.GroupsRequest', 2);
    expect(items.map((g) => g.group)).toEqual(byName);
    expect(pages).toBe(Math.ceil(byName.length / 2));
    for (const group of items) {
      expectSameAsServer(group, server.find((g) => g.group === group.group)!);
      expectNoServerOnly(group, server.find((g) => g.group === group.group)!);
    }
    expect((await ok<Rec[]>(c, 'v2.PF4.GroupsRequest')).map((g) => g.group)).toEqual(byName);
  });

  it('refuses a tampered cursor and a limit out of range', async () => {
    await refusesTamperedCursor(c, 'v2.PF4.GroupsRequest');
    await refuses(c, 'v2.PF4.GroupsRequest', 'limit', { query: { limit: 5001 } });
  });
});

describe('v2.PF4.GroupSecGroupsGet', () => {
  it("answers the group's 32 security entries as the server holds them", async () => {
    const server = await sim.ok<Rec[]>('GroupSecGroupsGet', { group: 'real\\vip' });
    const entries = await ok<Rec[]>(c, 'v2.PF4.GroupSecGroupsGet', { params: { group: 'real\\vip' } });
    expect(entries).toHaveLength(32);
    entries.forEach((entry, i) => expectSameAsServer(entry, server[i]));
    expect(entries.some((e) => e.trade === 1)).toBe(true);
    expect(entries.some((e) => e.trade === 0 && e.show === 0)).toBe(true); // placeholders of unused symbol types
  });

  it('answers NotFound for an unknown group and refuses a long name', async () => {
    expect(await fails(c, 'v2.PF4.GroupSecGroupsGet', { params: { group: 'Real\\vip' } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.GroupSecGroupsGet', 'group', { params: { group: 'g'.repeat(17) } });
  });
});

describe('v2.PF4.GroupSecMarginsGet', () => {
  it('answers the first secMarginsTotal overrides of the group', async () => {
    for (const group of ['demo\\forex', 'real\\vip']) {
      const total = (await simGroup(group)).secMarginsTotal as number;
      const server = await sim.ok<Rec[]>('GroupSecMarginsGet', { group });
      const overrides = await ok<Rec[]>(c, 'v2.PF4.GroupSecMarginsGet', { params: { group } });
      expect(overrides).toHaveLength(total);
      expect(overrides).toEqual(
        server.map((o) => ({
          symbol: o.symbol,
          swapLong: o.swapLong,
          swapShort: o.swapShort,
          marginDivider: o.marginDivider,
        })),
      );
    }
  });

  it('answers NotFound for an unknown group and refuses a long name', async () => {
    expect(await fails(c, 'v2.PF4.GroupSecMarginsGet', { params: { group: 'no\\such' } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.GroupSecMarginsGet', 'group', { params: { group: 'g'.repeat(17) } });
  });
});

describe('v2.PF4.GroupRecordUpdate', () => {
  it('lays the DTO over the live group: given fields change; the name, overrides and security entries are preserved', async () => {
    const group = 'demo\\pro';
    const before = await simGroup(group);
    const [secBefore, marginsBefore] = [
      await sim.ok('GroupSecGroupsGet', { group }),
      await sim.ok('GroupSecMarginsGet', { group }),
    ];
    const r = await call<Rec>(c, 'v2.PF4.GroupRecordUpdate', {
      params: { group },
      body: {
        company: 'Replaced Co',
        supportEmail: 'help@example.org',
        defaultLeverage: 400,
        marginCall: 90,
        marginStopout: 40,
        maxPositions: 50,
      },
    });
    expect(r.body.error).toBeNull();
    expect(r.headers.get('x-request-timeout-applied')).toBe('15');
    const after = await simGroup(group);
    expectSameAsServer(r.body.data!, after);
    expect(after).toMatchObject({
      group,
      company: 'Replaced Co',
      supportEmail: 'help@example.org',
      defaultLeverage: 400,
      marginCall: 90,
      marginStopout: 40,
      maxPositions: 50,
    });
    for (const kept of ['secMarginsTotal', 'currency', 'supportPage', 'timeout', 'defaultDeposit', 'useSwap', 'enable'])
      expect(after[kept], kept).toEqual(before[kept]);
    // The SMTP credentials, template path and securities hash are the server's as before, and the answer has none of them.
    expect(serverOnly(after)).toEqual(serverOnly(before));
    expectNoServerOnly(r.body.data!, after);
    expect(await sim.ok('GroupSecGroupsGet', { group })).toEqual(secBefore);
    expect(await sim.ok('GroupSecMarginsGet', { group })).toEqual(marginsBefore);
    expect(await cachedGroupWhen(group, (g) => g.company === 'Replaced Co')).toMatchObject({ defaultLeverage: 400 });
  });

  it('answers NotFound for an unknown group and refuses the name in the body, bad values and a long name', async () => {
    expect(
      await fails(c, 'v2.PF4.GroupRecordUpdate', { params: { group: 'no\\such' }, body: { company: 'x' } }),
    ).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.GroupRecordUpdate', 'group', {
      params: { group: 'demo\\pro' },
      body: { group: 'renamed' },
    });
    await refuses(c, 'v2.PF4.GroupRecordUpdate', 'body.marginMode', {
      params: { group: 'demo\\pro' },
      body: { marginMode: 'Sometimes' },
    });
    await refuses(c, 'v2.PF4.GroupRecordUpdate', 'body.marginCall', {
      params: { group: 'demo\\pro' },
      body: { marginCall: 'high' },
    });
    await refuses(c, 'v2.PF4.GroupRecordUpdate', 'group', {
      params: { group: 'g'.repeat(17) },
      body: { company: 'x' },
    });
    expect((await simGroup('demo\\pro')).group).toBe('demo\\pro');
  });
});

describe('v2.PF4.GroupRecord', () => {
  it('merges the patch into the live group: patched fields change, null empties, everything else stays', async () => {
    const group = 'real\\standard';
    const before = await simGroup(group);
    const patched = await ok<Rec>(c, 'v2.PF4.GroupRecord', {
      params: { group },
      body: { supportEmail: 'patch@example.org', maxPositions: 7, supportPage: null, copies: null },
    });
    const after = await simGroup(group);
    expectSameAsServer(patched, after);
    expect(after).toMatchObject({ supportEmail: 'patch@example.org', maxPositions: 7, supportPage: '' });
    expect(patched.copies).toBe(0);
    for (const [field, value] of Object.entries(before)) {
      if (!['supportEmail', 'maxPositions', 'supportPage', 'copies'].includes(field))
        expect(after[field], field).toEqual(value);
    }
    // The SMTP credentials, template path and securities hash are the server's as before, and the answer has none of them.
    expect(serverOnly(after)).toEqual(serverOnly(before));
    expectNoServerOnly(patched, after);
    expect(await cachedGroupWhen(group, (g) => g.supportEmail === 'patch@example.org')).toMatchObject({
      maxPositions: 7,
    });
  });

  it('refuses renaming, removing the currency or a mode, an empty patch and an unknown group', async () => {
    const group = 'real\\standard';
    await refuses(c, 'v2.PF4.GroupRecord', 'group', { params: { group }, body: { group: 'renamed' } });
    await refuses(c, 'v2.PF4.GroupRecord', 'body.currency', { params: { group }, body: { currency: null } });
    await refuses(c, 'v2.PF4.GroupRecord', 'body.marginMode', { params: { group }, body: { marginMode: null } });
    await refuses(c, 'v2.PF4.GroupRecord', 'body.newsMode', { params: { group }, body: { newsMode: 'Loud' } });
    await refuses(c, 'v2.PF4.GroupRecord', 'body', { params: { group }, body: {} });
    expect(
      await fails(c, 'v2.PF4.GroupRecord', { params: { group: 'no\\such' }, body: { company: 'x' } }),
    ).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    expect((await simGroup(group)).currency).toBe('USD');
  });
});

describe('v2.PF4.EnsureGroupNameExist', () => {
  it('answers true for an existing name and false otherwise, case-sensitively', async () => {
    for (const group of (await simGroups()).map((g) => g.group as string)) {
      expect(await ok(c, 'v2.PF4.EnsureGroupNameExist', { params: { group } }), group).toBe(true);
    }
    for (const group of ['DEMO\\FOREX', 'demo\\forex2', 'demo', 'no\\such']) {
      expect(await ok(c, 'v2.PF4.EnsureGroupNameExist', { params: { group } }), group).toBe(false);
    }
  });

  it('refuses a name over 16 characters', async () => {
    await refuses(c, 'v2.PF4.EnsureGroupNameExist', 'group', { params: { group: 'g'.repeat(17) } });
  });
});
