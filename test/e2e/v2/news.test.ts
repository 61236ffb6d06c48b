/**
 * v2 PF4 News and Mail end to end: headers and fetched bodies from the cache, the mail box live, values checked
 * against the simulator's state read with a manager session of the test's own.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PF4_SERVER } from '../../../launcher/demo.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import type { ManagerClient } from '../../../sim/testing/managerClient.js';
import { eventually, stackAndManagerForFile, type Client } from '../support.js';
import { call, fails, ok, refuses } from './api.js';

type Topic = { key: number; time: string; topic: string | null; [field: string]: unknown };

let c: Client;
let sim: ManagerClient;
const setup = stackAndManagerForFile();
beforeAll(() => { ({ client: c, manager: sim } = setup); });

const serverTopics = async () => (await sim.ok<Topic[]>('NewsRequest')).map((t) => shapeRecord('PF4NewsTopic')(t) as Topic);

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
