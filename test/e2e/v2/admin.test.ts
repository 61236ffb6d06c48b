/**
 * v2 PF4 Backup, Server Admin, Plugins and Common end to end. Values are checked against the simulator's own state,
 * read (and, to set up a case, changed) with a manager session of the test's own. The feeder restart (a tick gap) and
 * the server restart (the manager session drops) run last, in their own describe.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiComponents } from '../../../shared/records/contract.js';
import { PF4_SERVER_ONLY, withoutServerOnly } from '../../../sim/pf4/serverOnlyFields.js';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { connectManager, eventually, stackForFile, waitHealthy, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

type Row = Record<string, any>;

let c: Client;
let sim: ManagerClient;
const setup = stackForFile();

const connectSim = () => connectManager(c.stack);

beforeAll(async () => {
  c = setup.client;
  sim = await connectSim();
});
afterAll(() => sim?.close());

/** Journal messages written since `since` (read straight from the server). */
async function journalSince(since: string, filter?: string): Promise<string[]> {
  const lines = await sim.ok<Row[]>('JournalRequest', { from: since, ...(filter ? { filter } : {}) });
  return lines.map((l) => l.message as string);
}

const logins = async () => (await sim.ok<{ items: Row[] }>('UsersRequest', {})).items.map((u) => u.login as number);

/** The edge's default body bound (workers/app.ts MAX_BODY_BYTES; that module only loads inside workerd). */
const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** The restore operations' own bound (shared/catalog/v2/pf4/backup.ts RESTORE_BODY_LIMIT_BYTES). */
const RESTORE_BODY_LIMIT = 4 * 1024 * 1024;
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * A record the gateway answered has exactly the contract's fields, and no value of the server-only fields the server
 * sent beside them (a feeder's password, an account's password hash, ...) appears anywhere in it.
 */
function expectNoServerOnly(answered: Row, schema: string, server: Row, kind: keyof typeof PF4_SERVER_ONLY) {
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

/** An account's server-only fields as the simulator holds them. */
const accountSecrets = async (login: number) => {
  const user = await sim.ok<Row>('UserRecordRequest', { login });
  return Object.fromEntries(PF4_SERVER_ONLY.user.map((f) => [f, user[f]]));
};

describe('v2.PF4.ManagerCommon', () => {
  it("answers the server's common settings as the server holds them", async () => {
    const common = await ok<Row>(c, 'v2.PF4.ManagerCommon');
    const server = await sim.ok<Row>('ManagerCommon');
    expect(common).toEqual({
      name: server.name,
      owner: server.owner,
      build: server.build,
      version: server.version,
      timeZone: server.timeZone,
    });
    expect(common.build).toBe(1420);
  });
});

describe('v2.PF4.ServerTime', () => {
  it("answers the trading server's clock, live", async () => {
    const before = Date.parse(await sim.ok<string>('ServerTime'));
    const time = await ok<string>(c, 'v2.PF4.ServerTime');
    const after = Date.parse(await sim.ok<string>('ServerTime'));
    expect(Date.parse(time)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(time)).toBeLessThanOrEqual(after);
  });
});

describe('v2.PF4.JournalRequest', () => {
  it('answers the lines since from, only those containing the filter (any case), and of the mode asked', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const [a, b] = await logins();
    const token = `Journal-Probe-${Date.now()}`;
    await sim.ok('NotificationsSend', { record: { logins: [a, b], message: `${token} first` } });
    await sim.ok('NotificationsSend', { record: { logins: [a], message: `${token} second` } });

    const filtered = await ok<Row[]>(c, 'v2.PF4.JournalRequest', {
      query: { from: since, filter: token.toLowerCase() },
    });
    expect(filtered.map((l) => l.message)).toEqual([
      `notification to 2 accounts (${a}, ${b}): ${token} first`,
      `notification to 1 accounts (${a}): ${token} second`,
    ]);
    expect(filtered.every((l) => l.code === 'Standard' && typeof l.time === 'string')).toBe(true);

    // Without a filter: every line of the (closed) window as the server holds them, ours among them; mode Full by default.
    const to = new Date().toISOString();
    const all = await ok<Row[]>(c, 'v2.PF4.JournalRequest', { query: { from: since, to } });
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(all).toEqual(await sim.ok<Row[]>('JournalRequest', { from: since, to }));
    expect(all.map((l) => l.message)).toEqual(expect.arrayContaining(filtered.map((l) => l.message)));

    // A mode keeps only its own lines: the manager logins, and none of the notifications.
    const logs = await ok<Row[]>(c, 'v2.PF4.JournalRequest', {
      query: { from: '2000-01-01T00:00:00Z', mode: 'Logins' },
    });
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.every((l) => l.code === 'Logins')).toBe(true);
    expect(
      await ok<Row[]>(c, 'v2.PF4.JournalRequest', { query: { from: since, mode: 'Trades', filter: token } }),
    ).toEqual([]);
    // A window that ends before the probe holds none of it.
    expect(
      await ok<Row[]>(c, 'v2.PF4.JournalRequest', {
        query: { from: '2000-01-01T00:00:00Z', to: since, filter: token },
      }),
    ).toEqual([]);
  });

  it('refuses a bad mode, from, to or filter, naming the field', async () => {
    await refuses(c, 'v2.PF4.JournalRequest', 'mode', { query: { mode: 'Everything' } });
    await refuses(c, 'v2.PF4.JournalRequest', 'from', { query: { from: 'today' } });
    await refuses(c, 'v2.PF4.JournalRequest', 'to', {
      query: { from: '2025-01-02T00:00:00Z', to: '2025-01-01T00:00:00Z' },
    });
    await refuses(c, 'v2.PF4.JournalRequest', 'filter', { query: { filter: 'x'.repeat(257) } });
  });
});

