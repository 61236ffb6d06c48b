/**
 * Every PF4 configuration list section through its CfgRequest / CfgUpdate / CfgDelete / CfgShift commands, from one
 * table: the seeded entries in server order, update at a position, append, update by key, delete and shift by
 * position, out-of-range positions and bad records with the field named, the admin right, and the journal.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { PF4_CONFIG_LISTS, ip, type Pf4ConfigListName } from './pf4Config.js';
import { PF4_RIGHTS, PF4_SESSION_COMMANDS } from './pf4Rights.js';
import { PF4_SERVER_ONLY, withoutServerOnly, type Pf4ServerOnlyKind } from './serverOnlyFields.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

type Rec = Record<string, any>;

interface ListCase {
  list: Pf4ConfigListName;
  /** How error messages name an entry of the list. */
  what: string;
  schema: { parse(v: unknown): unknown };
  /**
   * open: add, update, delete and shift freely; keyed: the same, and an update without a position goes to the entry
   * with the record's key; loaded: entries are the server's own (update by key and shift only); fixed: slots
   * rewritten in place only.
   */
  kind: 'open' | 'keyed' | 'loaded' | 'fixed';
  /** The key field as messages name it (keyed and loaded lists). */
  key?: string;
  /** A string field that is not the key (keyed lists). */
  edit?: string;
  /** The seeded entries, in server order, by label. */
  seeded: string[];
  label: (r: Rec) => string;
  /** A valid record, distinct for every n and from every seeded entry. */
  make: (n: number) => Rec;
  /** A record with one field of the wrong type, and that field. */
  bad: [Rec, string];
  /** The entries carry server-only fields of this kind (a password): never taken from a record, kept by a write. */
  serverOnly?: Pf4ServerOnlyKind;
}

