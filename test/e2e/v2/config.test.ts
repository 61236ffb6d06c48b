/**
 * v2 PF4 Config end to end, values checked against the simulator's own configuration (read with a manager client).
 * Every configuration list goes through the same table-driven walk: read whole and in small pages (equal keys and
 * empty key fields included), update by position or key and see it live, shift and see the server's new order, delete
 * what was added and find the list as it was. The three sections are Type 1 replaces: one field changes, the others
 * (the preserved ones included) keep their values. Whatever a test changes it puts back.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openapiComponents } from '../../../shared/records/contract.js';
import { PF4_SERVER_ONLY, withoutServerOnly, type Pf4ServerOnlyKind } from '../../../sim/pf4/serverOnlyFields.js';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { stackAndManagerForFile, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

type Row = Record<string, unknown>;

let c: Client;
let m: ManagerClient;
const setup = stackAndManagerForFile();
beforeAll(() => {
  ({ client: c, manager: m } = setup);
});

/** The simulator's list in its own order, as the server sends it (feeders and syncs with their password). */
const simList = (list: string) => m.ok<Row[]>(`CfgRequest${list}`);

/** Lists whose entries the server sends with server-only fields (a password) beside the contract's. */
const SERVER_ONLY: Record<string, Pf4ServerOnlyKind> = { Feeder: 'feeder', Sync: 'sync' };
/** An entry as the contract has it: what the gateway may answer of a server entry. */
const contractPart = (list: string, row: Row) => (SERVER_ONLY[list] ? withoutServerOnly(SERVER_ONLY[list], row) : row);

/**
 * A record the gateway answered has exactly the contract's fields, and none of the values of the server-only fields
 * `server` (the server's record) carries: a password, the slave server's password.
 */
function expectNoServerOnly(answered: Row, schema: string, server: Row, kind: Pf4ServerOnlyKind) {
  const fields = Object.keys((openapiComponents as Record<string, { properties: Row }>)[schema].properties);
  expect(Object.keys(answered).sort()).toEqual([...fields].sort());
  const text = JSON.stringify(answered);
  for (const field of PF4_SERVER_ONLY[kind]) {
    expect(fields, field).not.toContain(field);
    const value = server[field];
    if (typeof value === 'string' && value !== '')
      expect(text, `${schema} carries the server's ${field}`).not.toContain(value);
  }
}

/** Sort order of the paged reads, computed independently: key fields (null first, numbers, then text), then position. */
function expectedOrder(rows: Row[], key: readonly string[]): Row[] {
  const rank = (v: unknown) => (v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2);
  const cmp = (a: unknown, b: unknown) => {
    if (rank(a) !== rank(b)) return rank(a) - rank(b);
    if (rank(a) === 0) return 0;
    return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  };
  return rows
    .map((row, pos) => ({ row, pos }))
    .sort((x, y) => {
      for (const f of key) {
        const d = cmp(x.row[f], y.row[f]);
        if (d !== 0) return d;
      }
      return x.pos - y.pos;
    })
    .map((e) => e.row);
}

/** Where a record the test wrote sits in the simulator's list (every field it gave matches). */
const positionOf = (rows: Row[], record: Row) =>
  rows.findIndex((r) =>
    Object.entries(record).every(([k, v]) => JSON.stringify(r[k] ?? null) === JSON.stringify(v ?? null)),
  );

interface ListCase {
  list: string;
  read: string;
  update: string;
  del: string;
  shift: string;
  /** The paged reads' sort key. */
  key: readonly string[];
  /** How an update addresses its entry: by position, by the server's key field, or (unkeyed, no position) appended. */
  by: 'pos' | 'key' | 'append';
  keyField?: string;
  make: (i: number) => Row;
  /** A changed copy with the same key. */
  change: (r: Row) => Row;
  /** Unkeyed lists: an entry with the key of `make(1)` and other fields different, and one with an empty key field. */
  tie?: Row;
  nullKey?: Row;
}

const ip = (text: string) => text.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
const managerRights = (admin: boolean) => ({
  manager: true,
  money: false,
  online: true,
  riskMan: false,
  broker: false,
  admin,
  logs: false,
  reports: false,
  trades: false,
  marketWatch: false,
  email: false,
  userDetails: false,
  seeTrades: true,
  news: false,
  plugins: false,
  market: false,
  notifications: false,
  serverReports: false,
  techSupport: false,
});

