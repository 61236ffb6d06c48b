/**
 * The input rules of the v2 PF4 Mail entries (shared/catalog/v2/pf4/mail.ts), as the edge applies them in
 * validateInputs: the sent mail's sender, subject and body bounds, its 1 to 1000 logins (duplicates collapsed), line
 * breaks in the body only, and what each entry declares about itself.
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { mail } from './mail.js';
import { accepted, callerOf, entryOf, json, none, refused } from '../../../../test/support/catalog/calls.js';

const entry = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');
const send = (body: unknown) => call('MailSend', {}, '', json(body));

const declared = (e: Operation) => ({
  method: e.method,
  path: e.path,
  tag: e.tag,
  response: e.response,
  timeout: e.timeout,
  read: e.read,
  mutating: e.mutating,
  destructive: e.destructive,
  scope: e.scope,
  paged: e.paged,
  controlCharacters: e.controlCharacters,
  answer: JSON.parse(JSON.stringify(e.answer)) as unknown,
});
const reading = {
  method: 'GET',
  tag: 'Mail',
  timeout: 'read',
  read: 'live',
  mutating: false,
  destructive: false,
  scope: 'webapi',
  paged: undefined,
  controlCharacters: undefined,
};

describe('v2 PF4 mail: what each entry declares', () => {
  it('declares the mail operations', () => {
    expect(Object.keys(mail).sort()).toStrictEqual(['MailLast', 'MailSend', 'MailsRequest']);
  });

  it('declares MailLast live and unpaged, MailsRequest live, paged and answered by its own handler', () => {
    expect(declared(entry('MailLast'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/MailLast',
      response: { type: 'string' },
      answer: { kind: 'live', command: 'MailLast' },
    });
    expect(declared(entry('MailsRequest'))).toStrictEqual({
      ...reading,
      path: '/api/v2/PF4/{tradePlatform}/MailsRequest',
      response: 'PF4MailBox[]',
      paged: { key: 'time' },
      answer: { kind: 'custom' },
    });
  });

  it('declares the send a live mutating POST in the change class (write scope), line breaks allowed in the body alone', () => {
    expect(declared(entry('MailSend'))).toStrictEqual({
      ...reading,
      method: 'POST',
      path: '/api/v2/PF4/{tradePlatform}/MailSend',
      response: { type: 'boolean' },
      timeout: 'change',
      mutating: true,
      scope: 'webapi.write',
      controlCharacters: { 'body.body': 'lineBreaks' },
      answer: { kind: 'live', command: 'MailSend' },
    });
  });

  it('gives every mail entry a summary sentence', () => {
    for (const e of Object.values(mail)) expect(e.summary, e.name).toMatch(/^[A-Z].{10,}[.)]$/);
  });
});

describe('v2 PF4 mail: inputs', () => {
  it('MailLast takes nothing; MailsRequest takes a page (limit 1 to 5000, cursor)', () => {
    expect(call('MailLast', {}, '?login=1')).toStrictEqual(accepted({}));
    expect(call('MailsRequest', {}, '?login=1')).toStrictEqual(accepted({}));
    expect(call('MailsRequest', {}, '?limit=1&cursor=Nw')).toStrictEqual(accepted({ limit: 1, cursor: 'Nw' }));
    expect(call('MailsRequest', {}, '?limit=5001')).toStrictEqual(refused('limit: limit must be at most 5000'));
  });

  it('MailSend passes a full mail at its bounds, with tab and line breaks in the body', () => {
    const body = 'Dear client,\r\n\tstatement attached'.padEnd(65_536, 'b');
    const full = {
      senderLogin: 2147483647,
      senderName: 'n'.repeat(63),
      subject: 's'.repeat(127),
      body,
      logins: [1, 2147483647],
    };
    expect(send(full)).toStrictEqual(accepted({ body: full }));
    expect(send({ subject: 's', logins: [7] })).toStrictEqual(accepted({ body: { subject: 's', logins: [7] } }));
    expect(send({ senderLogin: 0, senderName: null, subject: 's', body: null, logins: [7] })).toStrictEqual(
      accepted({ body: { senderLogin: 0, senderName: null, subject: 's', body: null, logins: [7] } }),
    );
  });

  it('MailSend collapses duplicate logins, keeping the first order', () => {
    expect(send({ subject: 's', logins: [9, 7, 9, 7, 8] })).toStrictEqual(
      accepted({ body: { subject: 's', logins: [9, 7, 8] } }),
    );
  });

  it('MailSend requires 1 to 1000 listed logins', () => {
    for (const logins of [undefined, null, 7]) {
      expect(send({ subject: 's', logins }), String(logins)).toStrictEqual(
        refused('body.logins: logins must be an array of logins'),
      );
    }
    expect(send({ subject: 's', logins: [] })).toStrictEqual(
      refused('body.logins: logins must list at least one login'),
    );
    const logins = Array.from({ length: 1_001 }, (_, i) => i + 1);
    const most = send({ subject: 's', logins: logins.slice(0, 1_000) });
    expect(most.ok && (most.args.body as { logins: number[] }).logins).toStrictEqual(logins.slice(0, 1_000));
    expect(send({ subject: 's', logins })).toStrictEqual(refused('body.logins: logins must list at most 1000 logins'));
    // The bound counts the list as sent: 1001 entries are refused even when they collapse to one.
    expect(send({ subject: 's', logins: Array(1_001).fill(7) })).toStrictEqual(
      refused('body.logins: logins must list at most 1000 logins'),
    );
  });

  it('MailSend names the login that is not a positive 32-bit integer', () => {
    expect(send({ subject: 's', logins: [1, 0] })).toStrictEqual(
      refused('body.logins.1: logins must hold positive logins'),
    );
    expect(send({ subject: 's', logins: [1.5] })).toStrictEqual(refused('body.logins.0: logins must hold integers'));
    expect(send({ subject: 's', logins: [2147483648] })).toStrictEqual(
      refused('body.logins.0: logins must hold 32-bit logins'),
    );
  });

  it('MailSend requires a subject of 1 to 127 characters', () => {
    for (const subject of [undefined, null, 5]) {
      expect(send({ subject, logins: [7] }), String(subject)).toStrictEqual(
        refused('body.subject: subject is required'),
      );
    }
    expect(send({ subject: '', logins: [7] })).toStrictEqual(refused('body.subject: subject must not be empty'));
    expect(send({ subject: 's'.repeat(128), logins: [7] })).toStrictEqual(
      refused('body.subject: subject must be at most 127 characters'),
    );
  });

  it('MailSend bounds the sender name at 63 and the body at 65536 characters', () => {
    expect(send({ subject: 's', senderName: 'n'.repeat(64), logins: [7] })).toStrictEqual(
      refused('body.senderName: senderName must be at most 63 characters'),
    );
    expect(send({ subject: 's', senderName: 3, logins: [7] })).toStrictEqual(
      refused('body.senderName: senderName must be a string'),
    );
    expect(send({ subject: 's', body: 'b'.repeat(65_537), logins: [7] })).toStrictEqual(
      refused('body.body: body must be at most 65536 characters'),
    );
    expect(send({ subject: 's', body: 1, logins: [7] })).toStrictEqual(refused('body.body: body must be a string'));
  });

  it('MailSend takes a sender login of 0 to 2147483647', () => {
    expect(send({ subject: 's', senderLogin: -1, logins: [7] })).toStrictEqual(
      refused('body.senderLogin: senderLogin must be at least 0'),
    );
    expect(send({ subject: 's', senderLogin: 2147483648, logins: [7] })).toStrictEqual(
      refused('body.senderLogin: senderLogin must be at most 2147483647'),
    );
    expect(send({ subject: 's', senderLogin: 1.5, logins: [7] })).toStrictEqual(
      refused('body.senderLogin: senderLogin must be an integer'),
    );
    expect(send({ subject: 's', senderLogin: '7', logins: [7] })).toStrictEqual(
      refused('body.senderLogin: senderLogin must be an integer'),
    );
  });

  it('MailSend refuses control characters in the subject and sender name, and in the body all but tab and line breaks', () => {
    expect(send({ subject: 'a\r\nb', logins: [7] })).toStrictEqual(
      refused('body.subject: must not contain control characters'),
    );
    expect(send({ subject: 's', senderName: 'a\tb', logins: [7] })).toStrictEqual(
      refused('body.senderName: must not contain control characters'),
    );
    expect(send({ subject: 's', body: 'bell\u0007', logins: [7] })).toStrictEqual(
      refused('body.body: must not contain control characters other than tab and line breaks'),
    );
  });

  it('MailSend keeps the request strict and needs a body', () => {
    expect(send({ subject: 's', logins: [7], to: 8 })).toStrictEqual(refused('body: Unrecognized key: "to"'));
    expect(call('MailSend', {}, '', none)).toStrictEqual(
      refused('body: Invalid input: expected object, received undefined'),
    );
  });
});
