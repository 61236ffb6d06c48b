/**
 * The input rules of the v2 PF4 configuration operations (shared/catalog/v2/pf4/config.ts), as the edge applies them
 * (validateInputs): the access-hour matrix, the backup section's preserved fields, keyed list records, firewall
 * ranges, list positions and shifts, and what each entry declares (time-out class, scope, answer).
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { BACKUP_PRESERVED, config } from './config.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';

const op = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');

/** What an entry declares besides its schemas, functions marked as such. */
const declared = (entry: Operation) =>
  JSON.parse(
    JSON.stringify(
      {
        tag: entry.tag,
        timeout: entry.timeout,
        read: entry.read,
        mutating: entry.mutating,
        destructive: entry.destructive,
        scope: entry.scope,
        paged: entry.paged,
        bodyLimitBytes: entry.bodyLimitBytes,
        controlCharacters: entry.controlCharacters,
        answer: entry.answer,
      },
      (_key, value) => (typeof value === 'function' ? 'function' : value),
    ),
  );

const hours = (count: number, value = 0) => Array.from({ length: count }, () => value);

const READ_LISTS: Record<string, string | string[]> = {
  Holiday: ['year', 'month', 'day', 'from', 'symbol'],
  Manager: 'login',
  Access: ['ipFrom', 'ipTo'],
  DataServer: ['server'],
  Feeder: 'name',
  GatewayAccount: 'name',
  GatewayMarkup: ['source', 'symbol'],
  GatewayRule: 'name',
  LiveUpdate: ['company', 'type'],
  Sync: ['server', 'from', 'to'],
};
const DELETE_LISTS = [
  'Access',
  'DataServer',
  'Feeder',
  'GatewayAccount',
  'GatewayMarkup',
  'GatewayRule',
  'Holiday',
  'LiveUpdate',
  'Manager',
  'Symbol',
  'Sync',
];
const SHIFT_LISTS = [
  'Access',
  'DataServer',
  'Feeder',
  'GatewayAccount',
  'GatewayMarkup',
  'GatewayRule',
  'Group',
  'Holiday',
  'LiveUpdate',
  'Manager',
  'Plugin',
  'Symbol',
  'Sync',
];
const NAMED_LISTS = ['Feeder', 'GatewayAccount', 'GatewayRule'];
const APPENDED_LISTS = ['GatewayMarkup', 'LiveUpdate', 'Sync'];
const POSITIONED_LISTS = ['Access', 'DataServer', 'Holiday'];

const change = {
  tag: 'Config',
  timeout: 'change',
  read: 'live',
  mutating: true,
  destructive: false,
  scope: 'webapi.write',
};
const liveRead = { tag: 'Config', timeout: 'read', read: 'live', mutating: false, destructive: false, scope: 'webapi' };