const CASES: ListCase[] = [
  {
    list: 'Holiday',
    what: 'holiday',
    schema: records.PF4Holiday,
    kind: 'open',
    seeded: ['Christmas Day', 'New Year', 'Independence Day'],
    label: (r) => r.description,
    make: (n) => ({
      year: 2026,
      month: 5,
      day: n,
      from: 0,
      to: 0,
      symbol: 'All',
      description: `Closure ${n}`,
      enable: true,
    }),
    bad: [{ year: '2026' }, 'year'],
  },
  {
    list: 'Manager',
    what: 'manager',
    schema: records.PF4ManagerRights,
    kind: 'keyed',
    key: 'login',
    edit: 'name',
    seeded: ['1000', '2000', '3000'],
    label: (r) => String(r.login),
    make: (n) => ({
      login: 500 + n,
      name: `Desk ${n}`,
      groups: 'demo\\*',
      mailBox: `desk${n}`,
      infoDepth: 1,
      manager: true,
      trades: true,
    }),
    bad: [{ login: 7, admin: 'yes' }, 'admin'],
  },
  {
    list: 'Access',
    what: 'access rule',
    schema: records.PF4Access,
    kind: 'open',
    seeded: ['loopback', 'office network', 'blocked test range'],
    label: (r) => r.comment,
    make: (n) => ({ action: 1, ipFrom: ip(`172.16.${n}.0`), ipTo: ip(`172.16.${n}.255`), comment: `partner ${n}` }),
    bad: [{ action: 'allow' }, 'action'],
  },
  {
    list: 'DataServer',
    what: 'data server',
    schema: records.PF4DataServer,
    kind: 'open',
    seeded: ['Access point Europe', 'Access point Asia'],
    label: (r) => r.description,
    make: (n) => ({
      server: `access${n + 2}.example.com:443`,
      ip: 0,
      description: `Access point ${n}`,
      isProxy: 0,
      priority: n,
      loading: 0,
      ipInternal: 0,
      isWitness: 0,
    }),
    bad: [{ priority: 'high' }, 'priority'],
  },
  {
    list: 'Feeder',
    what: 'feeder',
    schema: records.PF4Feeder,
    kind: 'keyed',
    key: 'name',
    edit: 'keywords',
    seeded: ['Main quotes', 'News wire'],
    label: (r) => r.name,
    make: (n) => ({
      name: `Backup feed ${n}`,
      file: `backup${n}.feed`,
      server: `feed${n}.example.com:2222`,
      login: 'feed',
      keywords: '',
      enable: 0,
      dataFeedMode: 'Quotes',
      timeout: 120,
      timeoutReconnect: 5,
      timeoutSleep: 60,
      attempsSleep: 10,
      newsLangId: 0,
    }),
    bad: [{ name: 'Ticks', dataFeedMode: 'Ticks' }, 'dataFeedMode'],
    serverOnly: 'feeder',
  },
  {
    list: 'GatewayAccount',
    what: 'gateway account',
    schema: records.PF4GatewayAccount,
    kind: 'keyed',
    key: 'name',
    edit: 'address',
    seeded: ['LP Prime'],
    label: (r) => r.name,
    make: (n) => ({
      enable: true,
      name: `LP ${n}`,
      id: 1 + n,
      type: 0,
      login: 9001 + n,
      address: `lp${n}.example.com:443`,
      notifyLogins: [1000],
      flags: 'None',
    }),
    bad: [{ name: 'LP X', notifyLogins: 'all' }, 'notifyLogins'],
  },
  {
    list: 'GatewayMarkup',
    what: 'gateway markup',
    schema: records.PF4GatewayMarkup,
    kind: 'open',
    seeded: ['EURUSD'],
    label: (r) => r.symbol,
    make: (n) => ({
      enable: true,
      source: 'LP Prime',
      symbol: ['GBPUSD', 'USDJPY', 'XAUUSD', 'US30', 'BTCUSD', 'AUDUSD'][n - 1],
      accountName: 'LP Prime',
      accountId: 1,
      bidMarkup: -n,
      askMarkup: n,
    }),
    bad: [{ bidMarkup: 0.5 }, 'bidMarkup'],
  },
  {
    list: 'GatewayRule',
    what: 'gateway rule',
    schema: records.PF4GatewayRule,
    kind: 'keyed',
    key: 'name',
    edit: 'requestSymbol',
    seeded: ['Forex to LP'],
    label: (r) => r.name,
    make: (n) => ({
      enable: true,
      name: `Rule ${n}`,
      requestSymbol: 'XAU*',
      requestGroup: 'real\\*',
      exeAccountName: `LP ${n}`,
      exeAccountId: n,
      exeMaxDeviation: 10,
      exeVolumePercent: 100,
      exeFlags: 0,
    }),
    bad: [{ name: 'Rule X', exeFlags: 'fast' }, 'exeFlags'],
  },
  {
    list: 'LiveUpdate',
    what: 'live update',
    schema: records.PF4LiveUpdate,
    kind: 'open',
    seeded: ['/liveupdate/terminal'],
    label: (r) => r.path,
    make: (n) => ({
      company: 'Simulated Markets Ltd',
      path: `/liveupdate/build${n}`,
      version: 4,
      build: 1420 + n,
      maxConnect: 50,
      connections: 0,
      type: 1,
      enable: 1,
      totalFiles: 10,
    }),
    bad: [{ enable: true }, 'enable'],
  },
  {
    list: 'Sync',
    what: 'sync',
    schema: records.PF4Sync,
    kind: 'open',
    seeded: ['history.example.com:443'],
    label: (r) => r.server,
    make: (n) => ({
      server: `history${n + 1}.example.com:443`,
      login: `sync${n}`,
      enable: 1,
      mode: 'Add',
      from: 0,
      to: 0,
      securities: '*',
      timeCorrection: 0,
    }),
    bad: [{ mode: 'Everything' }, 'mode'],
    serverOnly: 'sync',
  },
  {
    list: 'Plugin',
    what: 'plugin',
    schema: records.PF4PluginParam,
    kind: 'loaded',
    key: 'plugin.file',
    seeded: ['echo.dll', 'risk.dll'],
    label: (r) => r.plugin.file,
    make: (n) => ({ plugin: { file: `extra${n}.dll`, name: `Extra ${n}`, enabled: 1 }, params: [] }),
    bad: [{ plugin: { file: 'echo.dll', enabled: 'on' } }, 'plugin.enabled'],
  },
  {
    list: 'SymbolGroup',
    what: 'symbol group',
    schema: records.PF4SymbolGroup,
    kind: 'fixed',
    seeded: ['Forex', 'Metals', 'Indices', 'Energies', 'Crypto', ...Array<string>(27).fill('')],
    label: (r) => r.name,
    make: (n) => ({ name: `Group ${n}`, description: `Slot ${n}` }),
    bad: [{ name: 7 }, 'name'],
  },
];

/** A world whose manager list has three entries, like the other multi-entry lists. */
function world() {
  return pf4Harness({
    managers: [
      { login: 1000, password: 'pw' },
      { login: 2000, password: 'pw', rights: ['manager'] },
      { login: 3000, password: 'pw', rights: ['reports'] },
    ],
  });
}