const LISTS: ListCase[] = [
  {
    list: 'Holiday',
    read: 'v2.PF4.CfgRequestHoliday',
    update: 'v2.PF4.CfgUpdateHoliday',
    del: 'v2.PF4.CfgDeleteHoliday',
    shift: 'v2.PF4.CfgShiftHoliday',
    key: ['year', 'month', 'day', 'from', 'symbol'],
    by: 'pos',
    make: (i) => ({
      year: 2031,
      month: 3,
      day: 10 + i,
      from: 60,
      to: 120,
      symbol: 'EURUSD',
      description: `test holiday ${i}`,
      enable: false,
    }),
    change: (r) => ({ ...r, description: 'moved by test', to: 240 }),
    tie: {
      year: 2031,
      month: 3,
      day: 11,
      from: 60,
      to: 600,
      symbol: 'EURUSD',
      description: 'same key as test holiday 1',
      enable: false,
    },
    nullKey: {
      year: 2031,
      month: 3,
      day: 11,
      from: 60,
      to: 120,
      symbol: null,
      description: 'no symbol',
      enable: false,
    },
  },
  {
    list: 'Access',
    read: 'v2.PF4.CfgRequestAccess',
    update: 'v2.PF4.CfgUpdateAccess',
    del: 'v2.PF4.CfgDeleteAccess',
    shift: 'v2.PF4.CfgShiftAccess',
    key: ['ipFrom', 'ipTo'],
    by: 'pos',
    make: (i) => ({
      action: 1,
      ipFrom: ip(`203.0.113.${i * 10}`),
      ipTo: ip(`203.0.113.${i * 10 + 5}`),
      comment: `test rule ${i}`,
    }),
    change: (r) => ({ ...r, action: 0, comment: 'denied by test' }),
    tie: { action: 0, ipFrom: ip('203.0.113.10'), ipTo: ip('203.0.113.15'), comment: 'same range as test rule 1' },
  },
  {
    list: 'DataServer',
    read: 'v2.PF4.CfgRequestDataServer',
    update: 'v2.PF4.CfgUpdateDataServer',
    del: 'v2.PF4.CfgDeleteDataServer',
    shift: 'v2.PF4.CfgShiftDataServer',
    key: ['server'],
    by: 'pos',
    make: (i) => ({
      server: `access-test${i}.example.com:443`,
      ip: 0,
      description: `test access point ${i}`,
      isProxy: 0,
      priority: 5 + i,
      loading: 0,
      ipInternal: 0,
      isWitness: 0,
    }),
    change: (r) => ({ ...r, description: 'renamed by test', priority: 9 }),
    tie: {
      server: 'access-test1.example.com:443',
      ip: 0,
      description: 'same address, proxy',
      isProxy: 1,
      priority: 7,
      loading: 0,
      ipInternal: 0,
      isWitness: 0,
    },
    nullKey: {
      server: null,
      ip: 0,
      description: 'no address',
      isProxy: 0,
      priority: 8,
      loading: 0,
      ipInternal: 0,
      isWitness: 0,
    },
  },
  {
    list: 'GatewayMarkup',
    read: 'v2.PF4.CfgRequestGatewayMarkup',
    update: 'v2.PF4.CfgUpdateGatewayMarkup',
    del: 'v2.PF4.CfgDeleteGatewayMarkup',
    shift: 'v2.PF4.CfgShiftGatewayMarkup',
    key: ['source', 'symbol'],
    by: 'append',
    make: (i) => ({
      enable: true,
      source: 'LP Test',
      symbol: `GBP${i}`,
      accountName: 'LP Test',
      accountId: 2,
      bidMarkup: -i,
      askMarkup: i,
    }),
    change: (r) => ({ ...r, bidMarkup: -9 }),
    tie: {
      enable: false,
      source: 'LP Test',
      symbol: 'GBP1',
      accountName: 'LP Test',
      accountId: 2,
      bidMarkup: -3,
      askMarkup: 3,
    },
    nullKey: {
      enable: true,
      source: null,
      symbol: 'USDJPY',
      accountName: 'LP Test',
      accountId: 2,
      bidMarkup: 0,
      askMarkup: 0,
    },
  },
  {
    list: 'LiveUpdate',
    read: 'v2.PF4.CfgRequestLiveUpdate',
    update: 'v2.PF4.CfgUpdateLiveUpdate',
    del: 'v2.PF4.CfgDeleteLiveUpdate',
    shift: 'v2.PF4.CfgShiftLiveUpdate',
    key: ['company', 'type'],
    by: 'append',
    make: (i) => ({
      company: 'Test Company',
      path: `/liveupdate/test${i}`,
      version: 4,
      build: 1400 + i,
      maxConnect: 10,
      connections: 0,
      type: i,
      enable: 0,
      totalFiles: i,
    }),
    change: (r) => ({ ...r, maxConnect: 99 }),
    tie: {
      company: 'Test Company',
      path: '/liveupdate/other',
      version: 4,
      build: 1500,
      maxConnect: 5,
      connections: 0,
      type: 1,
      enable: 0,
      totalFiles: 1,
    },
    nullKey: {
      company: null,
      path: '/liveupdate/anonymous',
      version: 4,
      build: 1400,
      maxConnect: 5,
      connections: 0,
      type: 0,
      enable: 0,
      totalFiles: 0,
    },
  },
  {
    list: 'Sync',
    read: 'v2.PF4.CfgRequestSync',
    update: 'v2.PF4.CfgUpdateSync',
    del: 'v2.PF4.CfgDeleteSync',
    shift: 'v2.PF4.CfgShiftSync',
    key: ['server', 'from', 'to'],
    by: 'append',
    make: (i) => ({
      server: 'history-test.example.com:443',
      login: `sync${i}`,
      enable: 0,
      mode: 'Add',
      from: 1000 * i,
      to: 1000 * i + 999,
      securities: '*',
      timeCorrection: 0,
    }),
    change: (r) => ({ ...r, enable: 1 }),
    tie: {
      server: 'history-test.example.com:443',
      login: 'sync-tie',
      enable: 0,
      mode: 'Insert',
      from: 1000,
      to: 1999,
      securities: 'EURUSD',
      timeCorrection: 1,
    },
    nullKey: {
      server: null,
      login: 'sync-null',
      enable: 0,
      mode: 'Add',
      from: 0,
      to: 0,
      securities: '*',
      timeCorrection: 0,
    },
  },
  {
    list: 'Manager',
    read: 'v2.PF4.CfgRequestManager',
    update: 'v2.PF4.CfgUpdateManager',
    del: 'v2.PF4.CfgDeleteManager',
    shift: 'v2.PF4.CfgShiftManager',
    key: ['login'],
    by: 'key',
    keyField: 'login',
    make: (i) => ({
      login: 4000 + i,
      name: `Test manager ${i}`,
      groups: 'demo\\*',
      mailBox: `test${i}`,
      infoDepth: 1,
      ...managerRights(false),
      ipFilter: 0,
      ipFrom: 0,
      ipTo: 0,
    }),
    change: (r) => ({ ...r, name: 'Renamed manager', reports: true }),
  },
  {
    list: 'Feeder',
    read: 'v2.PF4.CfgRequestFeeder',
    update: 'v2.PF4.CfgUpdateFeeder',
    del: 'v2.PF4.CfgDeleteFeeder',
    shift: 'v2.PF4.CfgShiftFeeder',
    key: ['name'],
    by: 'key',
    keyField: 'name',
    make: (i) => ({
      name: `Test feed ${i}`,
      file: `test${i}.feed`,
      server: `feed${i}.example.com:2222`,
      login: `feeder${i}`,
      keywords: '',
      enable: 0,
      dataFeedMode: 'Quotes',
      timeout: 60,
      timeoutReconnect: 5,
      timeoutSleep: 30,
      attempsSleep: 3,
      newsLangId: 0,
    }),
    change: (r) => ({ ...r, enable: 1, keywords: 'test' }),
  },
  {
    list: 'GatewayAccount',
    read: 'v2.PF4.CfgRequestGatewayAccount',
    update: 'v2.PF4.CfgUpdateGatewayAccount',
    del: 'v2.PF4.CfgDeleteGatewayAccount',
    shift: 'v2.PF4.CfgShiftGatewayAccount',
    key: ['name'],
    by: 'key',
    keyField: 'name',
    make: (i) => ({
      enable: false,
      name: `Test LP ${i}`,
      id: 10 + i,
      type: 0,
      login: 9100 + i,
      address: `lp${i}.example.com:443`,
      notifyLogins: [1000],
      flags: 'None',
    }),
    change: (r) => ({ ...r, enable: true, flags: 'Quotes' }),
  },
  {
    list: 'GatewayRule',
    read: 'v2.PF4.CfgRequestGatewayRule',
    update: 'v2.PF4.CfgUpdateGatewayRule',
    del: 'v2.PF4.CfgDeleteGatewayRule',
    shift: 'v2.PF4.CfgShiftGatewayRule',
    key: ['name'],
    by: 'key',
    keyField: 'name',
    make: (i) => ({
      enable: false,
      name: `Test rule ${i}`,
      requestSymbol: 'EURUSD',
      requestGroup: 'demo\\*',
      exeAccountName: 'LP Prime',
      exeAccountId: 1,
      exeMaxDeviation: i,
      exeMaxProfitSlippage: 0,
      exeMaxProfitSlippageLots: 0,
      exeMaxLosingSlippage: 0,
      exeMaxLosingSlippageLots: 0,
      exeAccountPos: 0,
      exeVolumePercent: 50,
      exeFlags: 0,
    }),
    change: (r) => ({ ...r, exeVolumePercent: 75 }),
  },
];

