/**
 * v2 PF4 News and Mail end to end: headers and fetched bodies from the cache, news sent through the API joining them,
 * mail sent to accounts' mailboxes and the server's mails read live, values checked against the simulator's state
 * read with a manager session of the test's own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { shapeRecord } from '../../../shared/records/shape.js';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { eventually, stackAndManagerForFile, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses } from './api.js';

type Topic = { key: number; time: string; topic: string | null; [field: string]: unknown };

let c: Client;
let sim: ManagerClient;
const setup = stackAndManagerForFile();
beforeAll(() => {
  ({ client: c, manager: sim } = setup);
});

const serverTopics = async () =>
  (await sim.ok<Topic[]>('NewsRequest')).map((t) => shapeRecord('PF4NewsTopic')(t) as Topic);

/** The cached body of a news item, or null while NewsBodyGet answers not-found. */
async function fetchedBody(key: number): Promise<string | null> {
  const r = await call<string>(c, 'v2.PF4.NewsBodyGet', { params: { key } });
  if (r.body.error) expect(r.body.error.code).toBe('NotFound');
  return r.body.error ? null : r.body.data;
}

/** Sends a news item on the server and waits until the gateway's cache lists it; answers its header. */
async function publish(topic: string, body: string): Promise<Topic> {
  expect(await sim.ok('NewsSend', { record: { topic, body, category: 'Tests' } })).toBe(true);
  const listed = await eventually(async () => (await ok<Topic[]>(c, 'v2.PF4.NewsGet')).find((t) => t.topic === topic));
  expect(listed, `${topic} reaches the cache`).toBeDefined();
  return listed!;
}

describe('v2.PF4.NewsGet', () => {
  it('answers every cached header by key ascending, as the server lists them, without bodies', async () => {
    const topics = await ok<Topic[]>(c, 'v2.PF4.NewsGet');
    const server = await serverTopics();
    expect(topics.length).toBeGreaterThanOrEqual(20);
    expect(topics).toEqual(server);
    expect(topics.map((t) => t.key)).toEqual([...topics.map((t) => t.key)].sort((a, b) => a - b));
    for (const t of topics) expect(t).not.toHaveProperty('body');
  });
});

describe('v2.PF4.NewsTotal', () => {
  it('counts the cached news items and follows a new item', async () => {
    const total = await ok<number>(c, 'v2.PF4.NewsTotal');
    expect(total).toBe(await sim.ok<number>('NewsTotal'));
    expect(total).toBe((await ok<Topic[]>(c, 'v2.PF4.NewsGet')).length);
    await publish(`Total check ${Date.now()}`, 'counted');
    expect(await ok<number>(c, 'v2.PF4.NewsTotal')).toBe(total + 1);
    expect(await sim.ok<number>('NewsTotal')).toBe(total + 1);
  });
});

describe('v2.PF4.NewsTopicGet', () => {
  it('answers the header at a zero-based position as the server does', async () => {
    const total = await ok<number>(c, 'v2.PF4.NewsTotal');
    for (const pos of [0, 1, total - 1]) {
      const topic = await ok<Topic>(c, 'v2.PF4.NewsTopicGet', { params: { pos } });
      expect(topic, `pos ${pos}`).toEqual(shapeRecord('PF4NewsTopic')(await sim.ok('NewsTopicGet', { pos })));
    }
  });

  it('answers NotFound with the manager code out of range, and refuses a position that is not one', async () => {
    const total = await ok<number>(c, 'v2.PF4.NewsTotal');
    const out = await fails(c, 'v2.PF4.NewsTopicGet', { params: { pos: total } });
    expect(out).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    expect(out.message).toContain(String(total));
    await refuses(c, 'v2.PF4.NewsTopicGet', 'pos', { params: { pos: -1 } });
    await refuses(c, 'v2.PF4.NewsTopicGet', 'pos', { params: { pos: 'first' } });
  });
});