function lists(c: ListCase) {
  const h = world();
  const request = (): Rec[] => h.call(`CfgRequest${c.list}`);
  const labels = () => request().map(c.label);
  const cmd = (op: 'Update' | 'Delete' | 'Shift') => `Cfg${op}${c.list}`;
  return { h, request, labels, cmd };
}

/** What a manager may send back of an entry it read: the entry without its server-only fields. */
const sendable = (c: ListCase, entry: Rec): Rec => (c.serverOnly ? withoutServerOnly(c.serverOnly, entry) : entry);

/** The entry the server stores for `record` written over `replaced` (or as a new entry): the server-only fields carried over. */
function storedAs(c: ListCase, record: Rec, replaced?: Rec): Rec {
  if (!c.serverOnly) return record;
  return {
    ...record,
    ...Object.fromEntries(PF4_SERVER_ONLY[c.serverOnly].map((f) => [f, replaced ? replaced[f] : ''])),
  };
}

const movable = CASES.filter((c) => c.kind === 'open' || c.kind === 'keyed');
const shiftable = CASES.filter((c) => c.kind !== 'fixed');

it('the table covers every list section', () => {
  expect(CASES.map((c) => c.list).sort()).toEqual([...PF4_CONFIG_LISTS].sort());
});

describe.each(CASES)('$list', (c) => {
  it('answers the seeded entries in server order and in contract shape', () => {
    const { request, labels } = lists(c);
    expect(labels().slice(0, c.seeded.length)).toEqual(c.seeded);
    expect(request()).toHaveLength(c.seeded.length);
    for (const entry of request()) c.schema.parse(sendable(c, entry));
    // Seeded entries with a password carry it, a different one each, beside the contract's fields.
    if (c.serverOnly) {
      for (const field of PF4_SERVER_ONLY[c.serverOnly]) {
        const values = request().map((entry) => entry[field]);
        expect(
          values.every((v) => typeof v === 'string' && v.length >= 8),
          field,
        ).toBe(true);
        expect(new Set(values).size, field).toBe(values.length);
      }
      expect(() => c.schema.parse(request()[0])).toThrow();
    }
  });

  it('refuses a record with a field of the wrong type, an unknown field or no record, naming the field', () => {
    const { h, labels, cmd } = lists(c);
    const before = labels();
    const pos = c.kind === 'fixed' ? { pos: 0 } : {};
    expect(h.fails(cmd('Update'), { ...pos, record: c.bad[0] })).toMatchObject({ code: R.InvalidData });
    expect(h.fails(cmd('Update'), { ...pos, record: c.bad[0] }).message).toMatch(new RegExp(`^record\\.${c.bad[1]}: `));
    expect(h.fails(cmd('Update'), { ...pos, record: { ...c.make(1), colour: 3 } }).message).toMatch(
      /^record\.colour: /,
    );
    expect(h.fails(cmd('Update'), pos).message).toBe('record must be an object');
    expect(h.fails(cmd('Update'), { pos: -2, record: c.make(1) }).message).toMatch(/^pos must be between -1 and /);
    expect(labels()).toEqual(before);
  });

  it('needs the admin right for every change', () => {
    const { h, labels, cmd } = lists(c);
    const changes = [
      cmd('Update'),
      ...(h.world.commands().has(cmd('Delete')) ? [cmd('Delete')] : []),
      ...(h.world.commands().has(cmd('Shift')) ? [cmd('Shift')] : []),
    ];
    for (const change of changes) {
      expect(h.fails(change, { pos: 0, shift: 0, record: c.make(1) }, ['manager', 'reports'])).toEqual({
        code: R.NotEnoughRights,
        message: `${change} needs the admin right`,
      });
    }
    expect(labels().slice(0, c.seeded.length)).toEqual(c.seeded);
  });
});