for (const L of LISTS) {
  describe(`${L.list} list`, () => {
    let original: Row[];
    /** Records this walk added to the server's list (removed again by the delete test). */
    const added: Row[] = [];

    beforeAll(async () => {
      original = await simList(L.list);
      // Two entries of the test's own, plus, for unkeyed lists, one with an equal key and one with an empty key field.
      for (const record of [L.make(1), L.make(2), ...(L.tie ? [L.tie] : []), ...(L.nullKey ? [L.nullKey] : [])]) {
        await m.ok(`CfgUpdate${L.list}`, { record });
        added.push(record);
      }
    });

    it(`${L.read}: the server's whole list sorted by (${L.key.join(', ')}), the same in pages of 1 and 2; a tampered cursor is refused`, async () => {
      const server = await simList(L.list);
      expect(server.length).toBe(original.length + added.length);
      const whole = await ok<Row[]>(c, L.read);
      const expected = expectedOrder(server, L.key);
      expect(whole).toHaveLength(expected.length);
      whole.forEach((item, i) => expect(item).toMatchObject(contractPart(L.list, expected[i])));
      if (SERVER_ONLY[L.list])
        whole.forEach((item, i) => expectNoServerOnly(item, `PF4${L.list}`, expected[i], SERVER_ONLY[L.list]));
      for (const record of added)
        expect(
          whole.some((item) => positionOf([item], record) === 0),
          JSON.stringify(record),
        ).toBe(true);
      for (const limit of [1, 2]) {
        const { items, pages } = await allPages<Row>(c, L.read, limit);
        expect(items).toEqual(whole);
        expect(pages).toBe(Math.ceil(whole.length / limit));
      }
      const first = await call<Row[]>(c, L.read, { query: { limit: 2 } });
      expect(first.body.meta.paging).toMatchObject({ hasMore: true });
      expect(first.body.meta.paging!.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      await refusesTamperedCursor(c, L.read);
      await refuses(c, L.read, 'limit', { query: { limit: 0 } });
    });

    it(`${L.update}: ${L.by === 'pos' ? 'writes the entry at pos and appends at the list size' : L.by === 'key' ? `replaces the entry with the same ${L.keyField}, appends a new one` : 'appends the record (no key, no position)'}; the change is seen live`, async () => {
      const before = await simList(L.list);
      const target = L.make(1);
      const at = positionOf(before, target);
      expect(at).toBeGreaterThanOrEqual(0);
      const changed = L.change(target);
      const third = L.make(3);

      if (L.by === 'pos') {
        expect(await ok(c, L.update, { params: { pos: at }, body: changed })).toMatchObject(changed);
        const after = await simList(L.list);
        expect(after).toHaveLength(before.length);
        expect(after[at]).toMatchObject(changed);
        expect(after.filter((_, i) => i !== at)).toEqual(before.filter((_, i) => i !== at));
        // The list size appends.
        expect(await ok(c, L.update, { params: { pos: after.length }, body: third })).toMatchObject(third);
        const appended = await simList(L.list);
        expect(appended).toHaveLength(before.length + 1);
        expect(appended[appended.length - 1]).toMatchObject(third);
        // Beyond that the server refuses; a position that is not a non-negative integer is refused naming pos.
        const beyond = await fails(c, L.update, { params: { pos: appended.length + 1 }, body: third });
        expect(beyond).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
        expect(beyond.message).toContain('position');
        await refuses(c, L.update, 'pos', { params: { pos: -1 }, body: third });
        await refuses(c, L.update, 'pos', { params: { pos: 'first' }, body: third });
      } else if (L.by === 'key') {
        expect(await ok(c, L.update, { body: changed })).toMatchObject(changed);
        const after = await simList(L.list);
        expect(after).toHaveLength(before.length);
        expect(after[at]).toMatchObject(changed);
        expect(after.filter((_, i) => i !== at)).toEqual(before.filter((_, i) => i !== at));
        expect(await ok(c, L.update, { body: third })).toMatchObject(third);
        const appended = await simList(L.list);
        expect(appended).toHaveLength(before.length + 1);
        expect(appended[appended.length - 1]).toMatchObject(third);
        const { [L.keyField!]: _key, ...keyless } = third;
        await refuses(c, L.update, `body.${L.keyField}`, { body: keyless });
      } else {
        expect(await ok(c, L.update, { body: third })).toMatchObject(third);
        const appended = await simList(L.list);
        expect(appended).toHaveLength(before.length + 1);
        expect(appended.slice(0, before.length)).toEqual(before);
        expect(appended[appended.length - 1]).toMatchObject(third);
        // The same record again is another entry: the list has no key to replace by.
        expect(await ok(c, L.update, { body: changed })).toMatchObject(changed);
        const twice = await simList(L.list);
        expect(twice).toHaveLength(before.length + 2);
        expect(twice[at]).toEqual(before[at]);
        added.push(changed);
      }
      added.push(third);
      if (L.by !== 'append') added[0] = changed;

      // The live read sees the written record.
      const whole = await ok<Row[]>(c, L.read);
      expect(whole.some((item) => positionOf([item], changed) === 0)).toBe(true);
      expect(whole.some((item) => positionOf([item], third) === 0)).toBe(true);
      await refuses(
        c,
        L.update,
        'body',
        L.by === 'pos'
          ? { params: { pos: 0 }, body: { ...third, unknownField: 1 } }
          : { body: { ...third, unknownField: 1 } },
      );
    });

    it(`${L.shift}: moves the entry at pos by shift in the server's order (the sorted read keeps its order); out of range refused`, async () => {
      const before = await simList(L.list);
      const sortedBefore = await ok<Row[]>(c, L.read);
      expect(await ok(c, L.shift, { params: { pos: 0 }, query: { shift: 2 } })).toBe(true);
      const moved = await simList(L.list);
      expect(moved).toEqual([before[1], before[2], before[0], ...before.slice(3)]);
      const sortedMoved = await ok<Row[]>(c, L.read);
      expect(new Set(sortedMoved.map((r) => JSON.stringify(r)))).toEqual(
        new Set(sortedBefore.map((r) => JSON.stringify(r))),
      );
      // Back where it was.
      expect(await ok(c, L.shift, { params: { pos: 2 }, query: { shift: -2 } })).toBe(true);
      expect(await simList(L.list)).toEqual(before);

      const outside = await fails(c, L.shift, { params: { pos: 0 }, query: { shift: before.length } });
      expect(outside).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
      const noSuch = await fails(c, L.shift, { params: { pos: before.length }, query: { shift: -1 } });
      expect(noSuch).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
      await refuses(c, L.shift, 'shift', { params: { pos: 0 } });
      await refuses(c, L.shift, 'shift', { params: { pos: 0 }, query: { shift: 'up' } });
      await refuses(c, L.shift, 'pos', { params: { pos: -1 }, query: { shift: 1 } });
      expect(await simList(L.list)).toEqual(before);
    });

    it(`${L.del}: deletes the entry at pos; what the test added is gone and the list is as it was`, async () => {
      for (const record of [...added].reverse()) {
        const server = await simList(L.list);
        const at = positionOf(server, record);
        expect(at, JSON.stringify(record)).toBeGreaterThanOrEqual(0);
        expect(await ok(c, L.del, { params: { pos: at } })).toBe(true);
        const after = await simList(L.list);
        expect(after).toEqual(server.filter((_, i) => i !== at));
      }
      expect(await simList(L.list)).toEqual(original);
      const whole = await ok<Row[]>(c, L.read);
      expect(whole).toHaveLength(original.length);
      for (const record of added) expect(whole.some((item) => positionOf([item], record) === 0)).toBe(false);

      const beyond = await fails(c, L.del, { params: { pos: original.length } });
      expect(beyond).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
      await refuses(c, L.del, 'pos', { params: { pos: -1 } });
      await refuses(c, L.del, 'pos', { params: { pos: '1.5' } });
      expect(await simList(L.list)).toEqual(original);
    });
  });
}

describe('secrets of feeders and syncs', () => {
  const password = (row: Row | undefined) => row?.password as string;

  it('v2.PF4.CfgRequestFeeder and v2.PF4.CfgRequestSync answer none of the passwords the server sends', async () => {
    for (const [id, list] of [
      ['v2.PF4.CfgRequestFeeder', 'Feeder'],
      ['v2.PF4.CfgRequestSync', 'Sync'],
    ] as const) {
      const server = await simList(list);
      expect(
        server.some((row) => password(row).length >= 8),
        `${list} passwords on the wire`,
      ).toBe(true);
      const answered = await ok<Row[]>(c, id);
      expect(answered).toHaveLength(server.length);
      for (const item of answered) {
        const held = server.find((row) =>
          Object.entries(contractPart(list, row)).every(([k, v]) => JSON.stringify(item[k]) === JSON.stringify(v)),
        )!;
        expect(held, JSON.stringify(item)).toBeDefined();
        expectNoServerOnly(item, `PF4${list}`, held, SERVER_ONLY[list]);
      }
    }
  });

  it('v2.PF4.CfgUpdateFeeder replaces a feeder by name and the server keeps its password; the answer has none', async () => {
    const before = await simList('Feeder');
    const at = before.findIndex((f) => f.name === 'News wire');
    const original = before[at];
    expect(password(original)).toMatch(/^\w{16}$/);
    const changed = { ...contractPart('Feeder', original), keywords: 'gateway test', timeout: 301 };
    const answer = await ok<Row>(c, 'v2.PF4.CfgUpdateFeeder', { body: changed });
    expect(answer).toEqual(changed);
    const after = await simList('Feeder');
    expect(after[at]).toEqual({ ...original, keywords: 'gateway test', timeout: 301 });
    expect(password(after[at])).toBe(password(original));
    expectNoServerOnly(answer, 'PF4Feeder', after[at], 'feeder');
    // Put back: the password is still the one the server had.
    expect(await ok(c, 'v2.PF4.CfgUpdateFeeder', { body: contractPart('Feeder', original) })).toEqual(
      contractPart('Feeder', original),
    );
    expect(await simList('Feeder')).toEqual(before);
  });

  it('v2.PF4.CfgUpdateSync appends a source without a password, the others keep theirs; the answer has none', async () => {
    const before = await simList('Sync');
    expect(before.some((row) => password(row).length >= 8)).toBe(true);
    const record = {
      server: 'history-secret.example.com:443',
      login: 'sync-secret',
      enable: 0,
      mode: 'Add',
      from: 5,
      to: 6,
      securities: '*',
      timeCorrection: 0,
    };
    const answer = await ok<Row>(c, 'v2.PF4.CfgUpdateSync', { body: record });
    expect(answer).toEqual(record);
    const after = await simList('Sync');
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after[before.length]).toEqual({ ...record, password: '' });
    expectNoServerOnly(answer, 'PF4Sync', after[0], 'sync');
    expect(await ok(c, 'v2.PF4.CfgDeleteSync', { params: { pos: before.length } })).toBe(true);
    expect(await simList('Sync')).toEqual(before);
  });

  it('refuses an update carrying a password, naming it, and changes nothing', async () => {
    const feeders = await simList('Feeder');
    const syncs = await simList('Sync');
    await refuses(c, 'v2.PF4.CfgUpdateFeeder', 'password', { body: { name: 'Main quotes', password: 'secret' } });
    await refuses(c, 'v2.PF4.CfgUpdateFeeder', 'password', {
      body: { ...contractPart('Feeder', feeders[0]), password: 'secret' },
    });
    await refuses(c, 'v2.PF4.CfgUpdateSync', 'password', {
      body: { server: 'history.example.com:443', password: 'secret' },
    });
    expect(await simList('Feeder')).toEqual(feeders);
    expect(await simList('Sync')).toEqual(syncs);
  });
});

