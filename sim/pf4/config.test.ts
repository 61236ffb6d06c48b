/**
 * PF4 configuration on a small world: ordered lists with update, delete and shift by position, the single-record
 * sections, symbol and group full-replace updates that keep what the spec preserves, accounts and passwords.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { PF4_CONFIG_LISTS } from './pf4Config.js';
import { passwordHash, withoutServerOnly } from './serverOnlyFields.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

describe('configuration lists', () => {
  it('answers every list section in contract shape', () => {
    const h = pf4Harness();
    const schemas: Record<string, { parse(v: unknown): unknown }> = {
      Holiday: records.PF4Holiday,
      Manager: records.PF4ManagerRights,
      Access: records.PF4Access,
      DataServer: records.PF4DataServer,
      Feeder: records.PF4Feeder,
      GatewayAccount: records.PF4GatewayAccount,
      GatewayMarkup: records.PF4GatewayMarkup,
      GatewayRule: records.PF4GatewayRule,
      LiveUpdate: records.PF4LiveUpdate,
      Sync: records.PF4Sync,
      Plugin: records.PF4PluginParam,
      SymbolGroup: records.PF4SymbolGroup,
    };
    // Feeders and syncs also carry their password, which the contract leaves out.
    const serverOnly: Record<string, 'feeder' | 'sync'> = { Feeder: 'feeder', Sync: 'sync' };
    for (const list of PF4_CONFIG_LISTS) {
      const items = h.call(`CfgRequest${list}`);
      expect(items.length, list).toBeGreaterThan(0);
      for (const item of items)
        schemas[list].parse(serverOnly[list] ? withoutServerOnly(serverOnly[list], item) : item);
    }
    expect(h.call('CfgRequestSymbolGroup')).toHaveLength(32);
  });

  it('updates at a position, appends, deletes and shifts holidays in server order', () => {
    const h = pf4Harness();
    const names = () => h.call('CfgRequestHoliday').map((r: { description: string }) => r.description);
    expect(names()).toEqual(['Christmas Day', 'New Year', 'Independence Day']);
    const boxing = {
      year: 2025,
      month: 12,
      day: 26,
      from: 0,
      to: 0,
      symbol: 'All',
      description: 'Boxing Day',
      enable: true,
    };
    h.call('CfgUpdateHoliday', { record: boxing });
    h.call('CfgUpdateHoliday', { pos: 0, record: { ...boxing, day: 24, description: 'Christmas Eve' } });
    expect(names()).toEqual(['Christmas Eve', 'New Year', 'Independence Day', 'Boxing Day']);
    expect(h.call('CfgShiftHoliday', { pos: 3, shift: -2 })).toBe(true);
    expect(names()).toEqual(['Christmas Eve', 'Boxing Day', 'New Year', 'Independence Day']);
    expect(h.call('CfgDeleteHoliday', { pos: 0 })).toBe(true);
    expect(names()).toEqual(['Boxing Day', 'New Year', 'Independence Day']);
    expect(h.fails('CfgShiftHoliday', { pos: 0, shift: -1 }).code).toBe(R.InvalidData);
    expect(h.fails('CfgDeleteHoliday', { pos: 3 }).message).toContain('out of range');
    expect(h.fails('CfgUpdateHoliday', { record: { ...boxing, weekday: 1 } }).message).toContain('record');
  });

  it('updates keyed lists by key without a position and refuses a duplicate key elsewhere', () => {
    const h = pf4Harness();
    const feeder = withoutServerOnly('feeder', h.call('CfgRequestFeeder')[1]);
    h.call('CfgUpdateFeeder', { record: { ...feeder, enable: 0 } });
    expect(h.call('CfgRequestFeeder').map((f: { name: string; enable: number }) => [f.name, f.enable])).toEqual([
      ['Main quotes', 1],
      ['News wire', 0],
    ]);
    expect(h.call('SrvFeeders').map((f: { name: string }) => f.name)).toEqual(['Main quotes']);
    expect(h.fails('CfgUpdateFeeder', { pos: 0, record: feeder }).message).toContain('already exists');
  });

  it('keeps the 32 symbol groups as fixed slots', () => {
    const h = pf4Harness();
    h.call('CfgUpdateSymbolGroup', { pos: 7, record: { name: 'Stocks', description: 'Share CFDs' } });
    expect(h.call('CfgRequestSymbolGroup')[7]).toEqual({ name: 'Stocks', description: 'Share CFDs' });
    expect(h.fails('CfgUpdateSymbolGroup', { pos: 32, record: { name: 'X' } }).code).toBe(R.InvalidData);
    expect(h.world.commands().has('CfgDeleteSymbolGroup')).toBe(false);
  });

  it("decides the next login's rights from the manager configuration", () => {
    const h = pf4Harness();
    const manager = h.call('CfgRequestManager')[0];
    expect(manager).toMatchObject({ login: 1000, admin: true, reports: true });
    h.call('CfgUpdateManager', { record: { ...manager, admin: false } });
    expect(h.world.managerRights(1000)).not.toContain('admin');
    expect(h.world.managerRights(1000)).toContain('reports');
  });

  it('moves symbols and groups by position', () => {
    const h = pf4Harness();
    h.call('CfgShiftSymbol', { pos: 0, shift: 2 });
    expect(
      h
        .call('SymbolsRequest')
        .slice(0, 3)
        .map((s: { symbol: string }) => s.symbol),
    ).toEqual(['GBPUSD', 'USDJPY', 'EURUSD']);
    h.call('CfgShiftGroup', { pos: 4, shift: -4 });
    expect(h.call('GroupsRequest')[0].group).toBe('real\\ecn');
  });
});

describe('single-record sections', () => {
  it('updates common settings and echoes the record, keeping build and version', () => {
    const h = pf4Harness();
    const before = h.call('CfgRequestCommon');
    records.PF4Common.parse(before);
    const after = h.call('CfgUpdateCommon', {
      record: { name: 'Renamed', owner: 'New Owner', timeZone: 2, keepTicks: 30 },
    });
    expect(after).toEqual({ ...before, name: 'Renamed', owner: 'New Owner', timeZone: 2 });
    expect(h.call('ManagerCommon')).toEqual(after);
  });

  it('answers the whole common section with full: the stored settings, the manager view without the sensitive ones', () => {
    const h = pf4Harness();
    h.call('CfgUpdateCommon', {
      record: { timeSync: 'ntp.sim.test', antiFlood: 3, floodControl: 20, minApi: 1410, keepEmails: 9 },
    });
    const full = h.call('CfgRequestCommon', { full: true });
    expect(full).toMatchObject({
      ...h.call('CfgRequestCommon'),
      timeSync: 'ntp.sim.test',
      antiFlood: 3,
      floodControl: 20,
      minApi: 1410,
      keepEmails: 9,
    });
    expect(Object.keys(full)).toEqual([
      'name',
      'owner',
      'build',
      'version',
      'timeZone',
      'daylightCorrection',
      'timeZoneReal',
      'timeSync',
      'minClient',
      'minApi',
      'keepEmails',
      'keepTicks',
      'antiFlood',
      'floodControl',
    ]);
    const { timeSync: _s, antiFlood: _a, floodControl: _f, ...short } = full;
    expect(h.call('ManagerCommon', { full: true })).toEqual(short);
    expect(h.call('ManagerCommon', { full: false })).toEqual(h.call('ManagerCommon'));
    expect(h.fails('CfgRequestCommon', { full: 'yes' }).message).toContain('full');
  });

  it('takes exactly 168 access hours, passing other values through', () => {
    const h = pf4Harness();
    expect(h.call('CfgRequestTime').accessHours).toHaveLength(168);
    const hours = Array.from({ length: 168 }, (_, i) => (i < 24 ? 0 : i === 30 ? 2 : 1));
    expect(h.call('CfgUpdateTime', { record: { accessHours: hours } })).toEqual({ accessHours: hours });
    expect(h.fails('CfgUpdateTime', { record: { accessHours: [1, 0] } }).message).toContain('168');
  });

  it("updates the backup settings but not the last-completion times nor the slave server's password", () => {
    const h = pf4Harness();
    const before = h.call('CfgRequestBackup');
    records.PF4Backup.parse(withoutServerOnly('backup', before));
    expect(before.watchPassword).toMatch(/^\w{16}$/);
    const after = h.call('CfgUpdateBackup', {
      record: { fullBackupPeriod: 'H4', fullBackupLastTime: '2030-01-01T00:00:00Z' },
    });
    expect(after).toEqual({ ...before, fullBackupPeriod: 'H4' });
    // The whole section as read cannot be written back: the password is not a field of the record a manager sends.
    expect(h.fails('CfgUpdateBackup', { record: before }).message).toBe(
      'record.watchPassword: Unrecognized key: "watchPassword"',
    );
    expect(h.call('CfgUpdateBackup', { record: withoutServerOnly('backup', before) })).toEqual(before);
    expect(h.call('CfgRequestBackup')).toEqual(before);
  });
});

describe('symbols, groups and accounts', () => {
  it('replaces a symbol configuration but keeps sessions and server-derived fields', () => {
    const h = pf4Harness();
    const before = h.call('CfgRequestSymbol', { symbol: 'EURUSD' });
    const after = h.call('CfgUpdateSymbol', {
      symbol: 'EURUSD',
      record: { description: 'Euro', stopsLevel: 25, spread: 20 },
    });
    expect(after).toMatchObject({
      description: 'Euro',
      stopsLevel: 25,
      point: before.point,
      multiply: before.multiply,
      count: before.count,
    });
    records.PF4SymbolConfig.parse(after);
    const sessions = h.call('SymbolSessionsGet', { symbol: 'EURUSD' });
    expect(sessions).toHaveLength(7);
    for (const day of sessions) records.PF4SymbolDaySessions.parse(day);
    expect(h.events.some((e) => e.kind === 'symbols' && e.op === 'update' && e.record.stopsLevel === 25)).toBe(true);
    for (let i = 0; i < 500 && h.world.feed.tickOne()?.symbol !== 'EURUSD'; i++);
    const eurusd = h.world.feed.quote('EURUSD')!;
    expect(Math.round((eurusd.ask - eurusd.bid) * 1e5)).toBe(20);
  });

  it('stops ticks for a hidden symbol and resumes them after SymbolAdd', () => {
    const h = pf4Harness({ symbols: 1 });
    h.call('SymbolHide', { symbol: 'EURUSD' });
    const before = h.world.ticksEmitted();
    for (let i = 0; i < 5; i++) h.world.feed.tickOne();
    expect(h.world.ticksEmitted()).toBe(before);
    h.call('SymbolAdd', { symbol: 'EURUSD' });
    h.world.feed.tickOne();
    expect(h.world.ticksEmitted()).toBe(before + 1);
  });

  it('updates a group, keeping its name, securities and margin overrides', () => {
    const h = pf4Harness();
    const before = h.call('GroupRecordRequest', { group: 'real\\vip' });
    const group = h.call('GroupRecordUpdate', { group: 'real\\vip', record: { marginCall: 80, company: 'VIP Desk' } });
    records.PF4Group.parse(withoutServerOnly('group', group));
    // The report mailer's credentials, the template path and the securities hash are the server's, kept by the update.
    expect(group).toEqual({ ...before, marginCall: 80, company: 'VIP Desk' });
    expect(before).toMatchObject({
      smtpServer: 'smtp.example.com:587',
      smtpLogin: 'reports-real-vip@example.com',
      templates: '/reports/templates/real-vip',
    });
    expect(before.smtpPassword).toMatch(/^\w{16}$/);
    expect(h.fails('GroupRecordUpdate', { group: 'real\\vip', record: { smtpPassword: 'x' } }).message).toBe(
      'record.smtpPassword: Unrecognized key: "smtpPassword"',
    );
    expect(group).toMatchObject({ group: 'real\\vip', marginCall: 80, company: 'VIP Desk', secMarginsTotal: 2 });
    expect(h.call('GroupSecGroupsGet', { group: 'real\\vip' })).toHaveLength(32);
    expect(h.call('GroupSecMarginsGet', { group: 'real\\vip' }).map((m: { symbol: string }) => m.symbol)).toEqual([
      'EURUSD',
      'XAUUSD',
    ]);
    for (const sec of h.call('GroupSecGroupsGet', { group: 'real\\vip' })) records.PF4GroupSec.parse(sec);
    expect(h.fails('GroupRecordUpdate', { group: 'real\\vip', record: { group: 'other' } }).code).toBe(R.InvalidData);
  });

  it('updates an account, checks and sets passwords', () => {
    const h = pf4Harness();
    const original = h.call('UserRecordRequest', { login: 100001 });
    const updated = h.call('UserRecordUpdate', { login: 100001, record: { name: 'New Name', leverage: 300 } });
    expect(updated).toMatchObject({ login: 100001, name: 'New Name', leverage: 300 });
    // The account's secrets are the server's: kept by the update, refused in a record.
    expect(updated).toEqual({ ...original, name: 'New Name', leverage: 300 });
    expect(original.password).toBe(passwordHash(100001, 'demo-100001'));
    expect(original.passwordInvestor).toBe(passwordHash(100001, 'view-100001'));
    for (const field of ['passwordPhone', 'otpSecret', 'apiData']) expect(original[field], field).not.toBe('');
    expect(h.fails('UserRecordUpdate', { login: 100001, record: { otpSecret: 'x' } }).message).toBe(
      'record.otpSecret: Unrecognized key: "otpSecret"',
    );
    expect(h.call('UserPasswordCheck', { login: 100001, password: 'demo-100001' })).toBe(true);
    expect(h.fails('UserPasswordCheck', { login: 100001, password: 'wrong' }).code).toBe(R.InvalidData);
    h.call('UserPasswordSet', { login: 100001, password: 'secret-1', changeInvestor: true });
    expect(h.call('UserPasswordCheck', { login: 100001, password: 'secret-1' })).toBe(true);
    expect(h.call('UserRecordRequest', { login: 100001 })).toEqual({
      ...updated,
      passwordInvestor: passwordHash(100001, 'secret-1'),
    });
    const created = h.call('UserRecordNew', { record: { group: 'demo\\forex', name: 'No Password' } });
    expect(created).toMatchObject({
      password: '',
      passwordInvestor: '',
      passwordPhone: '',
      otpSecret: '',
      apiData: '',
    });
    expect(h.fails('UserPasswordCheck', { login: created.login, password: 'anything' }).code).toBe(R.InvalidData);
    expect(h.call('UsersGroupOp', { record: { command: 'Leverage', leverage: 50, logins: [100002, 100003] } })).toBe(
      true,
    );
    expect(h.call('UserRecordRequest', { login: 100003 }).leverage).toBe(50);
    h.call('UsersGroupOp', { record: { command: 'SetGroup', newGroup: 'real\\ecn', logins: [100002] } });
    expect(h.call('AdmUsersRequestSafe', { group: 'real\\ecn' }).map((u: { login: number }) => u.login)).toContain(
      100002,
    );
  });
});