describe('v2.PF4.ExternalCommandJSON', () => {
  /** The plugin entries as the server holds them, and a writer for one of them. */
  const plugins = async () => sim.ok<Row[]>('CfgRequestPlugin');
  const setAccess = async (file: string, managerAccess: number) => {
    const entry = (await plugins()).find((p) => p.plugin.file === file)!;
    await sim.ok('CfgUpdatePlugin', { record: { ...entry, plugin: { ...entry.plugin, managerAccess } } });
  };

  it('passes any JSON body verbatim to the first plugin that answers, and returns its answer', async () => {
    const body = { command: 'status', args: [1, 'two', { three: 3.5 }], flag: true, none: null };
    expect(await ok(c, 'v2.PF4.ExternalCommandJSON', { body })).toEqual({ plugin: 'Echo', received: body });
    expect(await ok(c, 'v2.PF4.ExternalCommandJSON', { body: [1, 2, 3] })).toEqual({
      plugin: 'Echo',
      received: [1, 2, 3],
    });
    expect(await ok(c, 'v2.PF4.ExternalCommandJSON', { body: 'ping' })).toEqual({ plugin: 'Echo', received: 'ping' });
  });

  it('answers from the next plugin open to managers, and fails with the server code when none answers', async () => {
    try {
      await setAccess('echo.dll', 0);
      const none = await fails(c, 'v2.PF4.ExternalCommandJSON', { body: { command: 'status' } });
      expect(none).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
      await setAccess('risk.dll', 1);
      expect(await ok(c, 'v2.PF4.ExternalCommandJSON', { body: { command: 'limits' } })).toEqual({
        plugin: 'Risk limits',
        received: { command: 'limits' },
      });
    } finally {
      await setAccess('echo.dll', 1);
      await setAccess('risk.dll', 0);
    }
  });

  it('takes a call without a body as the command null, and refuses a body that is not JSON, naming body', async () => {
    expect(await ok(c, 'v2.PF4.ExternalCommandJSON')).toEqual({ plugin: 'Echo', received: null });
    await refuses(c, 'v2.PF4.ExternalCommandJSON', 'body', { rawBody: '{"command": ' });
  });
});

describe('v2.PF4.LicenseCheck', () => {
  it('answers true for a licensed module and false for another', async () => {
    expect(await ok(c, 'v2.PF4.LicenseCheck', { params: { licenseName: 'Backup' } })).toBe(true);
    expect(await ok(c, 'v2.PF4.LicenseCheck', { params: { licenseName: 'Manager' } })).toBe(true);
    expect(await ok(c, 'v2.PF4.LicenseCheck', { params: { licenseName: 'Teleporter' } })).toBe(false);
    await refuses(c, 'v2.PF4.LicenseCheck', 'licenseName', { params: { licenseName: 'L'.repeat(65) } });
  });
});

describe('v2.PF4.NotificationsSend', () => {
  it('sends the message to the listed accounts, as the server records it', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const [a, b, d] = await logins();
    const message = `Margin review ${Date.now()}`;
    expect(await ok(c, 'v2.PF4.NotificationsSend', { body: { logins: [a, b, d], message } })).toBe(true);
    expect(await journalSince(since, message)).toEqual([`notification to 3 accounts (${a}, ${b}, ${d}): ${message}`]);
  });

  it("answers the server's refusal for an unknown account, sending nothing", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const [a] = await logins();
    const message = `Nobody ${Date.now()}`;
    expect(await fails(c, 'v2.PF4.NotificationsSend', { body: { logins: [a, 99_999_999], message } })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
    });
    expect(await journalSince(since, message)).toEqual([]);
  });

  it('refuses a missing, empty or too long message and an empty login list, naming the field', async () => {
    const [a] = await logins();
    await refuses(c, 'v2.PF4.NotificationsSend', 'body.message', { body: { logins: [a] } });
    await refuses(c, 'v2.PF4.NotificationsSend', 'body.message', { body: { logins: [a], message: '' } });
    await refuses(c, 'v2.PF4.NotificationsSend', 'body.message', { body: { logins: [a], message: 'm'.repeat(256) } });
    await refuses(c, 'v2.PF4.NotificationsSend', 'body.logins', { body: { logins: [], message: 'hi' } });
    await refuses(c, 'v2.PF4.NotificationsSend', 'body.logins', { body: { logins: [0], message: 'hi' } });
    await refuses(c, 'v2.PF4.NotificationsSend', 'body', { body: { logins: [a], message: 'hi', urgent: true } });
  });
});