describe('v2.PF4.CfgUpdateAccess', () => {
  it('refuses an address outside IPv4 and a range whose start is above its end, naming the field', async () => {
    await refuses(c, 'v2.PF4.CfgUpdateAccess', 'body.ipTo', {
      params: { pos: 0 },
      body: { action: 1, ipFrom: 0, ipTo: 2 ** 32 },
    });
    await refuses(c, 'v2.PF4.CfgUpdateAccess', 'body.ipFrom', {
      params: { pos: 0 },
      body: { action: 1, ipFrom: ip('10.0.0.9'), ipTo: ip('10.0.0.1') },
    });
    expect((await simList('Access'))[0]).toMatchObject({ comment: 'loopback' });
  });
});

describe('v2.PF4.CfgUpdateSymbolGroup', () => {
  it('rewrites one of the 32 fixed slots, the others untouched; a slot outside 0..31 is refused naming pos', async () => {
    const before = await simList('SymbolGroup');
    expect(before).toHaveLength(32);
    const record = { name: 'Test group', description: 'written by the gateway test' };
    expect(await ok(c, 'v2.PF4.CfgUpdateSymbolGroup', { params: { pos: 30 }, body: record })).toEqual(record);
    const after = await simList('SymbolGroup');
    expect(after[30]).toEqual(record);
    expect(after.filter((_, i) => i !== 30)).toEqual(before.filter((_, i) => i !== 30));
    expect(await ok(c, 'v2.PF4.CfgUpdateSymbolGroup', { params: { pos: 30 }, body: before[30] })).toMatchObject(
      before[30],
    );
    expect(await simList('SymbolGroup')).toEqual(before);
    await refuses(c, 'v2.PF4.CfgUpdateSymbolGroup', 'pos', { params: { pos: 32 }, body: record });
    await refuses(c, 'v2.PF4.CfgUpdateSymbolGroup', 'pos', { params: { pos: -1 }, body: record });
    await refuses(c, 'v2.PF4.CfgUpdateSymbolGroup', 'body.name', { params: { pos: 1 }, body: { name: 5 } });
  });
});