describe('v2.PF4.NewsBodyGet', () => {
  it('answers NotFound for a listed item whose body was never fetched, and for an unknown key', async () => {
    const [first] = await ok<Topic[]>(c, 'v2.PF4.NewsGet');
    const unfetched = await fails(c, 'v2.PF4.NewsBodyGet', { params: { key: first.key } });
    expect(unfetched).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    expect(unfetched.message).toContain('NewsBodyRequest');
    const unknown = await fails(c, 'v2.PF4.NewsBodyGet', { params: { key: 2_000_000_000 } });
    expect(unknown).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.NewsBodyGet', 'key', { params: { key: 'latest' } });
    await refuses(c, 'v2.PF4.NewsBodyGet', 'key', { params: { key: 2_147_483_648 } });
  });
});

describe('v2.PF4.NewsBodyRequest', () => {
  it('queues the fetch and answers true; the body the server holds then appears in NewsBodyGet', async () => {
    const topics = await ok<Topic[]>(c, 'v2.PF4.NewsGet');
    const seeded = topics[2];
    expect(await ok<boolean>(c, 'v2.PF4.NewsBodyRequest', { params: { key: seeded.key } })).toBe(true);
    const body = await sim.ok<string>('NewsBodyGet', { key: seeded.key });
    expect(body.length).toBeGreaterThan(0);
    const cached = await eventually(() => fetchedBody(seeded.key));
    expect(cached).toBe(body);
    // Only the requested body was fetched.
    const other = await fails(c, 'v2.PF4.NewsBodyGet', { params: { key: topics[3].key } });
    expect(other.code).toBe('NotFound');
  });

  it('fetches the body of an item published after start', async () => {
    const body = `Fresh body ${Date.now()}`;
    const topic = await publish(`Fresh ${Date.now()}`, body);
    expect(await ok<boolean>(c, 'v2.PF4.NewsBodyRequest', { params: { key: topic.key } })).toBe(true);
    const cached = await eventually(() => fetchedBody(topic.key));
    expect(cached).toBe(body);
  });

  it('answers NotFound for an unknown key and refuses a key that is not one', async () => {
    const unknown = await fails(c, 'v2.PF4.NewsBodyRequest', { params: { key: 2_000_000_000 } });
    expect(unknown).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.NewsBodyRequest', 'key', { params: { key: -3 } });
  });
});

describe('v2.PF4.MailLast', () => {
  it('answers the body of the last mail the server holds, live', async () => {
    expect(await ok<string>(c, 'v2.PF4.MailLast')).toBe(await sim.ok<string>('MailLast'));
    const [user] = (await sim.ok<{ items: Array<{ login: number }> }>('UsersRequest', { limit: 1 })).items;
    const body = `Statement ready ${Date.now()}`;
    expect(await sim.ok('MailSend', { record: { logins: [user.login], subject: 'Statement', body } })).toBe(true);
    expect(await ok<string>(c, 'v2.PF4.MailLast')).toBe(body);
    const later = `Second notice ${Date.now()}`;
    await sim.ok('MailSend', { record: { logins: [user.login], subject: 'Notice', body: later } });
    expect(await ok<string>(c, 'v2.PF4.MailLast')).toBe(later);
  });
});

type Mail = {
  time: string;
  senderLogin: number;
  senderName: string | null;
  subject: string | null;
  body: string | null;
};

/** The first `n` accounts of the demo server. */
const someLogins = async (n: number) =>
  (await sim.ok<{ items: Array<{ login: number }> }>('UsersRequest', { limit: n })).items.map((u) => u.login);