describe('v2.PF4.SrvFeeders', () => {
  const feeders = async () => sim.ok<Row[]>('CfgRequestFeeder');
  const setEnable = async (name: string, enable: number) => {
    const entry = (await feeders()).find((f) => f.name === name)!;
    await sim.ok('CfgUpdateFeeder', { record: { ...withoutServerOnly('feeder', entry), enable } });
  };

  it('pages the running feeders by name, credential excluded, and leaves out a stopped one', async () => {
    const configured = await feeders();
    const running = configured
      .filter((f) => f.enable === 1)
      .map((f) => f.name as string)
      .sort();
    const { items, pages } = await allPages<Row>(c, 'v2.PF4.SrvFeeders', 1);
    expect(items.map((f) => f.name)).toEqual(running);
    expect(pages).toBe(running.length);
    // The server sends each feeder's password; not one reaches the caller.
    const sent = await sim.ok<Row[]>('SrvFeeders');
    expect(sent.every((f) => typeof f.password === 'string' && f.password.length >= 8)).toBe(true);
    for (const item of items) expectNoServerOnly(item, 'PF4Feeder', sent.find((f) => f.name === item.name)!, 'feeder');
    const main = configured.find((f) => f.name === 'Main quotes')!;
    expect(items.find((f) => f.name === 'Main quotes')).toMatchObject({
      file: main.file,
      server: main.server,
      dataFeedMode: main.dataFeedMode,
      timeout: main.timeout,
    });
    expect(await ok<Row[]>(c, 'v2.PF4.SrvFeeders')).toEqual(items);

    try {
      await setEnable('News wire', 0);
      expect((await ok<Row[]>(c, 'v2.PF4.SrvFeeders')).map((f) => f.name)).toEqual(
        running.filter((n) => n !== 'News wire'),
      );
    } finally {
      await setEnable('News wire', 1);
    }
  });

  it('refuses a tampered cursor and a limit out of range', async () => {
    await refusesTamperedCursor(c, 'v2.PF4.SrvFeeders');
    await refuses(c, 'v2.PF4.SrvFeeders', 'limit', { query: { limit: 0 } });
  });
});

describe('v2.PF4.SrvFeederLog', () => {
  it('answers the log of a configured feeder, NotFound for another name', async () => {
    const log = await ok<string>(c, 'v2.PF4.SrvFeederLog', { params: { name: 'Main quotes' } });
    expect(log.split('\n').map((l) => l.replace(/^\S+ /, ''))).toEqual([
      'Main quotes: connected',
      'Main quotes: receiving data',
    ]);
    expect(await fails(c, 'v2.PF4.SrvFeederLog', { params: { name: 'Nonexistent feed' } })).toMatchObject({
      code: 'NotFound',
      managerCode: 'InvalidData',
    });
    await refuses(c, 'v2.PF4.SrvFeederLog', 'name', { params: { name: 'n'.repeat(129) } });
  });
});

describe('v2.PF4.BackupInfoUsers and v2.PF4.BackupInfoOrders', () => {
  it('lists the backup files of each mode with the sizes of what they hold', async () => {
    for (const mode of [0, 1]) {
      const users = await ok<Row[]>(c, 'v2.PF4.BackupInfoUsers', { params: { mode } });
      expect(users).toEqual(await sim.ok<Row[]>('BackupInfoUsers', { mode }));
      expect(users.length).toBeGreaterThan(0);
      expect(users.every((f) => f.file.startsWith(mode === 0 ? 'full-' : 'archive-'))).toBe(true);
      const orders = await ok<Row[]>(c, 'v2.PF4.BackupInfoOrders', { params: { mode } });
      expect(orders.map((f) => f.file)).toEqual(users.map((f) => f.file));
      const file = users[0].file as string;
      const held = await sim.ok<Row[]>('BackupRequestUsers', { file });
      expect(users[0].size).toBe(held.length * 512);
      expect(orders[0].size).toBe((await sim.ok<Row[]>('BackupRequestOrders', { file })).length * 256);
    }
  });

  it('refuses a mode other than 0 or 1, naming mode', async () => {
    await refuses(c, 'v2.PF4.BackupInfoUsers', 'mode', { params: { mode: 2 } });
    await refuses(c, 'v2.PF4.BackupInfoOrders', 'mode', { params: { mode: 'full' } });
  });
});