/** Shifts of lists the v2 surface does not read: the server's order is read directly. */
const ORDERED: Array<{ id: string; read: () => Promise<string[]> }> = [
  {
    id: 'v2.PF4.CfgShiftSymbol',
    read: async () => (await m.ok<Row[]>('CfgRequestSymbol')).map((s) => s.symbol as string),
  },
  { id: 'v2.PF4.CfgShiftGroup', read: async () => (await m.ok<Row[]>('GroupsRequest')).map((g) => g.group as string) },
  {
    id: 'v2.PF4.CfgShiftPlugin',
    read: async () => (await m.ok<Row[]>('CfgRequestPlugin')).map((p) => (p.plugin as Row).file as string),
  },
];

for (const O of ORDERED) {
  describe(O.id, () => {
    it("moves the entry at pos by shift in the server's list and back; out of range refused by the server, bad input naming the field", async () => {
      const before = await O.read();
      expect(before.length).toBeGreaterThanOrEqual(2);
      expect(await ok(c, O.id, { params: { pos: 1 }, query: { shift: -1 } })).toBe(true);
      expect(await O.read()).toEqual([before[1], before[0], ...before.slice(2)]);
      expect(await ok(c, O.id, { params: { pos: 0 }, query: { shift: 1 } })).toBe(true);
      expect(await O.read()).toEqual(before);
      const outside = await fails(c, O.id, { params: { pos: 0 }, query: { shift: -1 } });
      expect(outside).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
      await refuses(c, O.id, 'shift', { params: { pos: 0 } });
      await refuses(c, O.id, 'pos', { params: { pos: 'x' }, query: { shift: 1 } });
      expect(await O.read()).toEqual(before);
    });
  });
}