describe('v2.PF4.NewsSend', () => {
  it('publishes the item: the cache lists its header under the next key, and its body follows a NewsBodyRequest', async () => {
    const before = await sim.ok<Topic[]>('NewsRequest');
    const topic = `Desk note ${Date.now()}`;
    const body = `First line\r\nSecond line\t${'x'.repeat(5_000)}`;
    expect(
      await ok<boolean>(c, 'v2.PF4.NewsSend', { body: { topic, category: 'Desk', body, highPriority: true } }),
    ).toBe(true);
    const server = (await serverTopics()).find((t) => t.topic === topic)!;
    expect(server).toMatchObject({ topic, category: 'Desk', keywords: '', priority: 1, langId: 0 });
    expect(server.key).toBe(Math.max(...before.map((t) => t.key)) + 1);
    expect(await sim.ok<string>('NewsBodyGet', { key: server.key })).toBe(body);
    const listed = await eventually(async () =>
      (await ok<Topic[]>(c, 'v2.PF4.NewsGet')).find((t) => t.topic === topic),
    );
    expect(listed).toEqual(server);
    const total = await ok<number>(c, 'v2.PF4.NewsTotal');
    expect(await ok<Topic>(c, 'v2.PF4.NewsTopicGet', { params: { pos: total - 1 } })).toEqual(server);
    expect(await ok<boolean>(c, 'v2.PF4.NewsBodyRequest', { params: { key: server.key } })).toBe(true);
    expect(await eventually(() => fetchedBody(server.key))).toBe(body);
  });

  it('is applied once for a repeated Idempotency-Key', async () => {
    const topic = `Once ${Date.now()}`;
    const options = { body: { topic }, headers: { 'Idempotency-Key': `news-e2e-${topic.replace(' ', '-')}` } };
    expect((await call<boolean>(c, 'v2.PF4.NewsSend', options)).body).toMatchObject({ data: true, error: null });
    expect((await call<boolean>(c, 'v2.PF4.NewsSend', options)).body).toMatchObject({ data: true, error: null });
    expect((await serverTopics()).filter((t) => t.topic === topic)).toHaveLength(1);
  });

  it('refuses a missing, empty or too long topic, a too long category or body, and a bell in the body, sending nothing', async () => {
    const total = await sim.ok<number>('NewsTotal');
    await refuses(c, 'v2.PF4.NewsSend', 'body.topic', { body: { body: 'no topic' } });
    await refuses(c, 'v2.PF4.NewsSend', 'body.topic', { body: { topic: '' } });
    await refuses(c, 'v2.PF4.NewsSend', 'body.topic', { body: { topic: 't'.repeat(256) } });
    await refuses(c, 'v2.PF4.NewsSend', 'body.category', { body: { topic: 't', category: 'c'.repeat(64) } });
    await refuses(c, 'v2.PF4.NewsSend', 'body.body', { body: { topic: 't', body: 'b'.repeat(65_537) } });
    await refuses(c, 'v2.PF4.NewsSend', 'body.body', { body: { topic: 't', body: 'bell\u0007' } });
    await refuses(c, 'v2.PF4.NewsSend', 'body', { body: { topic: 't', keywords: 'k' } });
    expect(await sim.ok<number>('NewsTotal')).toBe(total);
  });
});

