/**
 * Server-Sent Events end to end (simulator, broker, edge in workerd): the status first, ticks of the asked symbols
 * from the simulator's quote feed, a trade opened through the API arriving as a trades event, a reconnect with
 * Last-Event-ID getting exactly the missed events (from any event id, the very next event first, whatever its topic),
 * an unknown event id told to resync, and a foreign platform or a missing token refused like the API refuses them.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../shared/secrets.js';
import { SseReader } from '../support/sse.js';
import { openTrade as openTestTrade } from './v2/api.js';
import { eventually, stackForFile } from './support.js';

const setup = stackForFile();
const streamUrl = (query: string) => `${setup.client.stack.edgeUrl}${setup.client.v2pf4}/Stream?${query}`;

const openTrade = async (comment: string) => (await openTestTrade(setup.client, comment)).order;

describe('GET /api/v2/PF4/{tradePlatform}/Stream', () => {
  it('sends the status, then ticks of the asked symbols only, from the simulator feed', async () => {
    const sse = await SseReader.open(streamUrl('ticks=EURUSD,GBPUSD'), setup.client.token);
    try {
      expect(sse.status).toBe(200);
      await eventually(() => Promise.resolve(sse.of('ticks').length >= 3), 15_000);
      // The first client's stream object subscribes to the broker: down until the broker's status says up.
      expect(sse.events[0].event).toBe('status');
      expect(JSON.parse(sse.of('status').at(-1)!.data)).toEqual({ connected: true });
      const ticks = sse.of('ticks').map((e) => JSON.parse(e.data));
      expect(new Set(ticks.map((t) => t.symbol)).size).toBeGreaterThan(0);
      for (const t of ticks) {
        expect(['EURUSD', 'GBPUSD']).toContain(t.symbol);
        expect(Object.keys(t).sort()).toEqual(['ask', 'bid', 'lastTime', 'symbol']);
      }
      expect(sse.events.every((e) => e.id === null || /^[0-9a-f]{8}-\d+$/.test(e.id))).toBe(true);
    } finally {
      await sse.close();
    }
  });

  it('delivers a trade opened through the API as a trades event, and a reconnect with Last-Event-ID gets what it missed', async () => {
    const sse = await SseReader.open(streamUrl('trades'), setup.client.token);
    let resumed: SseReader | undefined;
    try {
      await eventually(() => Promise.resolve(sse.of('status').length >= 1));
      const order = await openTrade('sse-first');
      await eventually(() => Promise.resolve(sse.of('trades').some((e) => JSON.parse(e.data).order === order)), 10_000);
      const added = sse
        .of('trades')
        .map((e) => JSON.parse(e.data))
        .find((t) => t.order === order);
      expect(added).toMatchObject({ kind: 'Added', order, symbol: 'EURUSD', cmd: 'Buy', comment: 'sse-first' });
      const lastSeen = sse.lastEventId!;
      await sse.close();

      const missed = await openTrade('sse-missed');
      resumed = await SseReader.open(streamUrl('trades'), setup.client.token, lastSeen);
      await eventually(
        () => Promise.resolve(resumed!.of('trades').some((e) => JSON.parse(e.data).order === missed)),
        10_000,
      );
      const replayed = resumed.of('trades').map((e) => JSON.parse(e.data));
      expect(replayed.some((t) => t.order === order && t.kind === 'Added')).toBe(false);
      expect(replayed.find((t) => t.order === missed)).toMatchObject({ kind: 'Added', comment: 'sse-missed' });
      expect(resumed.of('resync')).toEqual([]);
    } finally {
      await sse.close();
      await resumed?.close();
    }
  });

  it('resumes from any event id with the very next event, whatever its topic: users, trades and margin events alike', async () => {
    const sse = await SseReader.open(streamUrl('trades&users&margin'), setup.client.token);
    const resumed: SseReader[] = [];
    try {
      await eventually(() => Promise.resolve(sse.of('status').length >= 1));
      const startAt = sse.events.length - 1;
      // A new account (users), its balance and a trade (trades, users, and the account's margin level): every topic.
      const { order } = await openTestTrade(setup.client, 'sse-resume');
      await eventually(() => Promise.resolve(sse.of('trades').some((e) => JSON.parse(e.data).order === order)), 10_000);
      const live = sse.events.slice(startAt).filter((e) => e.id !== null);
      const topics = new Set(live.slice(1).map((e) => e.event));
      expect(topics).toContain('users');
      expect(topics).toContain('trades');
      expect(topics).toContain('margin');
      // Resumed after each event in turn: the first event sent is the one that followed it, then the rest in order.
      for (let i = 1; i < live.length; i++) {
        const r = await SseReader.open(streamUrl('trades&users&margin'), setup.client.token, live[i - 1].id!);
        resumed.push(r);
        const want = live.length - i;
        await eventually(() => Promise.resolve(r.events.filter((e) => e.id !== null).length >= want), 10_000);
        const got = r.events.filter((e) => e.id !== null).slice(0, want);
        expect(got[0], `resumed after ${live[i - 1].id}`).toEqual(live[i]);
        expect(got).toEqual(live.slice(i));
        expect(r.of('resync')).toEqual([]);
        await r.close();
      }
    } finally {
      await sse.close();
      await Promise.all(resumed.map((r) => r.close()));
    }
  });

  it('tells a client whose Last-Event-ID is not held to resync', async () => {
    const sse = await SseReader.open(streamUrl('trades'), setup.client.token, '00000000-1');
    try {
      await eventually(() => Promise.resolve(sse.of('resync').length >= 1));
      expect(JSON.parse(sse.of('resync')[0].data)).toMatchObject({ connected: true });
    } finally {
      await sse.close();
    }
  });

  it("refuses a missing token, an unknown topic and another organization's platform like an unknown one", async () => {
    const c = setup.client;
    const none = await fetch(streamUrl('trades'));
    expect(none.status).toBe(401);
    const bad = await SseReader.open(streamUrl('positions'), c.token);
    expect(JSON.parse(bad.body).error.code).toBe('Validation');

    const db = await c.stack.edge.db();
    const org = randomUUID();
    const secret = 'stream-other-org-secret';
    const h = await hashSecret(secret);
    const now = new Date().toISOString();
    await db.batch([
      db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(org, 'Other', now),
      db
        .prepare(
          'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .bind('stream-other', org, 'Other', h.hash, h.salt, h.iterations, now),
    ]);
    const res = await fetch(`${c.stack.edgeUrl}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'stream-other', client_secret: secret }),
    });
    const other = ((await res.json()) as { access_token: string }).access_token;
    const theirs = await SseReader.open(streamUrl('trades'), other);
    const unknown = await SseReader.open(`${c.stack.edgeUrl}/api/v2/PF4/${randomUUID()}/Stream?trades`, other);
    expect(JSON.parse(theirs.body).error.code).toBe('NotFound');
    expect(JSON.parse(theirs.body).error.message.replace(c.stack.platforms.pf4, 'X')).toBe(
      JSON.parse(unknown.body).error.message.replace(/[0-9a-f-]{36}/, 'X'),
    );
  });
});