describe('v2.PF4.CfgDeleteSymbol', () => {
  it('is refused while the symbol has open trades, then deletes the symbol at pos: it leaves the configuration and the trading server', async () => {
    const symbols = (await m.ok<Row[]>('CfgRequestSymbol')).map((s) => s.symbol as string);
    const pos = symbols.length - 1;
    const name = symbols[pos];
    const open = (await m.ok<{ items: Row[] }>('TradesRequest', {})).items.filter((t) => t.symbol === name);
    expect(open.length, `open trades of ${name}`).toBeGreaterThan(0);
    const refused = await fails(c, 'v2.PF4.CfgDeleteSymbol', { params: { pos } });
    expect(refused).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    expect(refused.message).toContain(name);
    expect((await m.ok<Row[]>('CfgRequestSymbol')).map((s) => s.symbol)).toEqual(symbols);

    for (const t of open) await m.ok('TradeTransaction', { tradeTransactionType: 'BrOrderDelete', order: t.order });
    expect(await ok(c, 'v2.PF4.CfgDeleteSymbol', { params: { pos } })).toBe(true);
    expect((await m.ok<Row[]>('CfgRequestSymbol')).map((s) => s.symbol)).toEqual(symbols.slice(0, pos));
    expect((await m.fails('SymbolRequest', { symbol: name })).message).toContain('not found');

    const beyond = await fails(c, 'v2.PF4.CfgDeleteSymbol', { params: { pos } });
    expect(beyond).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.CfgDeleteSymbol', 'pos', { params: { pos: -3 } });
  });
});