describe('v2.PF4.BackupRequestUsers', () => {
  it('answers the accounts a file holds, filtered by the group mask and cut at limit', async () => {
    const [{ file }] = await ok<Row[]>(c, 'v2.PF4.BackupInfoUsers', { params: { mode: 0 } });
    const server = await sim.ok<Row[]>('BackupRequestUsers', { file });
    const all = await ok<Row[]>(c, 'v2.PF4.BackupRequestUsers', { params: { file } });
    expect(all.map((u) => u.login)).toEqual(server.map((u) => u.login));
    expect(all[0]).toMatchObject({
      login: server[0].login,
      group: server[0].group,
      name: server[0].name,
      balance: server[0].balance,
    });
    // The file's accounts carry their password hashes and second-factor data; none is answered.
    expect(server[0].password).toMatch(/^[0-9a-f]{32}$/);
    all.forEach((user, i) => expectNoServerOnly(user, 'PF4User', server[i], 'user'));
    const real = await ok<Row[]>(c, 'v2.PF4.BackupRequestUsers', {
      params: { file },
      query: { request: 'real\\*,!real\\vip' },
    });
    expect(real.map((u) => u.login)).toEqual(
      server.filter((u) => u.group.startsWith('real\\') && u.group !== 'real\\vip').map((u) => u.login),
    );
    expect(real.length).toBeGreaterThan(0);
    expect(
      (await ok<Row[]>(c, 'v2.PF4.BackupRequestUsers', { params: { file }, query: { limit: 5 } })).map((u) => u.login),
    ).toEqual(server.slice(0, 5).map((u) => u.login));
  });

  it('answers NotFound for an unknown file and refuses a bad limit, naming it', async () => {
    expect(await fails(c, 'v2.PF4.BackupRequestUsers', { params: { file: 'full-19990101T0000.bak' } })).toMatchObject({
      code: 'NotFound',
    });
    await refuses(c, 'v2.PF4.BackupRequestUsers', 'limit', { params: { file: 'x.bak' }, query: { limit: 0 } });
    await refuses(c, 'v2.PF4.BackupRequestUsers', 'file', { params: { file: 'f'.repeat(257) } });
  });
});

describe('v2.PF4.BackupRequestOrders', () => {
  it('answers the open trades a file holds, cut at limit', async () => {
    const [{ file }] = await ok<Row[]>(c, 'v2.PF4.BackupInfoOrders', { params: { mode: 0 } });
    const server = await sim.ok<Row[]>('BackupRequestOrders', { file });
    const all = await ok<Row[]>(c, 'v2.PF4.BackupRequestOrders', { params: { file } });
    expect(all.map((t) => t.order)).toEqual(server.map((t) => t.order));
    expect(all[0]).toMatchObject({
      order: server[0].order,
      login: server[0].login,
      symbol: server[0].symbol,
      openPrice: server[0].openPrice,
    });
    expect(
      (await ok<Row[]>(c, 'v2.PF4.BackupRequestOrders', { params: { file }, query: { limit: 3 } })).map((t) => t.order),
    ).toEqual(server.slice(0, 3).map((t) => t.order));
    expect(
      await fails(c, 'v2.PF4.BackupRequestOrders', { params: { file: 'archive-19990101T0000.bak' } }),
    ).toMatchObject({ code: 'NotFound' });
    await refuses(c, 'v2.PF4.BackupRequestOrders', 'limit', { params: { file }, query: { limit: 'all' } });
  });
});

