/**
 * The input rules of the v2 PF4 backup operations (shared/catalog/v2/pf4/backup.ts), as the edge applies them
 * (validateInputs): backup modes and files, the request mask and limit with its default, restore batches of 1 to
 * 10000 records with their keys and name bounds, and what each entry declares (destructive, admin scope, body bound).
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { backup, RESTORE_BODY_LIMIT_BYTES, RESTORE_MAX } from './backup.js';
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

const RESTORES = ['BackupRestoreUsers', 'BackupRestoreOrders'];
const restore = (name: string, body: unknown) => call(name, {}, '?confirm=true', json(body));

describe('v2 PF4 backup: the entries', () => {
  it('declares the backup operations', () => {
    expect(Object.keys(backup).sort()).toStrictEqual([
      'BackupInfoOrders',
      'BackupInfoUsers',
      'BackupRequestOrders',
      'BackupRequestUsers',
      'BackupRestoreOrders',
      'BackupRestoreUsers',
    ]);
  });

  it('reads backup files live', () => {
    const read = { tag: 'Backup', timeout: 'read', read: 'live', mutating: false, destructive: false, scope: 'webapi' };
    for (const name of ['BackupInfoUsers', 'BackupInfoOrders'])
      expect(declared(op(name)), name).toStrictEqual({ ...read, answer: { kind: 'live', command: name } });
    for (const name of ['BackupRequestUsers', 'BackupRequestOrders']) {
      expect(declared(op(name)), name).toStrictEqual({
        ...read,
        answer: { kind: 'live', command: name, keyedRead: true },
      });
    }
  });

  it('declares the restores destructive, for admin tokens, as maintenance, with a 4 MiB body bound', () => {
    const admin = {
      tag: 'Backup (destructive)',
      timeout: 'maintenance',
      read: 'live',
      mutating: true,
      destructive: true,
      scope: 'webapi.admin',
      bodyLimitBytes: 4194304,
    };
    expect(declared(op('BackupRestoreUsers'))).toStrictEqual({
      ...admin,
      answer: { kind: 'live', command: 'BackupRestoreUsers', args: 'function' },
    });
    expect(declared(op('BackupRestoreOrders'))).toStrictEqual({ ...admin, answer: { kind: 'custom' } });
    expect(RESTORE_BODY_LIMIT_BYTES).toBe(4 * 1024 * 1024);
    expect(RESTORE_MAX).toBe(10_000);
  });

  it("sends the accounts to restore as the command's records", () => {
    const args = (op('BackupRestoreUsers').answer as { args: (a: Record<string, unknown>) => unknown }).args;
    expect(args({ confirm: true, body: [{ login: 5 }, { login: 6 }] })).toStrictEqual({
      records: [{ login: 5 }, { login: 6 }],
    });
  });

  it('gives every entry a summary: a sentence without gaps where a name was left out', () => {
    for (const entry of Object.values(backup)) {
      expect(entry.summary.length, entry.id).toBeGreaterThan(20);
      expect(entry.summary, entry.id).not.toMatch(/ {2}| \.$|\( /);
      expect(entry.summary.endsWith('.'), entry.id).toBe(true);
    }
  });
});

describe('v2 PF4 backup: backup file lists (BackupInfoUsers, BackupInfoOrders)', () => {
  it('take mode 0 (full) and 1 (archive) only', () => {
    for (const name of ['BackupInfoUsers', 'BackupInfoOrders']) {
      expect(call(name, { mode: '0' }, '', none), name).toStrictEqual(accepted({ mode: 0 }));
      expect(call(name, { mode: '1' }, '', none), name).toStrictEqual(accepted({ mode: 1 }));
      expect(call(name, { mode: '-1' }, '', none), name).toStrictEqual(refused('mode: mode must be at least 0'));
      expect(call(name, { mode: '2' }, '', none), name).toStrictEqual(refused('mode: mode must be at most 1'));
      expect(call(name, { mode: 'full' }, '', none), name).toStrictEqual(refused('mode: mode must be an integer'));
    }
  });
});

describe('v2 PF4 backup: backup file contents (BackupRequestUsers, BackupRequestOrders)', () => {
  const READS = ['BackupRequestUsers', 'BackupRequestOrders'];

  it('default the limit to 10000 and pass the request mask', () => {
    for (const name of READS) {
      expect(call(name, { file: 'users.bak' }, '', none), name).toStrictEqual(
        accepted({ file: 'users.bak', limit: 10000 }),
      );
      expect(call(name, { file: 'users.bak' }, '?request=demo*&limit=5', none), name).toStrictEqual(
        accepted({ file: 'users.bak', request: 'demo*', limit: 5 }),
      );
    }
  });

  it('take a file name of 1 to 256 characters', () => {
    for (const name of READS) {
      expect(call(name, { file: 'f'.repeat(256) }, '', none), name).toStrictEqual(
        accepted({ file: 'f'.repeat(256), limit: 10000 }),
      );
      expect(call(name, { file: 'f'.repeat(257) }, '', none), name).toStrictEqual(
        refused('file: file must be at most 256 characters'),
      );
      expect(call(name, { file: '' }, '', none), name).toStrictEqual(refused('file: file must not be empty'));
    }
  });

  it('take a request of up to 256 characters, an empty one as none (all records)', () => {
    for (const name of READS) {
      expect(call(name, { file: 'f' }, `?request=${'r'.repeat(256)}`, none), name).toStrictEqual(
        accepted({ file: 'f', request: 'r'.repeat(256), limit: 10000 }),
      );
      expect(call(name, { file: 'f' }, `?request=${'r'.repeat(257)}`, none), name).toStrictEqual(
        refused('request: request must be at most 256 characters'),
      );
      expect(call(name, { file: 'f' }, '?request=', none), name).toStrictEqual(accepted({ file: 'f', limit: 10000 }));
      expect(call(name, { file: 'f' }, '?request=&limit=5', none), name).toStrictEqual(
        accepted({ file: 'f', limit: 5 }),
      );
      expect(call(name, { file: 'f' }, '?request=x', none), name).toStrictEqual(
        accepted({ file: 'f', request: 'x', limit: 10000 }),
      );
    }
  });

  it('take a limit from 1 to 2147483647', () => {
    for (const name of READS) {
      expect(call(name, { file: 'f' }, '?limit=1', none), name).toStrictEqual(accepted({ file: 'f', limit: 1 }));
      expect(call(name, { file: 'f' }, '?limit=2147483647', none), name).toStrictEqual(
        accepted({ file: 'f', limit: 2147483647 }),
      );
      expect(call(name, { file: 'f' }, '?limit=0', none), name).toStrictEqual(
        refused('limit: limit must be at least 1'),
      );
      expect(call(name, { file: 'f' }, '?limit=2147483648', none), name).toStrictEqual(
        refused('limit: limit must be at most 2147483647'),
      );
    }
  });
});

describe('v2 PF4 backup: restore batches', () => {
  it('take 1 record and pass it with the confirm query consumed', () => {
    expect(restore('BackupRestoreUsers', [{ login: 1, group: 'demo', balance: 10.5 }])).toStrictEqual(
      accepted({ body: [{ login: 1, group: 'demo', balance: 10.5 }] }),
    );
    expect(restore('BackupRestoreOrders', [{ order: 7, symbol: 'EURUSD' }])).toStrictEqual(
      accepted({ body: [{ order: 7, symbol: 'EURUSD' }] }),
    );
  });

  it('refuse a body that is not an array, and an empty one', () => {
    for (const name of RESTORES) {
      expect(restore(name, { login: 1 }), name).toStrictEqual(refused('body: must be a JSON array of records'));
      expect(call(name, {}, '?confirm=true', none), name).toStrictEqual(
        refused('body: must be a JSON array of records'),
      );
      expect(restore(name, []), name).toStrictEqual(refused('body: must hold at least 1 record'));
    }
  });

  it('take 10000 records and refuse 10001', () => {
    const users = Array.from({ length: 10_001 }, (_, i) => ({ login: i + 1 }));
    const most = restore('BackupRestoreUsers', users.slice(0, 10_000));
    expect(most.ok && (most.args.body as unknown[]).length).toBe(10_000);
    expect(restore('BackupRestoreUsers', users)).toStrictEqual(refused('body: must hold at most 10000 records'));
    const trades = Array.from({ length: 10_001 }, (_, i) => ({ order: i + 1 }));
    const mostTrades = restore('BackupRestoreOrders', trades.slice(0, 10_000));
    expect(mostTrades.ok && (mostTrades.args.body as unknown[]).length).toBe(10_000);
    expect(restore('BackupRestoreOrders', trades)).toStrictEqual(refused('body: must hold at most 10000 records'));
  });
});

describe('v2 PF4 backup: BackupRestoreUsers records', () => {
  it('take logins 1 and 2147483647', () => {
    expect(restore('BackupRestoreUsers', [{ login: 1 }, { login: 2147483647 }])).toStrictEqual(
      accepted({ body: [{ login: 1 }, { login: 2147483647 }] }),
    );
  });

  it('require the login as a number, naming the record', () => {
    for (const login of [undefined, null, '5']) {
      expect(restore('BackupRestoreUsers', [{ login: 1 }, { login, name: 'x' }]), String(login)).toStrictEqual(
        refused('body.1.login: login is required'),
      );
    }
  });

  it('refuse fractional, zero and 2147483648 logins', () => {
    expect(restore('BackupRestoreUsers', [{ login: 2.5 }])).toStrictEqual(
      refused('body.0.login: login must be an integer'),
    );
    expect(restore('BackupRestoreUsers', [{ login: 0 }])).toStrictEqual(
      refused('body.0.login: login must be at least 1'),
    );
    expect(restore('BackupRestoreUsers', [{ login: 2147483648 }])).toStrictEqual(
      refused('body.0.login: login must be at most 2147483647'),
    );
  });

  it('take a group of up to 16 characters, or null, and refuse 17', () => {
    expect(
      restore('BackupRestoreUsers', [
        { login: 1, group: 'g'.repeat(16) },
        { login: 2, group: null },
      ]),
    ).toStrictEqual(
      accepted({
        body: [
          { login: 1, group: 'g'.repeat(16) },
          { login: 2, group: null },
        ],
      }),
    );
    expect(restore('BackupRestoreUsers', [{ login: 1, group: 'g'.repeat(17) }])).toStrictEqual(
      refused('body.0.group: group must be at most 16 characters'),
    );
  });

  it('keep the record strict', () => {
    expect(restore('BackupRestoreUsers', [{ login: 1, password: 'p' }])).toStrictEqual(
      refused('body.0: Unrecognized key: "password"'),
    );
  });
});

describe('v2 PF4 backup: BackupRestoreOrders records', () => {
  it('take a symbol of up to 12 characters, or null, or none', () => {
    expect(restore('BackupRestoreOrders', [{ symbol: 'ABCDEFGHIJKL' }, { symbol: null }, {}])).toStrictEqual(
      accepted({ body: [{ symbol: 'ABCDEFGHIJKL' }, { symbol: null }, {}] }),
    );
  });

  it('refuse a symbol of 13 characters, naming the record', () => {
    expect(restore('BackupRestoreOrders', [{}, { symbol: 'ABCDEFGHIJKLM' }])).toStrictEqual(
      refused('body.1.symbol: symbol must be at most 12 characters'),
    );
  });
});