describe.each(movable)('$list updates, appends and deletes by position', (c) => {
  it('writes at a position, appends at the end, and deletes by position', () => {
    const { h, request, labels, cmd } = lists(c);
    const n = c.seeded.length;
    const [a, b, d, e] = [c.make(1), c.make(2), c.make(3), c.make(4)];
    // Append at the size, at -1 and (a new key, or an unkeyed list) without a position; each answers the entry stored
    // (a new entry with a password has an empty one).
    expect(h.call(cmd('Update'), { pos: n, record: a })).toEqual(storedAs(c, a));
    expect(h.call(cmd('Update'), { pos: -1, record: b })).toEqual(storedAs(c, b));
    expect(h.call(cmd('Update'), { record: d })).toEqual(storedAs(c, d));
    expect(labels()).toEqual([...c.seeded, c.label(a), c.label(b), c.label(d)]);
    // Replace at a position: the size stays, the entry there is the new record (keeping the replaced entry's password).
    const replaced = request()[1];
    expect(h.call(cmd('Update'), { pos: 1, record: e })).toEqual(storedAs(c, e, replaced));
    const after = [...c.seeded, c.label(a), c.label(b), c.label(d)];
    after[1] = c.label(e);
    expect(labels()).toEqual(after);
    expect(request()[1]).toEqual(storedAs(c, e, replaced));
    // Delete by position: the entries after it move up.
    expect(h.call(cmd('Delete'), { pos: 1 })).toBe(true);
    after.splice(1, 1);
    expect(labels()).toEqual(after);
    expect(h.call(cmd('Delete'), { pos: after.length - 1 })).toBe(true);
    expect(labels()).toEqual(after.slice(0, -1));
    for (const entry of request()) c.schema.parse(sendable(c, entry));
  });

  it('refuses positions outside the list', () => {
    const { h, labels, cmd } = lists(c);
    const n = c.seeded.length;
    const range = `(0..${n - 1})`;
    expect(h.fails(cmd('Update'), { pos: n + 1, record: c.make(1) })).toEqual({
      code: R.InvalidData,
      message: `${c.what} position ${n + 1} is out of range ${range}`,
    });
    expect(h.fails(cmd('Delete'), { pos: n }).message).toBe(`${c.what} position ${n} is out of range ${range}`);
    expect(h.fails(cmd('Delete'), { pos: -1 }).message).toMatch(/^pos must be between 0 and /);
    expect(h.fails(cmd('Delete'), {}).message).toBe('pos must be an integer');
    expect(labels()).toEqual(c.seeded);
  });
});

describe.each(movable.filter((c) => c.kind === 'keyed'))('$list is keyed by $key', (c) => {
  it("updates the entry with the record's key in place when no position is given, and refuses the key elsewhere", () => {
    const { h, request, labels, cmd } = lists(c);
    const first = request()[0];
    const changed = { ...sendable(c, first), [c.edit as string]: 'edited' };
    // The entry of that key is replaced; what the record cannot carry (a password) is the entry's as before.
    expect(h.call(cmd('Update'), { record: changed })).toEqual(storedAs(c, changed, first));
    expect(labels()).toEqual(c.seeded);
    expect(request()[0]).toEqual(storedAs(c, changed, first));
    if (c.serverOnly)
      expect(request()[0][PF4_SERVER_ONLY[c.serverOnly][0]]).toBe(first[PF4_SERVER_ONLY[c.serverOnly][0]]);
    if (c.seeded.length > 1) {
      expect(h.fails(cmd('Update'), { pos: 1, record: sendable(c, first) })).toEqual({
        code: R.InvalidData,
        message: `${c.what} ${c.label(first)} already exists at position 0`,
      });
    }
    const { [c.key as string]: _key, ...keyless } = c.make(1);
    expect(h.fails(cmd('Update'), { record: keyless }).message).toBe(`record.${c.key} is required`);
    expect(
      h.fails(cmd('Update'), {
        record: { ...c.make(1), [c.key as string]: typeof first[c.key as string] === 'number' ? 0 : '' },
      }).message,
    ).toMatch(new RegExp(`^record\\.${c.key} (is required|must be positive)$`));
    expect(labels()).toEqual(c.seeded);
  });
});