describe('v2.PF4.BackupRestoreUsers', () => {
  it('creates and overwrites accounts from the records, as UserRecordRequest then shows', async () => {
    const existing = (await logins())[7];
    const before = await sim.ok<Row>('UserRecordRequest', { login: existing });
    const secretsBefore = await accountSecrets(existing);
    expect(secretsBefore.otpSecret).not.toBe('');
    const fresh = 190_001;
    expect((await sim.fails('UserRecordRequest', { login: fresh })).message).toMatch(/not found/);
    const records = [
      {
        login: fresh,
        group: 'real\\vip',
        name: 'Restored Holder',
        email: 'restored@example.com',
        country: 'Norway',
        leverage: 50,
        balance: 1234.5,
        credit: 10,
        enable: 1,
        enableReadOnly: 0,
      },
      { login: existing, name: 'Renamed From Backup', email: 'renamed@example.com', leverage: 200, enable: 0 },
    ];
    expect(await ok(c, 'v2.PF4.BackupRestoreUsers', { query: { confirm: true }, body: records })).toBe(true);

    const created = await ok<Row>(c, 'v2.PF4.UserRecordRequest', { params: { login: fresh } });
    expect(created).toMatchObject({
      login: fresh,
      group: 'real\\vip',
      name: 'Restored Holder',
      email: 'restored@example.com',
      country: 'Norway',
      leverage: 50,
      balance: 1234.5,
      credit: 10,
      enableFlags: 1,
    });
    const updated = await ok<Row>(c, 'v2.PF4.UserRecordRequest', { params: { login: existing } });
    expect(updated).toMatchObject({
      login: existing,
      name: 'Renamed From Backup',
      email: 'renamed@example.com',
      leverage: 200,
      enableFlags: 0,
      group: before.group,
      country: before.country,
      balance: before.balance,
    });
    // The overwritten account keeps its passwords, phone password, second factor and API data; the new one has none
    // but the default passwords, and neither answer carries them.
    expect(await accountSecrets(existing)).toEqual(secretsBefore);
    expect(await accountSecrets(fresh)).toMatchObject({ passwordPhone: '', otpSecret: '', apiData: '' });
    expectNoServerOnly(updated, 'PF4User', await sim.ok<Row>('UserRecordRequest', { login: existing }), 'user');
    expectNoServerOnly(created, 'PF4User', await sim.ok<Row>('UserRecordRequest', { login: fresh }), 'user');
  });

  it('takes a batch of 10000 full records (about 1.9 MB, above the default body bound) and restores every one', async () => {
    const first = 300_000;
    const groups = ['real\\standard', 'real\\ecn', 'demo\\forex', 'demo\\pro'];
    const records = Array.from({ length: 10_000 }, (_, i) => ({
      login: first + i,
      group: groups[i % groups.length],
      name: `Restored Holder ${String(i).padStart(5, '0')}`,
      email: `restored.holder.${i}@example.com`,
      country: i % 2 ? 'United Kingdom' : 'Germany',
      leverage: [50, 100, 200][i % 3],
      balance: 1000 + i + 0.25,
      credit: (i % 7) * 10.5,
      enable: i % 10 === 0 ? 0 : 1,
      enableReadOnly: 0,
    }));
    expect(bytes(records)).toBeGreaterThan(DEFAULT_BODY_LIMIT);
    expect(bytes(records)).toBeLessThan(RESTORE_BODY_LIMIT);
    const usersBefore = (await logins()).length;
    expect(await ok(c, 'v2.PF4.BackupRestoreUsers', { query: { confirm: true }, body: records })).toBe(true);

    const all = await logins();
    expect(all.length).toBe(usersBefore + 10_000);
    expect(all.filter((l) => l >= first && l < first + 10_000)).toHaveLength(10_000);
    for (const i of [0, 1, 4_321, 9_999]) {
      const r = records[i];
      expect(await sim.ok<Row>('UserRecordRequest', { login: r.login }), String(r.login)).toMatchObject({
        group: r.group,
        name: r.name,
        email: r.email,
        country: r.country,
        leverage: r.leverage,
        balance: r.balance,
        credit: r.credit,
        enableFlags: r.enable,
      });
    }
    expect(await journalSince(new Date(Date.now() - 60_000).toISOString(), '10000 accounts restored')).toEqual([
      '10000 accounts restored from backup',
    ]);
  });

  it('refuses 10001 full records naming body, and a body above its own 4 MiB bound unread, restoring nothing', async () => {
    const first = 320_000;
    const record = (i: number) => ({
      login: first + i,
      group: 'real\\standard',
      name: `Too Many ${i}`,
      email: `too.many.${i}@example.com`,
      country: 'France',
      leverage: 100,
      balance: 500.5,
      credit: 0,
      enable: 1,
      enableReadOnly: 0,
    });
    const tooMany = Array.from({ length: 10_001 }, (_, i) => record(i));
    expect(bytes(tooMany)).toBeGreaterThan(DEFAULT_BODY_LIMIT);
    const message = await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body', { query: { confirm: true }, body: tooMany });
    expect(message).toContain('10000');
    // 10000 records whose texts make the body larger than the operation's bound: refused by size, naming body.
    const padded = Array.from({ length: 10_000 }, (_, i) => ({
      ...record(i),
      name: `Too Large ${i} ${'x'.repeat(200)}`,
      country: 'c'.repeat(200),
    }));
    expect(bytes(padded)).toBeGreaterThan(RESTORE_BODY_LIMIT);
    expect(await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body', { query: { confirm: true }, body: padded })).toBe(
      `body: must be at most ${RESTORE_BODY_LIMIT} bytes`,
    );
    expect((await logins()).filter((l) => l >= first && l <= first + 10_000)).toEqual([]);
    // Other operations keep the default bound: the same 1.9 MB is refused unread there.
    const [a] = await logins();
    expect(
      await refuses(c, 'v2.PF4.NotificationsSend', 'body', { body: { logins: [a], message: 'hi', pad: tooMany } }),
    ).toBe(`body: must be at most ${DEFAULT_BODY_LIMIT} bytes`);
  });

  it('restores nothing when any record is refused by the server', async () => {
    const records = [
      { login: 190_002, name: 'Would Be Restored' },
      { login: 190_003, group: 'no\\such' },
    ];
    expect(await fails(c, 'v2.PF4.BackupRestoreUsers', { query: { confirm: true }, body: records })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
    });
    expect(await fails(c, 'v2.PF4.UserRecordRequest', { params: { login: 190_002 } })).toMatchObject({
      code: 'NotFound',
    });
  });

  it('is refused without confirm=true, and for a batch outside 1..10000 or a bad record, naming the field', async () => {
    const refusal = await refuses(c, 'v2.PF4.BackupRestoreUsers', 'confirm', {
      body: [{ login: 190_004, name: 'No Confirm' }],
    });
    expect(refusal).toMatch(/confirm/);
    expect(await fails(c, 'v2.PF4.UserRecordRequest', { params: { login: 190_004 } })).toMatchObject({
      code: 'NotFound',
    });
    await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body', { query: { confirm: true }, body: [] });
    await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body', {
      query: { confirm: true },
      body: Array.from({ length: 10_001 }, (_, i) => ({ login: 200_000 + i })),
    });
    await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body', { query: { confirm: true }, body: { login: 190_005 } });
    await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body.0.login', { query: { confirm: true }, body: [{ login: 0 }] });
    await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body.1.login', {
      query: { confirm: true },
      body: [{ login: 190_006 }, { name: 'No login' }],
    });
    await refuses(c, 'v2.PF4.BackupRestoreUsers', 'body.0', {
      query: { confirm: true },
      body: [{ login: 190_007, password: 'secret' }],
    });
  });
});

