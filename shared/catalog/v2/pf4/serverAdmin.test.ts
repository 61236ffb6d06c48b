/**
 * The input rules of the v2 PF4 server administration operations (shared/catalog/v2/pf4/serverAdmin.ts), as the edge
 * applies them (validateInputs): the destructive commands' confirm query, the feeder list's paging, licence and feeder
 * names, push notifications (message, line breaks, logins), and what each entry declares.
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { serverAdmin } from './serverAdmin.js';
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

const DESTRUCTIVE = ['SrvRestart', 'SrvChartsSync', 'SrvLiveUpdateStart', 'SrvFeedsRestart'];
const notify = (body: unknown) => call('NotificationsSend', {}, '', json(body));

describe('v2 PF4 server admin: the entries', () => {
  it('declares the server administration operations', () => {
    expect(Object.keys(serverAdmin).sort()).toStrictEqual([
      'LicenseCheck',
      'NotificationsSend',
      'SrvChartsSync',
      'SrvFeederLog',
      'SrvFeeders',
      'SrvFeedsRestart',
      'SrvLiveUpdateStart',
      'SrvRestart',
    ]);
  });

  it('declares the restarts and resyncs destructive, for admin tokens, as maintenance; the restart has its own handler', () => {
    const admin = {
      tag: 'Server Admin (destructive)',
      timeout: 'maintenance',
      read: 'live',
      mutating: true,
      destructive: true,
      scope: 'webapi.admin',
    };
    expect(declared(op('SrvRestart'))).toStrictEqual({ ...admin, answer: { kind: 'custom' } });
    for (const name of ['SrvChartsSync', 'SrvLiveUpdateStart', 'SrvFeedsRestart']) {
      expect(declared(op(name)), name).toStrictEqual({ ...admin, answer: { kind: 'live', command: name } });
    }
  });

  it('declares the reads and the notification, which alone lets line breaks into its message', () => {
    const read = {
      tag: 'Server Admin',
      timeout: 'read',
      read: 'live',
      mutating: false,
      destructive: false,
      scope: 'webapi',
    };
    expect(declared(op('SrvFeeders'))).toStrictEqual({
      ...read,
      paged: { key: 'name' },
      answer: { kind: 'livePage', command: 'SrvFeeders' },
    });
    expect(declared(op('LicenseCheck'))).toStrictEqual({ ...read, answer: { kind: 'live', command: 'LicenseCheck' } });
    expect(declared(op('SrvFeederLog'))).toStrictEqual({
      ...read,
      answer: { kind: 'live', command: 'SrvFeederLog', keyedRead: true },
    });
    expect(declared(op('NotificationsSend'))).toStrictEqual({
      ...read,
      timeout: 'change',
      mutating: true,
      scope: 'webapi.write',
      controlCharacters: { 'body.message': 'lineBreaks' },
      answer: { kind: 'live', command: 'NotificationsSend' },
    });
  });

  it('gives every entry a summary: a sentence without gaps where a name was left out', () => {
    for (const entry of Object.values(serverAdmin)) {
      expect(entry.summary.length, entry.id).toBeGreaterThan(20);
      expect(entry.summary, entry.id).not.toMatch(/ {2}| \.$|\( /);
      expect(entry.summary.endsWith('.'), entry.id).toBe(true);
    }
  });
});

describe('v2 PF4 server admin: destructive commands', () => {
  it('consume confirm (no arguments reach the server) and refuse a confirm that is not a boolean', () => {
    for (const name of DESTRUCTIVE) {
      expect(call(name, {}, '?confirm=true', none), name).toStrictEqual(accepted({}));
      expect(call(name, {}, '?confirm=yes', none), name).toStrictEqual(refused('confirm: must be true or false'));
    }
  });
});

describe('v2 PF4 server admin: reads', () => {
  it('page the running feeders', () => {
    expect(call('SrvFeeders', {}, '?limit=2&cursor=feedA', none)).toStrictEqual(
      accepted({ limit: 2, cursor: 'feedA' }),
    );
    expect(call('SrvFeeders', {}, '?limit=5001', none)).toStrictEqual(refused('limit: limit must be at most 5000'));
  });

  it('take a licence name of 1 to 64 characters', () => {
    expect(call('LicenseCheck', { licenseName: 'l' }, '', none)).toStrictEqual(accepted({ licenseName: 'l' }));
    expect(call('LicenseCheck', { licenseName: 'l'.repeat(64) }, '', none)).toStrictEqual(
      accepted({ licenseName: 'l'.repeat(64) }),
    );
    expect(call('LicenseCheck', { licenseName: 'l'.repeat(65) }, '', none)).toStrictEqual(
      refused('licenseName: licenseName must be at most 64 characters'),
    );
    expect(call('LicenseCheck', { licenseName: '' }, '', none)).toStrictEqual(
      refused('licenseName: licenseName must not be empty'),
    );
  });

  it('take a feeder name of 1 to 128 characters', () => {
    expect(call('SrvFeederLog', { name: 'f' }, '', none)).toStrictEqual(accepted({ name: 'f' }));
    expect(call('SrvFeederLog', { name: 'f'.repeat(128) }, '', none)).toStrictEqual(
      accepted({ name: 'f'.repeat(128) }),
    );
    expect(call('SrvFeederLog', { name: 'f'.repeat(129) }, '', none)).toStrictEqual(
      refused('name: name must be at most 128 characters'),
    );
    expect(call('SrvFeederLog', { name: '' }, '', none)).toStrictEqual(refused('name: name must not be empty'));
  });
});

describe('v2 PF4 server admin: NotificationsSend', () => {
  it('passes a message of 1 and of 255 characters, with tab and line breaks, to logins 1 and 2147483647', () => {
    expect(notify({ message: 'a\tb\r\nc', logins: [1, 2147483647] })).toStrictEqual(
      accepted({ body: { message: 'a\tb\r\nc', logins: [1, 2147483647] } }),
    );
    expect(notify({ message: 'm', logins: [7] })).toStrictEqual(accepted({ body: { message: 'm', logins: [7] } }));
    expect(notify({ message: 'm'.repeat(255), logins: [7] })).toStrictEqual(
      accepted({ body: { message: 'm'.repeat(255), logins: [7] } }),
    );
  });

  it('refuses other control characters in the message', () => {
    expect(notify({ message: 'bell\u0007', logins: [7] })).toStrictEqual(
      refused('body.message: must not contain control characters other than tab and line breaks'),
    );
  });

  it('requires a message of 1 to 255 characters', () => {
    for (const message of [undefined, null, 5]) {
      expect(notify({ message, logins: [7] }), String(message)).toStrictEqual(
        refused('body.message: message is required'),
      );
    }
    expect(notify({ message: '', logins: [7] })).toStrictEqual(refused('body.message: message must not be empty'));
    expect(notify({ message: 'm'.repeat(256), logins: [7] })).toStrictEqual(
      refused('body.message: message must be at most 255 characters'),
    );
  });

  it('requires a list of 1 to 100000 logins', () => {
    for (const logins of [undefined, null, 7]) {
      expect(notify({ message: 'm', logins }), String(logins)).toStrictEqual(
        refused('body.logins: logins must be an array of logins'),
      );
    }
    expect(notify({ message: 'm', logins: [] })).toStrictEqual(
      refused('body.logins: logins must list at least one login'),
    );
    const logins = Array.from({ length: 100_001 }, (_, i) => i + 1);
    const most = notify({ message: 'm', logins: logins.slice(0, 100_000) });
    expect(most.ok && (most.args.body as { logins: number[] }).logins.length).toBe(100_000);
    expect(notify({ message: 'm', logins })).toStrictEqual(
      refused('body.logins: logins must list at most 100000 logins'),
    );
  });

  it('names the login that is not a positive 32-bit integer', () => {
    expect(notify({ message: 'm', logins: [1, 0] })).toStrictEqual(
      refused('body.logins.1: logins must hold positive logins'),
    );
    expect(notify({ message: 'm', logins: [1.5] })).toStrictEqual(refused('body.logins.0: logins must hold integers'));
    expect(notify({ message: 'm', logins: [2147483648] })).toStrictEqual(
      refused('body.logins.0: logins must hold 32-bit logins'),
    );
  });

  it('keeps the request strict and needs a body', () => {
    expect(notify({ message: 'm', logins: [7], title: 't' })).toStrictEqual(refused('body: Unrecognized key: "title"'));
    expect(call('NotificationsSend', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });
});