describe('v2 PF4 config: the entries', () => {
  it('declares exactly the sections, reads, updates, deletes and shifts of the configuration', () => {
    expect(Object.keys(config).sort()).toStrictEqual(
      [
        'CfgRequestCommon',
        'CfgUpdateCommon',
        'CfgRequestTime',
        'CfgUpdateTime',
        'CfgRequestBackup',
        'CfgUpdateBackup',
        ...Object.keys(READ_LISTS).map((l) => `CfgRequest${l}`),
        ...NAMED_LISTS.map((l) => `CfgUpdate${l}`),
        'CfgUpdateManager',
        ...APPENDED_LISTS.map((l) => `CfgUpdate${l}`),
        ...POSITIONED_LISTS.map((l) => `CfgUpdate${l}`),
        'CfgUpdateSymbolGroup',
        ...DELETE_LISTS.map((l) => `CfgDelete${l}`),
        ...SHIFT_LISTS.map((l) => `CfgShift${l}`),
      ].sort(),
    );
  });

  it('reads the sections live and replaces them (read, overlay, write) with their DTO', () => {
    for (const section of ['Common', 'Time', 'Backup']) {
      expect(declared(op(`CfgRequest${section}`)), section).toStrictEqual({
        ...liveRead,
        answer: { kind: 'live', command: `CfgRequest${section}` },
      });
    }
    expect(declared(op('CfgUpdateCommon'))).toStrictEqual({
      ...change,
      answer: {
        kind: 'replace',
        read: { command: 'CfgRequestCommon', args: 'function' },
        write: { command: 'CfgUpdateCommon' },
        dto: 'PF4CommonUpdate',
      },
    });
    expect(declared(op('CfgUpdateTime'))).toStrictEqual({
      ...change,
      answer: {
        kind: 'replace',
        read: { command: 'CfgRequestTime' },
        write: { command: 'CfgUpdateTime' },
        dto: 'PF4ServerTime',
      },
    });
    expect(declared(op('CfgUpdateBackup'))).toStrictEqual({
      ...change,
      answer: {
        kind: 'replace',
        read: { command: 'CfgRequestBackup' },
        write: { command: 'CfgUpdateBackup' },
        dto: 'PF4Backup',
      },
    });
  });

  it('reads the common section in full (the replace must not drop the fields outside the DTO)', () => {
    const answer = op('CfgUpdateCommon').answer as { read: { args: (a: unknown) => unknown } };
    expect(answer.read.args({ body: { name: 'n' } })).toStrictEqual({ full: true });
  });

  it('reads every list live, paged by its key', () => {
    for (const [list, key] of Object.entries(READ_LISTS)) {
      expect(declared(op(`CfgRequest${list}`)), list).toStrictEqual({
        ...liveRead,
        paged: { key },
        answer: { kind: 'livePage', command: `CfgRequest${list}` },
      });
    }
  });

  it('writes, deletes and shifts list entries with the live command of the same name', () => {
    const names = [...NAMED_LISTS, 'Manager', ...APPENDED_LISTS, ...POSITIONED_LISTS, 'SymbolGroup']
      .map((l) => `CfgUpdate${l}`)
      .concat(
        DELETE_LISTS.map((l) => `CfgDelete${l}`),
        SHIFT_LISTS.map((l) => `CfgShift${l}`),
      );
    for (const name of names)
      expect(declared(op(name)), name).toStrictEqual({ ...change, answer: { kind: 'live', command: name } });
  });

  it("keeps the backup section's last-completion times", () => {
    expect(BACKUP_PRESERVED).toStrictEqual([
      'fullBackupLastTime',
      'archiveLastTime',
      'exportLastTime',
      'watchTimestamp',
    ]);
  });
});

describe('v2 PF4 config: list reads take limit and cursor', () => {
  it('passes the page values and refuses a limit outside 1..5000', () => {
    for (const list of Object.keys(READ_LISTS)) {
      expect(call(`CfgRequest${list}`, {}, '?limit=5000&cursor=abc', none), list).toStrictEqual(
        accepted({ limit: 5000, cursor: 'abc' }),
      );
      expect(call(`CfgRequest${list}`, {}, '', none), list).toStrictEqual(accepted({}));
      expect(call(`CfgRequest${list}`, {}, '?limit=5001', none), list).toStrictEqual(
        refused('limit: limit must be at most 5000'),
      );
    }
  });
});

describe('v2 PF4 config: CfgUpdateCommon', () => {
  it('takes the PF4CommonUpdate fields and refuses read-only ones', () => {
    expect(call('CfgUpdateCommon', {}, '', json({ name: 'Srv', timeZone: 2 }))).toStrictEqual(
      accepted({ body: { name: 'Srv', timeZone: 2 } }),
    );
    expect(call('CfgUpdateCommon', {}, '', json({ name: 'Srv', build: 1 }))).toStrictEqual(
      refused('body: Unrecognized key: "build"'),
    );
  });
});

describe('v2 PF4 config: CfgUpdateTime (the access-hour matrix)', () => {
  it('accepts exactly 168 entries and passes every value through, 0 and 1 or not', () => {
    const matrix = hours(168, 1);
    matrix[0] = 0;
    matrix[5] = 7;
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: matrix }))).toStrictEqual(
      accepted({ body: { accessHours: matrix } }),
    );
  });

  it('refuses 167 and 169 entries, naming the rule', () => {
    const message = 'body.accessHours: accessHours must have exactly 168 entries (one per hour of the week)';
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: hours(167) }))).toStrictEqual(refused(message));
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: hours(169) }))).toStrictEqual(refused(message));
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: [] }))).toStrictEqual(refused(message));
  });

  it('requires the matrix: absent or null is refused with the required message', () => {
    const message = 'body.accessHours: accessHours is required: an array of 168 integers';
    expect(call('CfgUpdateTime', {}, '', json({}))).toStrictEqual(refused(message));
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: null }))).toStrictEqual(refused(message));
  });

  it('takes 32-bit integer entries: the int32 bounds are accepted, one past them and fractions refused', () => {
    const bounds = hours(168);
    bounds[0] = -2147483648;
    bounds[167] = 2147483647;
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: bounds }))).toStrictEqual(
      accepted({ body: { accessHours: bounds } }),
    );
    const at = (index: number, value: number) => Object.assign(hours(168), { [index]: value });
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: at(3, 1.5) }))).toStrictEqual(
      refused('body.accessHours.3: accessHours entries must be integers'),
    );
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: at(0, -2147483649) }))).toStrictEqual(
      refused('body.accessHours.0: Too small: expected number to be >=-2147483648'),
    );
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: at(167, 2147483648) }))).toStrictEqual(
      refused('body.accessHours.167: Too big: expected number to be <=2147483647'),
    );
  });

  it('refuses members other than accessHours', () => {
    expect(call('CfgUpdateTime', {}, '', json({ accessHours: hours(168), extra: 1 }))).toStrictEqual(
      refused('body: Unrecognized key: "extra"'),
    );
  });
});