describe('v2.PF4.BackupRestoreOrders', () => {
  it('takes a batch of 10000 full records (about 3.1 MB, above the default body bound): every one restored, in order', async () => {
    const owners = (await logins()).slice(20, 30);
    const symbols = (await sim.ok<Row[]>('SymbolsRequest')).map((s) => s.symbol as string);
    const balances = await Promise.all(
      owners.map(async (login) => (await sim.ok<Row>('UserRecordRequest', { login })).balance),
    );
    const first = 7_100_000;
    const day = 86_400_000;
    const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
    const base = Date.parse('2025-03-03T08:00:00Z');
    const records = Array.from({ length: 10_000 }, (_, i) => ({
      order: first + i,
      login: owners[i % owners.length],
      symbol: symbols[i % symbols.length],
      tradeCommand: i % 2 ? 'Sell' : 'Buy',
      volume: 10 + (i % 90),
      openPrice: 1.1 + i / 1e5,
      sl: 1.05 + i / 1e5,
      tp: 1.2 + i / 1e5,
      closePrice: 1.15 + i / 1e5,
      profit: 12.5 + (i % 100),
      storage: -0.5 * (1 + (i % 5)),
      commission: -1.25 * (1 + (i % 3)),
      openTime: at(base + i * 60_000),
      closeTime: at(base + i * 60_000 + day),
      expiration: at(base + i * 60_000 + 2 * day),
      magic: 10_000 + i,
      comment: `restored batch ${String(i).padStart(5, '0')}`,
    }));
    expect(bytes(records)).toBeGreaterThan(2 * DEFAULT_BODY_LIMIT);
    expect(bytes(records)).toBeLessThan(RESTORE_BODY_LIMIT);
    const results = await ok<Row[]>(c, 'v2.PF4.BackupRestoreOrders', { query: { confirm: true }, body: records });
    expect(results).toEqual(records.map((r) => ({ order: r.order, res: 1 })));

    // Every one is in its owner's history (a closed trade: balance untouched), with the values sent.
    for (const [k, login] of owners.entries()) {
      const history = (await sim.ok<Row[]>('TradesUserHistory', { login })).filter(
        (t) => t.order >= first && t.order < first + 10_000,
      );
      expect(history, String(login)).toHaveLength(1_000);
      expect((await sim.ok<Row>('UserRecordRequest', { login })).balance).toBe(balances[k]);
    }
    for (const i of [0, 3_333, 9_999]) {
      const r = records[i];
      const history = await sim.ok<Row[]>('TradesUserHistory', { login: r.login });
      expect(
        history.find((t) => t.order === r.order),
        String(r.order),
      ).toMatchObject({
        login: r.login,
        symbol: r.symbol,
        tradeCommand: r.tradeCommand,
        volume: r.volume,
        openPrice: r.openPrice,
        closePrice: r.closePrice,
        profit: r.profit,
        storage: r.storage,
        commission: r.commission,
        openTime: r.openTime,
        closeTime: r.closeTime,
        magic: r.magic,
        comment: r.comment,
        tradeRecordState: 'ClosedNormal',
      });
    }
    expect(await journalSince(new Date(Date.now() - 60_000).toISOString(), 'orders restored')).toContain(
      '10000 of 10000 orders restored from backup',
    );
  });

  it('refuses 10001 full records naming body, restoring none of them', async () => {
    const login = (await logins())[31];
    const records = Array.from({ length: 10_001 }, (_, i) => ({
      order: 7_200_000 + i,
      login,
      symbol: 'EURUSD',
      tradeCommand: 'Buy',
      volume: 10,
      openPrice: 1.1,
      sl: 0,
      tp: 0,
      closePrice: 1.2,
      profit: 10,
      storage: 0,
      commission: 0,
      openTime: '2025-03-03T08:00:00Z',
      closeTime: '2025-03-04T08:00:00Z',
      expiration: '2025-03-05T08:00:00Z',
      magic: 1,
      comment: `one too many ${i}`,
    }));
    expect(bytes(records)).toBeGreaterThan(DEFAULT_BODY_LIMIT);
    expect(
      await refuses(c, 'v2.PF4.BackupRestoreOrders', 'body', { query: { confirm: true }, body: records }),
    ).toContain('10000');
    expect(
      (await sim.ok<Row[]>('TradesUserHistory', { login })).filter((t) => t.order >= 7_200_000 && t.order <= 7_210_000),
    ).toEqual([]);
  });

  it('answers one result per input in input order: restored, refused ones 0, each with its ticket', async () => {
    const symbols = await sim.ok<Row[]>('SymbolsRequest');
    const symbol = symbols[0].symbol as string;
    const open = (await sim.ok<{ items: Row[] }>('TradesRequest', { limit: 1 })).items[0];
    const login = (await logins())[11];
    const balanceBefore = (await sim.ok<Row>('UserRecordRequest', { login })).balance;
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const inputs = [
      {
        order: 7_000_001,
        login,
        symbol,
        tradeCommand: 'Buy',
        volume: 10,
        openPrice: 1.2345,
        openTime: hourAgo,
        magic: 7,
        comment: 'restored open',
      },
      { order: open.order, login: open.login, symbol: open.symbol, tradeCommand: 'Buy', volume: 10, openPrice: 1 },
      {
        order: 7_000_002,
        login,
        symbol,
        tradeCommand: 'Sell',
        volume: 20,
        openPrice: 1.3,
        closePrice: 1.29,
        openTime: hourAgo,
        closeTime: now,
        profit: 12.5,
      },
      { order: 7_000_003, login: 99_999_999, symbol, tradeCommand: 'Buy', volume: 10 },
      { order: 7_000_004, login, symbol: 'NOSUCH', tradeCommand: 'Buy', volume: 10 },
      { login, symbol, tradeCommand: 'Buy', volume: 10 },
    ];
    const results = await ok<Row[]>(c, 'v2.PF4.BackupRestoreOrders', { query: { confirm: true }, body: inputs });
    expect(results).toEqual([
      { order: 7_000_001, res: 1 },
      { order: open.order, res: 0 },
      { order: 7_000_002, res: 1 },
      { order: 7_000_003, res: 0 },
      { order: 7_000_004, res: 0 },
      { order: 0, res: 0 },
    ]);

    // The open one is an open trade again, the closed one is in the history, and the balance did not move.
    expect(await sim.ok<Row>('TradeRecordRequest', { order: 7_000_001 })).toMatchObject({
      login,
      symbol,
      tradeCommand: 'Buy',
      volume: 10,
      openPrice: 1.2345,
      magic: 7,
      tradeRecordState: 'OpenRestored',
    });
    const history = await sim.ok<Row[]>('TradesUserHistory', { login });
    expect(history.find((r) => r.order === 7_000_002)).toMatchObject({
      tradeCommand: 'Sell',
      closePrice: 1.29,
      profit: 12.5,
    });
    expect((await sim.ok<Row>('UserRecordRequest', { login })).balance).toBe(balanceBefore);
    expect((await sim.fails('TradeRecordRequest', { order: 7_000_003 })).message).toMatch(/not found/);

    // Restoring the same tickets again refuses each of them.
    const again = await ok<Row[]>(c, 'v2.PF4.BackupRestoreOrders', {
      query: { confirm: true },
      body: [inputs[2], inputs[0]],
    });
    expect(again).toEqual([
      { order: 7_000_002, res: 0 },
      { order: 7_000_001, res: 0 },
    ]);
  });

  it('is refused without confirm=true, and for a batch outside 1..10000 or a bad record, naming the field', async () => {
    const login = (await logins())[12];
    await refuses(c, 'v2.PF4.BackupRestoreOrders', 'confirm', {
      body: [{ order: 7_000_010, login, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 10 }],
    });
    expect((await sim.fails('TradeRecordRequest', { order: 7_000_010 })).message).toMatch(/not found/);
    await refuses(c, 'v2.PF4.BackupRestoreOrders', 'body', { query: { confirm: true }, body: [] });
    await refuses(c, 'v2.PF4.BackupRestoreOrders', 'body', {
      query: { confirm: true },
      body: Array.from({ length: 10_001 }, (_, i) => ({ order: 8_000_000 + i })),
    });
    await refuses(c, 'v2.PF4.BackupRestoreOrders', 'body.0.tradeCommand', {
      query: { confirm: true },
      body: [{ order: 7_000_011, tradeCommand: 'Hold' }],
    });
    await refuses(c, 'v2.PF4.BackupRestoreOrders', 'body.0.symbol', {
      query: { confirm: true },
      body: [{ order: 7_000_012, symbol: 'S'.repeat(13) }],
    });
  });
});