describe.each(shiftable)('$list shifts by position', (c) => {
  it('moves an entry by a number of places either way', () => {
    const { h, labels, cmd } = lists(c);
    for (const n of [1, 2])
      if (c.kind !== 'loaded' && labels().length < 3) h.call(cmd('Update'), { record: c.make(n) });
    const order = labels();
    const last = order.length - 1;
    expect(h.call(cmd('Shift'), { pos: last, shift: -last })).toBe(true);
    expect(labels()).toEqual([order[last], ...order.slice(0, last)]);
    expect(h.call(cmd('Shift'), { pos: 0, shift: 1 })).toBe(true);
    expect(labels()).toEqual([order[0], order[last], ...order.slice(1, last)]);
    expect(h.call(cmd('Shift'), { pos: 1, shift: 0 })).toBe(true);
    expect(labels()).toEqual([order[0], order[last], ...order.slice(1, last)]);
  });

  it('refuses a shift from outside the list or past either end', () => {
    const { h, labels, cmd } = lists(c);
    const n = c.seeded.length;
    expect(h.fails(cmd('Shift'), { pos: n, shift: -1 })).toEqual({
      code: R.InvalidData,
      message: `${c.what} position ${n} is out of range (0..${n - 1})`,
    });
    expect(h.fails(cmd('Shift'), { pos: 0, shift: -1 }).message).toBe(
      `cannot shift ${c.what} at position 0 by -1: the list has ${n} entries`,
    );
    expect(h.fails(cmd('Shift'), { pos: n - 1, shift: 1 }).message).toBe(
      `cannot shift ${c.what} at position ${n - 1} by 1: the list has ${n} entries`,
    );
    expect(h.fails(cmd('Shift'), { pos: 0 }).message).toBe('shift must be an integer');
    expect(h.fails(cmd('Shift'), { pos: 0, shift: 0.5 }).message).toBe('shift must be an integer');
    expect(labels()).toEqual(c.seeded);
  });
});

describe('lists with their own rules', () => {
  it('keeps the server order of access rules: a rule appended for a lower address stays last', () => {
    const { h, labels } = lists(CASES.find((c) => c.list === 'Access')!);
    h.call('CfgUpdateAccess', {
      record: { action: 1, ipFrom: ip('1.0.0.0'), ipTo: ip('1.0.0.255'), comment: 'first by address' },
    });
    expect(labels()).toEqual(['loopback', 'office network', 'blocked test range', 'first by address']);
    h.call('CfgShiftAccess', { pos: 3, shift: -3 });
    expect(labels()).toEqual(['first by address', 'loopback', 'office network', 'blocked test range']);
  });

  it('refuses an access rule whose range is reversed or not an IPv4 address', () => {
    const h = world();
    expect(
      h.fails('CfgUpdateAccess', { record: { action: 0, ipFrom: ip('10.0.0.9'), ipTo: ip('10.0.0.1') } }).message,
    ).toBe('record.ipFrom must not be above record.ipTo');
    expect(h.fails('CfgUpdateAccess', { record: { action: 0, ipFrom: 0, ipTo: 2 ** 32 } }).message).toBe(
      'record.ipTo must be an IPv4 address (0..4294967295)',
    );
    expect(h.fails('CfgUpdateAccess', { record: { action: 0, ipFrom: -1, ipTo: 1 } }).message).toBe(
      'record.ipFrom must be an IPv4 address (0..4294967295)',
    );
  });

  it('keeps the server order of managers: a lower login appended stays last, and a deleted record leaves no rights', () => {
    const { h, labels } = lists(CASES.find((c) => c.list === 'Manager')!);
    h.call('CfgUpdateManager', { record: { login: 10, name: 'Low login', admin: true } });
    expect(labels()).toEqual(['1000', '2000', '3000', '10']);
    expect(h.world.managerRights(10)).toEqual(['admin']);
    h.call('CfgDeleteManager', { pos: 1 });
    expect(labels()).toEqual(['1000', '3000', '10']);
    // Without a record the session falls back to the simulator config's rights.
    expect(h.world.managerRights(2000)).toBeUndefined();
  });

  it('keeps the 32 symbol groups as slots: written in place, never appended, deleted or moved', () => {
    const h = world();
    expect(
      h.call('CfgUpdateSymbolGroup', { pos: 31, record: { name: 'Bonds', description: 'Government bonds' } }),
    ).toEqual({ name: 'Bonds', description: 'Government bonds' });
    expect(h.call('CfgRequestSymbolGroup')).toHaveLength(32);
    expect(h.call('CfgRequestSymbolGroup')[31].name).toBe('Bonds');
    for (const pos of [32, -1, undefined]) {
      expect(h.fails('CfgUpdateSymbolGroup', { pos, record: { name: 'X' } }).message).toBe(
        'pos must be between 0 and 31',
      );
    }
    expect(h.world.commands().has('CfgDeleteSymbolGroup')).toBe(false);
    expect(h.world.commands().has('CfgShiftSymbolGroup')).toBe(false);
  });

  it('configures loaded plugins only: no plugin is added or deleted through the configuration', () => {
    const { h, labels } = lists(CASES.find((c) => c.list === 'Plugin')!);
    expect(h.fails('CfgUpdatePlugin', { record: { plugin: { file: 'extra.dll', name: 'Extra' } } })).toEqual({
      code: R.InvalidData,
      message: 'plugin extra.dll not found',
    });
    expect(h.fails('CfgUpdatePlugin', { record: { params: [] } }).message).toBe('record.plugin.file is required');
    expect(h.fails('CfgUpdatePlugin', { pos: 0, record: { plugin: { file: 'risk.dll' } } }).message).toBe(
      'plugin risk.dll already exists at position 1',
    );
    expect(h.world.commands().has('CfgDeletePlugin')).toBe(false);
    expect(labels()).toEqual(['echo.dll', 'risk.dll']);
  });

  it('keeps the passwords of feeders and syncs: a record carrying one is refused, shifts move it with its entry', () => {
    for (const c of CASES.filter((x) => x.serverOnly)) {
      const { h, request, cmd } = lists(c);
      const field = PF4_SERVER_ONLY[c.serverOnly!][0];
      const before = request();
      expect(h.fails(cmd('Update'), { pos: 0, record: before[0] }).message).toBe(
        `record.${field}: Unrecognized key: "${field}"`,
      );
      expect(
        h.fails(cmd('Update'), { pos: 0, record: { ...sendable(c, before[0]), [field]: 'chosen' } }).message,
      ).toMatch(new RegExp(`^record\\.${field}: `));
      expect(request()).toEqual(before);
      h.call(cmd('Update'), { record: c.make(1) });
      h.call(cmd('Shift'), { pos: before.length, shift: -before.length });
      expect(request().slice(1)).toEqual(before);
      expect(request()[0]).toEqual(storedAs(c, c.make(1)));
    }
  });

  it('journals every change with the list and the position', () => {
    const h = world();
    const mark = h.world.journalEntries().length;
    h.call('CfgUpdateSync', { record: CASES.find((c) => c.list === 'Sync')!.make(1) });
    h.call('CfgUpdateSync', { pos: 0, record: CASES.find((c) => c.list === 'Sync')!.make(2) });
    h.call('CfgShiftSync', { pos: 1, shift: -1 });
    h.call('CfgDeleteSync', { pos: 0 });
    h.fails('CfgDeleteSync', { pos: 5 });
    expect(
      h.world
        .journalEntries()
        .slice(mark)
        .map((l) => l.message),
    ).toEqual([
      'config: sync at 1 added',
      'config: sync at 0 written',
      'config: sync at 1 moved to 0',
      'config: sync at 0 deleted',
    ]);
  });
});