describe('v2.PF4.CfgRequestCommon and v2.PF4.CfgUpdateCommon', () => {
  it('reads the common configuration live', async () => {
    const common = await ok<Row>(c, 'v2.PF4.CfgRequestCommon');
    expect(common).toEqual(await m.ok('CfgRequestCommon'));
    expect(common).toMatchObject({ name: 'demo-pf4', build: 1420 });
  });

  it('replaces the supplied fields only: the owner changes, name, build, version and time zone keep their values', async () => {
    const before = await m.ok<Row>('CfgRequestCommon');
    const owner = await ok<Row>(c, 'v2.PF4.CfgUpdateCommon', { body: { owner: 'Gateway Test Owner Ltd' } });
    expect(owner).toEqual({ ...before, owner: 'Gateway Test Owner Ltd' });
    expect(await m.ok('CfgRequestCommon')).toEqual(owner);
    const zone = await ok<Row>(c, 'v2.PF4.CfgUpdateCommon', { body: { timeZone: 3, keepTicks: 14 } });
    expect(zone).toEqual({ ...before, owner: 'Gateway Test Owner Ltd', timeZone: 3 });
    expect(await ok(c, 'v2.PF4.CfgRequestCommon')).toEqual(zone);
    // Put back.
    expect(
      await ok(c, 'v2.PF4.CfgUpdateCommon', { body: { owner: before.owner, timeZone: before.timeZone, keepTicks: 7 } }),
    ).toEqual(before);
    expect(await m.ok('CfgRequestCommon')).toEqual(before);
  });

  it('writes back the whole section it read: every setting outside the DTO fields supplied keeps its server value', async () => {
    const full = await m.ok<Row>('CfgRequestCommon', { full: true });
    // The write carries every DTO field of the section as read live, so settings the call does not name stay put even
    // on a server that replaces the section whole.
    await ok(c, 'v2.PF4.CfgUpdateCommon', { body: { minClient: Number(full.minClient) + 1 } });
    expect(await m.ok('CfgRequestCommon', { full: true })).toEqual({ ...full, minClient: Number(full.minClient) + 1 });
    await ok(c, 'v2.PF4.CfgUpdateCommon', { body: { minClient: full.minClient } });
    expect(await m.ok('CfgRequestCommon', { full: true })).toEqual(full);
  });

  it('refuses read-only and unknown fields and wrong types, naming the field', async () => {
    await refuses(c, 'v2.PF4.CfgUpdateCommon', 'build', { body: { build: 1 } });
    await refuses(c, 'v2.PF4.CfgUpdateCommon', 'body.timeZone', { body: { timeZone: 'UTC' } });
    await refuses(c, 'v2.PF4.CfgUpdateCommon', 'body', {});
  });
});