describe('v2.PF4.SrvChartsSync and v2.PF4.SrvLiveUpdateStart', () => {
  it('syncs the chart history of every symbol, as the server journal records', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const symbols = await sim.ok<Row[]>('CfgRequestSymbol');
    expect(await ok(c, 'v2.PF4.SrvChartsSync', { query: { confirm: true } })).toBe(true);
    const lines = await journalSince(since, 'charts synchronized');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^charts synchronized: \\d+ bars of ${symbols.length} symbols corrected$`));
    // Idempotent: a second sync corrects nothing.
    expect(await ok(c, 'v2.PF4.SrvChartsSync', { query: { confirm: true } })).toBe(true);
    expect((await journalSince(since, 'charts synchronized'))[1]).toMatch(/^charts synchronized: 0 bars of/);
  });

  it('starts the LiveUpdate broadcast of every enabled entry', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const enabled = (await sim.ok<Row[]>('CfgRequestLiveUpdate')).filter((l) => l.enable === 1);
    expect(enabled.length).toBeGreaterThan(0);
    expect(await ok(c, 'v2.PF4.SrvLiveUpdateStart', { query: { confirm: true } })).toBe(true);
    expect(await journalSince(since, 'LiveUpdate started')).toEqual(
      enabled.map((l) => `LiveUpdate started: ${l.company} ${l.path} build ${l.build}`),
    );
  });

  it('refuses each without confirm=true, doing nothing', async () => {
    // Strictly after every entry so far: the clock past the moment the tests before ended.
    const ended = Date.now();
    while (Date.now() <= ended) await new Promise((r) => setImmediate(r));
    const since = new Date().toISOString();
    await refuses(c, 'v2.PF4.SrvChartsSync', 'confirm');
    await refuses(c, 'v2.PF4.SrvLiveUpdateStart', 'confirm', { query: { confirm: false } });
    await refuses(c, 'v2.PF4.SrvFeedsRestart', 'confirm');
    await refuses(c, 'v2.PF4.SrvRestart', 'confirm');
    expect(await journalSince(since, 'charts synchronized')).toEqual([]);
    expect(await journalSince(since, 'LiveUpdate')).toEqual([]);
    expect(await journalSince(since, 'restarted')).toEqual([]);
  });
});

describe('server restarts (last: a tick gap, then a dropped manager session)', () => {
  const state = () => c.stack.control('demo-pf4', 'state') as Promise<Row>;

  it('v2.PF4.SrvFeedsRestart cycles every running feeder, and the ticks resume', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const running = (await sim.ok<Row[]>('SrvFeeders')).map((f) => f.name as string);
    expect(await ok(c, 'v2.PF4.SrvFeedsRestart', { query: { confirm: true } })).toBe(true);
    expect(await journalSince(since, 'restarted')).toEqual(running.map((n) => `feeder ${n} restarted`));
    const ticks = (await state()).ticksEmitted as number;
    expect(await eventually(async () => ((await state()).ticksEmitted as number) > ticks, 5000)).toBe(true);
  });

  it('v2.PF4.SrvRestart restarts the server; the gateway logs in afresh and answers again', async () => {
    const before = await state();
    const r = await call<boolean>(c, 'v2.PF4.SrvRestart', { query: { confirm: true } });
    expect(r.body).toMatchObject({ data: true, error: null });
    expect(
      await eventually(async () => ((await state()).restarts as number) === (before.restarts as number) + 1, 5000),
    ).toBe(true);
    await waitHealthy(c);
    const common = await eventually(
      async () => {
        const answer = await call<Row>(c, 'v2.PF4.ManagerCommon');
        return answer.body.error === null ? answer.body.data : null;
      },
      15_000,
      200,
    );
    expect(common).toMatchObject({ build: 1420 });
    expect(await eventually(async () => ((await state()).sessions as number) >= 1, 10_000)).toBe(true);
  });
});