describe('v2.PF4.MailSend', () => {
  it("delivers the mail once to each listed account, as the server's mailboxes hold it", async () => {
    const [a, b, other] = await someLogins(3);
    const subject = `Statement ${Date.now()}`;
    const mail = { senderLogin: 1000, senderName: 'Back office', subject, body: 'Your statement is ready.\r\nRegards' };
    expect(await ok<boolean>(c, 'v2.PF4.MailSend', { body: { ...mail, logins: [a, b, a] } })).toBe(true);
    const [newest] = await sim.ok<Mail[]>('MailsRequest');
    expect(newest).toEqual({ ...mail, time: expect.any(String) });
    expect((await sim.ok<Mail[]>('MailsRequest', { login: a })).filter((m) => m.subject === subject)).toEqual([newest]);
    expect((await sim.ok<Mail[]>('MailsRequest', { login: b })).filter((m) => m.subject === subject)).toEqual([newest]);
    expect((await sim.ok<Mail[]>('MailsRequest', { login: other })).filter((m) => m.subject === subject)).toEqual([]);
    expect(await ok<string>(c, 'v2.PF4.MailLast')).toBe(mail.body);
  });

  it('refuses the whole send for an unknown account, naming it, and no mailbox gets the mail', async () => {
    const [a] = await someLogins(1);
    const subject = `Nobody ${Date.now()}`;
    const error = await fails(c, 'v2.PF4.MailSend', { body: { subject, logins: [a, 99_999_999] } });
    expect(error).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    expect(error.message).toContain('login 99999999 not found');
    expect((await sim.ok<Mail[]>('MailsRequest')).filter((m) => m.subject === subject)).toEqual([]);
    expect((await sim.ok<Mail[]>('MailsRequest', { login: a })).filter((m) => m.subject === subject)).toEqual([]);
  });

  it('is applied once for a repeated Idempotency-Key', async () => {
    const [a] = await someLogins(1);
    const subject = `Once ${Date.now()}`;
    const options = {
      body: { subject, logins: [a] },
      headers: { 'Idempotency-Key': `mail-e2e-${subject.replace(' ', '-')}` },
    };
    expect((await call<boolean>(c, 'v2.PF4.MailSend', options)).body).toMatchObject({ data: true, error: null });
    expect((await call<boolean>(c, 'v2.PF4.MailSend', options)).body).toMatchObject({ data: true, error: null });
    expect((await sim.ok<Mail[]>('MailsRequest', { login: a })).filter((m) => m.subject === subject)).toHaveLength(1);
  });

  it('refuses a missing subject, an empty or too long login list, a bad login and a too long body, naming the field', async () => {
    const [a] = await someLogins(1);
    await refuses(c, 'v2.PF4.MailSend', 'body.subject', { body: { logins: [a] } });
    await refuses(c, 'v2.PF4.MailSend', 'body.subject', { body: { subject: 's'.repeat(128), logins: [a] } });
    await refuses(c, 'v2.PF4.MailSend', 'body.logins', { body: { subject: 's', logins: [] } });
    await refuses(c, 'v2.PF4.MailSend', 'body.logins', { body: { subject: 's', logins: Array(1_001).fill(a) } });
    await refuses(c, 'v2.PF4.MailSend', 'body.logins.0', { body: { subject: 's', logins: [0] } });
    await refuses(c, 'v2.PF4.MailSend', 'body.body', { body: { subject: 's', body: 'b'.repeat(65_537), logins: [a] } });
    await refuses(c, 'v2.PF4.MailSend', 'body.senderLogin', { body: { subject: 's', senderLogin: -1, logins: [a] } });
  });
});

describe('v2.PF4.MailsRequest', () => {
  it("answers the mails the server holds, newest first, as the server lists them; MailLast is the first one's body", async () => {
    const [a] = await someLogins(1);
    const stamp = Date.now();
    await ok(c, 'v2.PF4.MailSend', { body: { subject: `older ${stamp}`, body: 'older body', logins: [a] } });
    await ok(c, 'v2.PF4.MailSend', { body: { subject: `newer ${stamp}`, senderName: null, logins: [a] } });
    const mails = await ok<Mail[]>(c, 'v2.PF4.MailsRequest');
    expect(mails).toEqual((await sim.ok<Mail[]>('MailsRequest')).map((m) => shapeRecord('PF4MailBox')(m)));
    expect(mails.slice(0, 2).map((m) => m.subject)).toEqual([`newer ${stamp}`, `older ${stamp}`]);
    expect(mails[0]).toMatchObject({ senderLogin: 0, senderName: '', body: '' });
    expect(mails.at(-1)).toMatchObject({ senderName: 'Server', subject: 'Welcome' });
    expect(mails.map((m) => m.time)).toEqual([...mails.map((m) => m.time)].sort().reverse());
    expect(await ok<string>(c, 'v2.PF4.MailLast')).toBe(mails[0].body);
  });

  it('pages the mails newest first: the pages, wide bodies and all, make the whole list once', async () => {
    const [a] = await someLogins(1);
    const stamp = Date.now();
    for (let i = 0; i < 5; i++) {
      await ok(c, 'v2.PF4.MailSend', {
        body: { subject: `page ${stamp} ${i}`, body: '\u4e00'.repeat(65_536), logins: [a] },
      });
    }
    const whole = await ok<Mail[]>(c, 'v2.PF4.MailsRequest');
    const paged = await allPages<Mail>(c, 'v2.PF4.MailsRequest', 2);
    expect(paged.items).toEqual(whole);
    expect(paged.pages).toBe(Math.ceil(whole.length / 2));
    expect(whole.slice(0, 5).map((m) => m.subject)).toEqual([4, 3, 2, 1, 0].map((i) => `page ${stamp} ${i}`));
    expect(whole[0].body).toBe('\u4e00'.repeat(65_536));
  });
});