describe('v2 PF4 config: CfgUpdateBackup', () => {
  it('drops the four last-completion times from the body and keeps every other field', () => {
    const body = {
      fullBackupPath: '/backup',
      fullBackupPeriod: 'H4',
      fullBackupShift: 2,
      fullBackupLastTime: '2024-01-01T00:00:00Z',
      archiveLastTime: '2024-01-02T00:00:00Z',
      exportLastTime: '2024-01-03T00:00:00Z',
      watchTimestamp: 1700000000,
      watchIp: 16777343,
    };
    expect(call('CfgUpdateBackup', {}, '', json(body))).toStrictEqual(
      accepted({ body: { fullBackupPath: '/backup', fullBackupPeriod: 'H4', fullBackupShift: 2, watchIp: 16777343 } }),
    );
    expect(call('CfgUpdateBackup', {}, '', json({ watchTimestamp: 5 }))).toStrictEqual(accepted({ body: {} }));
  });

  it('needs a body', () => {
    expect(call('CfgUpdateBackup', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });
});

describe('v2 PF4 config: lists keyed by name (feeders, gateway accounts, gateway rules)', () => {
  it('accepts a record with its name', () => {
    expect(call('CfgUpdateFeeder', {}, '', json({ name: 'feed', enable: 1 }))).toStrictEqual(
      accepted({ body: { name: 'feed', enable: 1 } }),
    );
    expect(call('CfgUpdateGatewayAccount', {}, '', json({ name: 'acc', login: 7 }))).toStrictEqual(
      accepted({ body: { name: 'acc', login: 7 } }),
    );
    expect(call('CfgUpdateGatewayRule', {}, '', json({ name: 'r', exeFlags: 3 }))).toStrictEqual(
      accepted({ body: { name: 'r', exeFlags: 3 } }),
    );
  });

  it('requires the name: absent, null or not text is refused, and empty is refused with its own message', () => {
    for (const list of NAMED_LISTS) {
      for (const name of [undefined, null, 5]) {
        expect(call(`CfgUpdate${list}`, {}, '', json({ name })), `${list} ${name}`).toStrictEqual(
          refused("body.name: name is required (the entry's key)"),
        );
      }
      expect(call(`CfgUpdate${list}`, {}, '', json({ name: '' })), list).toStrictEqual(
        refused("body.name: name must not be empty (the entry's key)"),
      );
    }
  });

  it('bounds the name like every text field: 1 and 4096 characters accepted, 4097 refused', () => {
    for (const list of NAMED_LISTS) {
      expect(call(`CfgUpdate${list}`, {}, '', json({ name: 'n' })), list).toStrictEqual(
        accepted({ body: { name: 'n' } }),
      );
      expect(call(`CfgUpdate${list}`, {}, '', json({ name: 'n'.repeat(4096) })), list).toStrictEqual(
        accepted({ body: { name: 'n'.repeat(4096) } }),
      );
      expect(call(`CfgUpdate${list}`, {}, '', json({ name: 'n'.repeat(4097) })), list).toStrictEqual(
        refused('body.name: name must be at most 4096 characters'),
      );
    }
  });

  it('keeps the record strict: an unknown member is refused', () => {
    expect(call('CfgUpdateFeeder', {}, '', json({ name: 'feed', password: 'x' }))).toStrictEqual(
      refused('body: Unrecognized key: "password"'),
    );
  });
});

describe('v2 PF4 config: CfgUpdateManager (keyed by login)', () => {
  it('accepts logins 1 and 2147483647 with the rights given', () => {
    expect(call('CfgUpdateManager', {}, '', json({ login: 1, admin: true }))).toStrictEqual(
      accepted({ body: { login: 1, admin: true } }),
    );
    expect(call('CfgUpdateManager', {}, '', json({ login: 2147483647 }))).toStrictEqual(
      accepted({ body: { login: 2147483647 } }),
    );
  });

  it('requires the login as a number', () => {
    for (const login of [undefined, null, '5']) {
      expect(call('CfgUpdateManager', {}, '', json({ login })), String(login)).toStrictEqual(
        refused("body.login: login is required (the manager's key)"),
      );
    }
  });

  it('refuses fractions, 0 and 2147483648, naming each rule', () => {
    expect(call('CfgUpdateManager', {}, '', json({ login: 1.5 }))).toStrictEqual(
      refused('body.login: login must be an integer'),
    );
    expect(call('CfgUpdateManager', {}, '', json({ login: 0 }))).toStrictEqual(
      refused('body.login: login must be at least 1'),
    );
    expect(call('CfgUpdateManager', {}, '', json({ login: 2147483648 }))).toStrictEqual(
      refused('body.login: login must be at most 2147483647'),
    );
  });
});

describe('v2 PF4 config: appended lists (gateway markups, LiveUpdate, syncs)', () => {
  it('take their contract record as it is, without a key', () => {
    expect(call('CfgUpdateGatewayMarkup', {}, '', json({ source: 's', bidMarkup: 1 }))).toStrictEqual(
      accepted({ body: { source: 's', bidMarkup: 1 } }),
    );
    expect(call('CfgUpdateLiveUpdate', {}, '', json({ company: 'c' }))).toStrictEqual(
      accepted({ body: { company: 'c' } }),
    );
    expect(call('CfgUpdateSync', {}, '', json({ server: 'h:443', from: 0, to: 5 }))).toStrictEqual(
      accepted({ body: { server: 'h:443', from: 0, to: 5 } }),
    );
    for (const list of APPENDED_LISTS)
      expect(call(`CfgUpdate${list}`, {}, '', json({})), list).toStrictEqual(accepted({ body: {} }));
  });
});

describe('v2 PF4 config: CfgUpdateAccess (a firewall rule, an IPv4 range)', () => {
  const put = (body: unknown) => call('CfgUpdateAccess', { pos: '2' }, '', json(body));

  it('accepts the IPv4 bounds and a range of one address', () => {
    expect(put({ ipFrom: 0, ipTo: 4294967295, action: 1 })).toStrictEqual(
      accepted({ pos: 2, body: { ipFrom: 0, ipTo: 4294967295, action: 1 } }),
    );
    expect(put({ ipFrom: 16777343, ipTo: 16777343 })).toStrictEqual(
      accepted({ pos: 2, body: { ipFrom: 16777343, ipTo: 16777343 } }),
    );
  });

  it('accepts either end alone, and neither', () => {
    expect(put({ ipFrom: 9 })).toStrictEqual(accepted({ pos: 2, body: { ipFrom: 9 } }));
    expect(put({ ipTo: 9 })).toStrictEqual(accepted({ pos: 2, body: { ipTo: 9 } }));
    expect(put({ comment: 'office' })).toStrictEqual(accepted({ pos: 2, body: { comment: 'office' } }));
  });

  it('refuses ipFrom above ipTo, naming ipFrom', () => {
    expect(put({ ipFrom: 10, ipTo: 9 })).toStrictEqual(refused('body.ipFrom: ipFrom must not be above ipTo'));
  });

  it('refuses one past each IPv4 bound and fractions, naming the end', () => {
    expect(put({ ipFrom: -1 })).toStrictEqual(refused('body.ipFrom: ipFrom must be an IPv4 address (0..4294967295)'));
    expect(put({ ipTo: -1 })).toStrictEqual(refused('body.ipTo: ipTo must be an IPv4 address (0..4294967295)'));
    expect(put({ ipFrom: 4294967296 })).toStrictEqual(
      refused('body.ipFrom: ipFrom must be an IPv4 address (0..4294967295)'),
    );
    expect(put({ ipTo: 4294967296 })).toStrictEqual(refused('body.ipTo: ipTo must be an IPv4 address (0..4294967295)'));
    expect(put({ ipFrom: 0.5 })).toStrictEqual(refused('body.ipFrom: ipFrom must be an integer'));
    expect(put({ ipTo: 0.5 })).toStrictEqual(refused('body.ipTo: ipTo must be an integer'));
  });
});

describe('v2 PF4 config: positions', () => {
  it('takes pos from 0 for every positioned update, delete and shift, and refuses -1 and text', () => {
    const positioned = [...POSITIONED_LISTS.map((l) => `CfgUpdate${l}`), ...DELETE_LISTS.map((l) => `CfgDelete${l}`)];
    for (const name of positioned) {
      const body = name.startsWith('CfgUpdate') ? json({}) : none;
      const withBody = name.startsWith('CfgUpdate') ? { body: {} } : {};
      expect(call(name, { pos: '0' }, '', body), name).toStrictEqual(accepted({ pos: 0, ...withBody }));
      expect(call(name, { pos: '2147483647' }, '', body), name).toStrictEqual(
        accepted({ pos: 2147483647, ...withBody }),
      );
      expect(call(name, { pos: '-1' }, '', body), name).toStrictEqual(refused('pos: pos must be at least 0'));
      expect(call(name, { pos: '2147483648' }, '', body), name).toStrictEqual(
        refused('pos: pos must be at most 2147483647'),
      );
      expect(call(name, { pos: 'first' }, '', body), name).toStrictEqual(refused('pos: pos must be an integer'));
    }
  });

  it('says what each delete by position removes, and the consequence where the server has one', () => {
    const refusal =
      "at position pos of the server's list order; true when deleted, a position outside the list is refused by the server (InvalidData)";
    expect(entryOf('v2.PF4.', 'CfgDeleteHoliday').summary).toBe(`Deletes the holiday ${refusal}.`);
    expect(entryOf('v2.PF4.', 'CfgDeleteGatewayAccount').summary).toBe(`Deletes the gateway account ${refusal}.`);
    expect(entryOf('v2.PF4.', 'CfgDeleteManager').summary).toBe(
      `Deletes the manager configuration ${refusal}; the manager's rights change at its next login.`,
    );
    expect(entryOf('v2.PF4.', 'CfgDeleteSymbol').summary).toBe(
      `Deletes the symbol configuration ${refusal} and while the symbol has open trades; its quotes stop.`,
    );
  });

  it('takes symbol group slots 0..31 only', () => {
    expect(call('CfgUpdateSymbolGroup', { pos: '0' }, '', json({ name: 'Forex' }))).toStrictEqual(
      accepted({ pos: 0, body: { name: 'Forex' } }),
    );
    expect(call('CfgUpdateSymbolGroup', { pos: '31' }, '', json({}))).toStrictEqual(accepted({ pos: 31, body: {} }));
    expect(call('CfgUpdateSymbolGroup', { pos: '32' }, '', json({}))).toStrictEqual(
      refused('pos: pos must be at most 31'),
    );
    expect(call('CfgUpdateSymbolGroup', { pos: '-1' }, '', json({}))).toStrictEqual(
      refused('pos: pos must be at least 0'),
    );
    expect(call('CfgUpdateSymbolGroup', { pos: 'x' }, '', json({}))).toStrictEqual(
      refused('pos: pos must be an integer'),
    );
  });
});

describe('v2 PF4 config: shifts', () => {
  it('takes a signed 32-bit shift with the position, for every list', () => {
    for (const list of SHIFT_LISTS) {
      const name = `CfgShift${list}`;
      expect(call(name, { pos: '3' }, '?shift=-2', none), name).toStrictEqual(accepted({ pos: 3, shift: -2 }));
      expect(call(name, { pos: '0' }, '?shift=-2147483648', none), name).toStrictEqual(
        accepted({ pos: 0, shift: -2147483648 }),
      );
      expect(call(name, { pos: '0' }, '?shift=2147483647', none), name).toStrictEqual(
        accepted({ pos: 0, shift: 2147483647 }),
      );
    }
  });

  it('requires the shift, and names each rule it breaks', () => {
    for (const list of SHIFT_LISTS) {
      const name = `CfgShift${list}`;
      expect(call(name, { pos: '3' }, '', none), name).toStrictEqual(
        refused('shift: shift is required: the number of places to move the entry (negative: towards the start)'),
      );
      expect(call(name, { pos: '3' }, '?shift=1.5', none), name).toStrictEqual(
        refused('shift: shift must be an integer'),
      );
      expect(call(name, { pos: '3' }, '?shift=-2147483649', none), name).toStrictEqual(
        refused('shift: shift must be at least -2147483648'),
      );
      expect(call(name, { pos: '3' }, '?shift=2147483648', none), name).toStrictEqual(
        refused('shift: shift must be at most 2147483647'),
      );
      expect(call(name, { pos: '-1' }, '?shift=1', none), name).toStrictEqual(refused('pos: pos must be at least 0'));
    }
  });
});

describe('v2 PF4 config: published summaries', () => {
  it('gives every entry a summary: a sentence without gaps where a name was left out', () => {
    for (const entry of Object.values(config)) {
      expect(entry.summary.length, entry.id).toBeGreaterThan(20);
      expect(entry.summary, entry.id).not.toMatch(/ {2}| \.$|\( |the {2}/);
      expect(entry.summary.endsWith('.'), entry.id).toBe(true);
    }
  });
});