describe('v2.PF4.CfgRequestTime and v2.PF4.CfgUpdateTime', () => {
  it('reads the 168 access hours live', async () => {
    const time = await ok<{ accessHours: number[] }>(c, 'v2.PF4.CfgRequestTime');
    expect(time.accessHours).toHaveLength(168);
    expect(time).toEqual(await m.ok('CfgRequestTime'));
  });

  it('writes exactly 168 entries, values other than 0 and 1 passed through, and echoes the merged record', async () => {
    const before = (await m.ok<{ accessHours: number[] }>('CfgRequestTime')).accessHours;
    const hours = [...before];
    hours[0] = 0; // Sunday 00:00 denied
    hours[24 * 3 + 5] = 2; // an unvalidated value passes through
    const answer = await ok<{ accessHours: number[] }>(c, 'v2.PF4.CfgUpdateTime', { body: { accessHours: hours } });
    expect(answer).toEqual({ accessHours: hours });
    expect(await m.ok('CfgRequestTime')).toEqual({ accessHours: hours });
    expect(await ok(c, 'v2.PF4.CfgRequestTime')).toEqual({ accessHours: hours });
    // Put back.
    expect(await ok(c, 'v2.PF4.CfgUpdateTime', { body: { accessHours: before } })).toEqual({ accessHours: before });
    expect(await m.ok('CfgRequestTime')).toEqual({ accessHours: before });
  });

  it('refuses a matrix of another length, a missing matrix and non-integers, naming body.accessHours', async () => {
    const before = await m.ok('CfgRequestTime');
    await refuses(c, 'v2.PF4.CfgUpdateTime', 'body.accessHours', { body: { accessHours: Array(167).fill(1) } });
    await refuses(c, 'v2.PF4.CfgUpdateTime', 'body.accessHours', { body: { accessHours: Array(169).fill(1) } });
    await refuses(c, 'v2.PF4.CfgUpdateTime', 'body.accessHours', { body: {} });
    await refuses(c, 'v2.PF4.CfgUpdateTime', 'body.accessHours', {
      body: { accessHours: [...Array(167).fill(1), 0.5] },
    });
    expect(await m.ok('CfgRequestTime')).toEqual(before);
  });
});

describe('v2.PF4.CfgRequestBackup and v2.PF4.CfgUpdateBackup', () => {
  const PRESERVED = ['fullBackupLastTime', 'archiveLastTime', 'exportLastTime', 'watchTimestamp'];

  /** The section as the server sends it (with the slave server's password) and as the contract has it. */
  const serverBackup = async () => {
    const raw = await m.ok<Row>('CfgRequestBackup');
    return { raw, record: withoutServerOnly('backup', raw) };
  };

  it('reads the backup configuration live, without the slave-server credential', async () => {
    const backup = await ok<Row>(c, 'v2.PF4.CfgRequestBackup');
    const { raw, record } = await serverBackup();
    expect(raw.watchPassword).toMatch(/^\w{16}$/);
    expect(backup).toEqual(record);
    expectNoServerOnly(backup, 'PF4Backup', raw, 'backup');
    expect(Object.keys(backup).filter((k) => /pass|secret|credential/i.test(k))).toEqual([]);
  });

  it("overlays the supplied fields and keeps the last-completion times whatever the body says, and the slave server's password", async () => {
    const { raw, record: before } = await serverBackup();
    /** After each write the server's section is the answer plus the slave server's password as it was. */
    const expectServer = async (answer: Row) => {
      const now = await serverBackup();
      expect(now.record).toEqual(answer);
      expect(now.raw.watchPassword).toBe(raw.watchPassword);
      expectNoServerOnly(answer, 'PF4Backup', now.raw, 'backup');
    };
    const body = {
      ...before,
      fullBackupPath: '/backup/elsewhere',
      archivePeriod: 'M30',
      fullBackupLastTime: '2001-02-03T04:05:06Z',
      archiveLastTime: '2001-02-03T04:05:06Z',
      exportLastTime: '2001-02-03T04:05:06Z',
      watchTimestamp: 12345,
    };
    const answer = await ok<Row>(c, 'v2.PF4.CfgUpdateBackup', { body });
    expect(answer).toEqual({ ...before, fullBackupPath: '/backup/elsewhere', archivePeriod: 'M30' });
    for (const field of PRESERVED) expect(answer[field], field).toEqual(before[field]);
    await expectServer(answer);
    // A partial body: only its field changes, the earlier change stays.
    const partial = await ok<Row>(c, 'v2.PF4.CfgUpdateBackup', { body: { exportPath: '/backup/export2' } });
    expect(partial).toEqual({ ...answer, exportPath: '/backup/export2' });
    await expectServer(partial);
    // Put back.
    const back = await ok<Row>(c, 'v2.PF4.CfgUpdateBackup', {
      body: {
        fullBackupPath: before.fullBackupPath,
        archivePeriod: before.archivePeriod,
        exportPath: before.exportPath,
      },
    });
    expect(back).toEqual(before);
    await expectServer(back);
    expect(await m.ok('CfgRequestBackup')).toEqual(raw);
  });

  it('refuses an unknown period, an unknown field and a missing body, naming the field', async () => {
    await refuses(c, 'v2.PF4.CfgUpdateBackup', 'body.fullBackupPeriod', { body: { fullBackupPeriod: 'Y9' } });
    const before = await m.ok<Row>('CfgRequestBackup');
    await refuses(c, 'v2.PF4.CfgUpdateBackup', 'slavePassword', { body: { slavePassword: 'x' } });
    await refuses(c, 'v2.PF4.CfgUpdateBackup', 'watchPassword', { body: { watchPassword: 'x' } });
    expect(await m.ok('CfgRequestBackup')).toEqual(before);
    await refuses(c, 'v2.PF4.CfgUpdateBackup', 'body', {});
  });
});
