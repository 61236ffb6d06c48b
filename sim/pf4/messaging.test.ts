/**
 * PF4 messaging on a small world: NewsSend joins the news with its body (bounded text fields, the oldest items leave
 * past NEWS_KEPT), MailSend delivers to each listed account's mailbox or refuses the whole send, MailsRequest lists
 * the kept mails newest first (or one account's mailbox), and MailLast is the body of the newest.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';
import { MAILS_KEPT, NEWS_KEPT } from './serverServices.js';

type Mail = { time: string; senderLogin: number; senderName: string; subject: string; body: string };

describe('NewsSend', () => {
  it('adds the item with the next key, its body and priority, and announces the header without the body', () => {
    const h = pf4Harness();
    const before = h.call('NewsTotal');
    const body = 'Line one\r\nLine two\t'.padEnd(65_536, 'b');
    expect(
      h.call('NewsSend', { record: { topic: 't'.repeat(255), category: 'c'.repeat(63), body, highPriority: true } }),
    ).toBe(true);
    const topic = h.call('NewsTopicGet', { pos: before });
    expect(topic).toMatchObject({
      key: 21,
      topic: 't'.repeat(255),
      category: 'c'.repeat(63),
      keywords: '',
      priority: 1,
      langId: 0,
    });
    records.PF4NewsTopic.parse(topic);
    expect(h.call('NewsBodyGet', { key: 21 })).toBe(body);
    expect(h.events).toEqual([{ kind: 'news', op: 'add', record: topic }]);
    expect(h.call('NewsSend', { record: { topic: 'Plain', category: null, body: null } })).toBe(true);
    expect(h.call('NewsTopicGet', { pos: before + 1 })).toMatchObject({
      key: 22,
      topic: 'Plain',
      category: '',
      priority: 0,
    });
    expect(h.call('NewsBodyGet', { key: 22 })).toBe('');
  });

  it('refuses a missing or empty topic and text beyond its bound, adding nothing', () => {
    const h = pf4Harness();
    const bad = (record: Record<string, unknown>) => h.fails('NewsSend', { record });
    expect(bad({ body: 'b' })).toEqual({ code: R.InvalidData, message: 'record.topic is required' });
    expect(bad({ topic: '' })).toEqual({ code: R.InvalidData, message: 'record.topic is required' });
    expect(bad({ topic: 't'.repeat(256) })).toEqual({
      code: R.InvalidData,
      message: 'record.topic must be at most 255 characters',
    });
    expect(bad({ topic: 't', category: 'c'.repeat(64) })).toEqual({
      code: R.InvalidData,
      message: 'record.category must be at most 63 characters',
    });
    expect(bad({ topic: 't', body: 'b'.repeat(65_537) })).toEqual({
      code: R.InvalidData,
      message: 'record.body must be at most 65536 characters',
    });
    expect(bad({ topic: 't', body: 5 })).toEqual({ code: R.InvalidData, message: 'record.body must be a string' });
    expect(bad({ topic: 't', keywords: 'k' }).message).toContain('record');
    expect(h.call('NewsTotal')).toBe(20);
    expect(h.events).toEqual([]);
  });

  it('keeps the newest NEWS_KEPT items: the oldest leaves with a news delete', () => {
    const h = pf4Harness();
    const [first, second] = h.call<Array<{ key: number }>>('NewsRequest');
    for (let i = 0; i < NEWS_KEPT - 20; i++) h.call('NewsSend', { record: { topic: `n${i}` } });
    expect(h.call('NewsTotal')).toBe(NEWS_KEPT);
    expect(h.events.filter((e) => e.op === 'delete')).toEqual([]);
    h.call('NewsSend', { record: { topic: 'one more' } });
    expect(h.call('NewsTotal')).toBe(NEWS_KEPT);
    expect(h.events.filter((e) => e.op === 'delete')).toEqual([
      { kind: 'news', op: 'delete', record: { key: first.key } },
    ]);
    expect(h.call('NewsTopicGet', { pos: 0 }).key).toBe(second.key);
    expect(h.fails('NewsBodyGet', { key: first.key }).code).toBe(R.InvalidData);
  });
});

describe('MailSend, MailsRequest and MailLast', () => {
  it('delivers the mail once to each listed account, lists it first and answers its body as the last', () => {
    const h = pf4Harness();
    const [a, b, c] = h.world.users.keys();
    const mail = { senderLogin: 1000, senderName: 'Desk', subject: 'Hello', body: 'Margin call soon\r\nRegards' };
    expect(h.call('MailSend', { record: { ...mail, logins: [a, b, a] } })).toBe(true);
    const listed = h.call<Mail[]>('MailsRequest');
    expect(listed).toHaveLength(2);
    expect(listed[0]).toEqual({ ...mail, time: expect.any(String) });
    expect(listed[1]).toMatchObject({ senderLogin: 0, senderName: 'Server', subject: 'Welcome' });
    for (const m of listed) records.PF4MailBox.parse(m);
    expect(h.call('MailLast')).toBe(mail.body);
    expect(h.call('MailsRequest', { login: a })).toEqual([listed[0]]);
    expect(h.call('MailsRequest', { login: b })).toEqual([listed[0]]);
    expect(h.call('MailsRequest', { login: c })).toEqual([]);
    expect(h.events).toEqual([{ kind: 'mail', op: 'add', record: listed[0] }]);

    h.call('MailSend', { record: { subject: 'Second', logins: [b] } });
    const second = { time: expect.any(String), senderLogin: 0, senderName: '', subject: 'Second', body: '' };
    expect(h.call('MailsRequest', { login: b })).toEqual([second, listed[0]]);
    expect(h.call('MailsRequest')[0]).toEqual(second);
    expect(h.call('MailLast')).toBe('');
  });

  it('answers a page of mails with their keys when asked with limit, going on before a key', () => {
    const h = pf4Harness();
    const [a] = h.world.users.keys();
    for (let i = 1; i <= 4; i++) h.call('MailSend', { record: { subject: `m${i}`, logins: [a] } });
    const all = h.call<Mail[]>('MailsRequest');
    const first = h.call<{ items: Array<Mail & { key: number }>; hasMore: boolean }>('MailsRequest', { limit: 2 });
    expect(first.items.map((m) => [m.key, m.subject])).toStrictEqual([
      [5, 'm4'],
      [4, 'm3'],
    ]);
    expect(first.hasMore).toBe(true);
    const rest = h.call<{ items: Array<Mail & { key: number }>; hasMore: boolean }>('MailsRequest', {
      limit: 5,
      before: 4,
    });
    expect(rest.items.map((m) => [m.key, m.subject])).toStrictEqual([
      [3, 'm2'],
      [2, 'm1'],
      [1, 'Welcome'],
    ]);
    expect(rest.hasMore).toBe(false);
    expect([...first.items, ...rest.items].map(({ key: _k, ...mail }) => mail)).toStrictEqual(all);
    // One account's mailbox pages the same way; its keys are the server's.
    expect(
      h
        .call<{ items: Array<{ key: number }> }>('MailsRequest', { login: a, limit: 1, before: 5 })
        .items.map((m) => m.key),
    ).toStrictEqual([4]);
    expect(h.fails('MailsRequest', { before: 3 })).toMatchObject({
      code: R.InvalidData,
      message: expect.stringContaining('before needs limit'),
    });
    expect(h.fails('MailsRequest', { limit: 1001 })).toMatchObject({ code: R.InvalidData });
  });

  it('refuses an unknown login naming it, and bad fields, before any mailbox gets the mail', () => {
    const h = pf4Harness();
    const [a] = h.world.users.keys();
    const bad = (record: Record<string, unknown>) => h.fails('MailSend', { record });
    expect(bad({ subject: 's', logins: [a, 99_999_999] })).toEqual({
      code: R.InvalidData,
      message: 'record.logins: login 99999999 not found',
    });
    expect(bad({ subject: 's', logins: [] })).toEqual({
      code: R.InvalidData,
      message: 'record.logins must not be empty',
    });
    expect(bad({ subject: 's' })).toEqual({ code: R.InvalidData, message: 'record.logins must not be empty' });
    const many = [...h.world.users.keys(), ...Array.from({ length: 1_000 }, (_, i) => 500_000 + i)];
    expect(bad({ subject: 's', logins: many })).toEqual({
      code: R.InvalidData,
      message: 'record.logins must list at most 1000 logins',
    });
    expect(bad({ logins: [a] })).toEqual({ code: R.InvalidData, message: 'record.subject is required' });
    expect(bad({ subject: 's'.repeat(128), logins: [a] })).toEqual({
      code: R.InvalidData,
      message: 'record.subject must be at most 127 characters',
    });
    expect(bad({ subject: 's', senderName: 'n'.repeat(64), logins: [a] })).toEqual({
      code: R.InvalidData,
      message: 'record.senderName must be at most 63 characters',
    });
    expect(bad({ subject: 's', senderLogin: -1, logins: [a] })).toEqual({
      code: R.InvalidData,
      message: 'record.senderLogin must be between 0 and 2147483647',
    });
    expect(bad({ subject: 's', body: 'b'.repeat(65_537), logins: [a] })).toEqual({
      code: R.InvalidData,
      message: 'record.body must be at most 65536 characters',
    });
    expect(h.call('MailsRequest', { login: a })).toEqual([]);
    expect(h.call('MailsRequest')).toHaveLength(1);
    expect(h.events).toEqual([]);
    expect(h.fails('MailsRequest', { login: 99_999_999 })).toEqual({
      code: R.InvalidData,
      message: 'login 99999999 not found',
    });
  });

  it('takes a body of 65536 characters and 1000 distinct logins', () => {
    const h = pf4Harness({ accounts: 1_000 });
    const logins = h.world.users.keys();
    expect(logins).toHaveLength(1_000);
    expect(
      h.call('MailSend', { record: { subject: 's', body: 'b'.repeat(65_536), logins: [...logins, logins[0]] } }),
    ).toBe(true);
    expect(h.call<Mail[]>('MailsRequest', { login: logins[999] })[0].body).toHaveLength(65_536);
  });

  it('keeps the newest MAILS_KEPT mails: the oldest leaves the list and every mailbox with it', () => {
    const h = pf4Harness();
    const [a, b] = h.world.users.keys();
    h.call('MailSend', { record: { subject: 'first', logins: [a, b] } });
    for (let i = 0; i < MAILS_KEPT - 2; i++) h.call('MailSend', { record: { subject: `m${i}`, logins: [b] } });
    expect(h.call('MailsRequest')).toHaveLength(MAILS_KEPT);
    expect(h.call<Mail[]>('MailsRequest', { login: a }).map((m) => m.subject)).toEqual(['first']);
    h.call('MailSend', { record: { subject: 'pushes the welcome out', logins: [b] } });
    const kept = h.call<Mail[]>('MailsRequest');
    expect(kept).toHaveLength(MAILS_KEPT);
    expect(kept.at(-1)!.subject).toBe('first');
    h.call('MailSend', { record: { subject: 'pushes first out', logins: [b] } });
    expect(h.call<Mail[]>('MailsRequest').at(-1)!.subject).toBe('m0');
    expect(h.call('MailsRequest', { login: a })).toEqual([]);
    expect(h.call<Mail[]>('MailsRequest', { login: b })).toHaveLength(MAILS_KEPT);
    expect(h.call<Mail[]>('MailsRequest', { login: b })[0].subject).toBe('pushes first out');
  });

  it('needs the email right to send, none to read', () => {
    const h = pf4Harness();
    const [a] = h.world.users.keys();
    expect(h.fails('MailSend', { record: { subject: 's', logins: [a] } }, []).message).toBe(
      'MailSend needs the email right',
    );
    expect(h.fails('NewsSend', { record: { topic: 't' } }, []).message).toBe('NewsSend needs the news right');
    expect(h.call('MailsRequest', {}, [])).toHaveLength(1);
    expect(h.call('MailLast', {}, [])).toBe('The simulated trading server is running.');
  });
});