describe('the rights table', () => {
  it('names only commands the server has: a list change it lacks is an unknown command, with or without the admin right', () => {
    const h = pf4Harness();
    for (const cmd of ['CfgDeletePlugin', 'CfgDeleteSymbolGroup', 'CfgShiftSymbolGroup']) {
      expect(h.world.commands().requiredRight(cmd, {}), cmd).toBeUndefined();
      expect(h.fails(cmd, { pos: 0, shift: 1 }, ['manager'])).toEqual({
        code: R.InvalidData,
        message: `unknown command ${cmd}`,
      });
      expect(h.fails(cmd, { pos: 0, shift: 1 }, ['admin'])).toEqual({
        code: R.InvalidData,
        message: `unknown command ${cmd}`,
      });
    }
    expect(h.call('CfgRequestSymbolGroup')).toHaveLength(32);
    expect(h.call('CfgRequestPlugin').map((p: Rec) => p.plugin.file)).toEqual(['echo.dll', 'risk.dll']);
    // The changes a list does have still need the administrator.
    expect(h.fails('CfgShiftPlugin', { pos: 0, shift: 1 }, ['manager'])).toEqual({
      code: R.NotEnoughRights,
      message: 'CfgShiftPlugin needs the admin right',
    });
  });

  it('has an entry only for registered commands, besides the ones the protocol layer answers', () => {
    const h = pf4Harness();
    const registered = new Set(h.world.commands().names());
    const stray = Object.keys(PF4_RIGHTS).filter((cmd) => !registered.has(cmd) && !PF4_SESSION_COMMANDS.has(cmd));
    expect(stray).toEqual([]);
    for (const cmd of PF4_SESSION_COMMANDS) {
      expect(registered.has(cmd), cmd).toBe(false);
      expect(h.world.commands().requiredRight(cmd, {}), cmd).toBeDefined();
    }
  });
});
