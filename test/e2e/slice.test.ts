/**
 * The first slice end to end: the edge in workerd, the broker and the simulator as real processes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashSecret } from '../../shared/secrets.js';
import { ManagerClient } from '../support/sim/managerClient.js';
import { stackForFile, eventually, type Client, type Envelope } from './support.js';

let c: Client;
const setup = stackForFile();
beforeAll(() => {
  c = setup.client;
});

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('registry', () => {
  it('lists the demo organization and its two platforms', async () => {
    const orgs = await c.get('/api/Organizations');
    expect(orgs.status).toBe(200);
    expect(orgs.body.map((o: { id: string }) => o.id)).toEqual([c.stack.organizationId]);
    const platforms = await c.get('/api/TradePlatforms');
    const byId = Object.fromEntries(platforms.body.map((p: { id: string; type: string }) => [p.id, p.type]));
    expect(byId).toEqual({ [c.stack.platforms.pf4]: 'PF4', [c.stack.platforms.pf5]: 'PF5' });
  });

  it('pings through the manager session and reports the round trip', async () => {
    const ping = await c.get(`/api/TradePlatforms/${c.stack.platforms.pf4}/Ping`);
    expect(ping.status).toBe(200);
    expect(typeof ping.body.roundTripMs).toBe('number');
    expect(ping.body.roundTripMs).toBeGreaterThanOrEqual(0);
  });
});

describe('v2 PF4', () => {
  it('answers the server time in the envelope, echoing the incoming trace id', async () => {
    const res = await c.get<Envelope<string>>(`${c.v2pf4}/ServerTime`, {
      traceparent: `00-${TRACE}-00f067aa0ba902b7-01`,
    });
    expect(res.status).toBe(200);
    expect(res.body.error).toBeNull();
    expect(Math.abs(Date.parse(res.body.data!) - Date.now())).toBeLessThan(24 * 3600 * 1000);
    expect(res.body.meta.activityId).toBe(TRACE);
    expect(res.body.meta).not.toHaveProperty('paging');
    expect(res.headers.get('x-request-timeout-applied')).toBe('10');
  });

  it('pages every account by ascending login with no gaps or repeats', async () => {
    const logins: number[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const res = await c.get<Envelope<Array<{ login: number }>>>(
        `${c.v2pf4}/UsersRequest?limit=37${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(res.body.error).toBeNull();
      expect(res.body.meta.paging).toBeDefined();
      logins.push(...res.body.data!.map((u) => u.login));
      cursor = res.body.meta.paging!.hasMore ? res.body.meta.paging!.nextCursor : null;
      pages++;
    } while (cursor && pages < 100);
    const all = await c.get<Envelope<Array<{ login: number }>>>(`${c.v2pf4}/UsersRequest`);
    expect(all.body.meta.paging).toEqual({ nextCursor: null, hasMore: false });
    expect(logins).toEqual(all.body.data!.map((u) => u.login));
    expect([...logins].sort((a, b) => a - b)).toEqual(logins);
    expect(new Set(logins).size).toBe(logins.length);
    expect(pages).toBe(Math.ceil(logins.length / 37));
  });

  it('answers the same account from the cache and from the server, without secrets', async () => {
    const first = await c.get<Envelope<Array<{ login: number }>>>(`${c.v2pf4}/UsersRequest?limit=1`);
    const login = first.body.data![0].login;
    const cached = await c.get<Envelope<Record<string, unknown>>>(`${c.v2pf4}/UserRecordGet/${login}`);
    const live = await c.get<Envelope<Record<string, unknown>>>(`${c.v2pf4}/UserRecordRequest/${login}`);
    expect(cached.body.error).toBeNull();
    expect(cached.body.data!.login).toBe(login);
    expect(live.body.data!.login).toBe(login);
    expect(cached.body.data!.group).toBe(live.body.data!.group);
    expect(cached.body.data!.name).toBe(live.body.data!.name);
    expect(JSON.stringify(cached.body)).not.toMatch(/password/i);
  });

  it('answers an unknown login with a NotFound envelope carrying the manager code', async () => {
    for (const op of ['UserRecordGet', 'UserRecordRequest']) {
      const res = await c.get<Envelope>(`${c.v2pf4}/${op}/2147483000`);
      expect(res.status).toBe(200);
      expect(res.body.data).toBeNull();
      expect(res.body.error).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    }
  });

  it('validates inputs before anything reaches the broker', async () => {
    const res = await c.get<Envelope>(`${c.v2pf4}/UserRecordGet/0`);
    expect(res.status).toBe(200);
    expect(res.body.error!.code).toBe('Validation');
    expect(res.body.error!.message).toMatch(/login/);
    const limit = await c.get<Envelope>(`${c.v2pf4}/UsersRequest?limit=5001`);
    expect(limit.body.error!.message).toMatch(/limit/);
  });

  it('creates an account once per Idempotency-Key and caches it within moments', async () => {
    const groups = await c.get<Envelope<Array<{ group: string }>>>(`${c.v2pf4}/UsersRequest?limit=1`);
    const group = groups.body.data![0].group;
    const key = randomUUID();
    const body = { login: 0, group, name: 'End To End', email: 'e2e@example.test', leverage: 100 };
    const created = await c.post<Envelope<{ login: number; name: string }>>(`${c.v2pf4}/UserRecordNew`, body, {
      'idempotency-key': key,
    });
    expect(created.body.error).toBeNull();
    const login = created.body.data!.login;
    expect(login).toBeGreaterThan(0);
    expect(created.body.data!.name).toBe('End To End');

    const replay = await c.post<Envelope<{ login: number }>>(`${c.v2pf4}/UserRecordNew`, body, {
      'idempotency-key': key,
    });
    expect(replay.body.data!.login).toBe(login);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');

    const conflict = await c.post<Envelope>(
      `${c.v2pf4}/UserRecordNew`,
      { ...body, name: 'Someone Else' },
      { 'idempotency-key': key },
    );
    expect(conflict.body.error!.code).toBe('Validation');
    expect(conflict.body.error!.message).toMatch(/Idempotency-Key/);

    const cached = await eventually(
      async () => {
        const r = await c.get<Envelope<{ login: number; name: string }>>(`${c.v2pf4}/UserRecordGet/${login}`);
        return r.body.error ? null : r.body.data;
      },
      5_000,
      10,
    );
    expect(cached).toMatchObject({ login, name: 'End To End' });

    const all = await c.get<Envelope<Array<{ name: string }>>>(`${c.v2pf4}/UsersRequest`);
    expect(all.body.data!.filter((u) => u.name === 'End To End')).toHaveLength(1);
  });

  it('rejects a duplicate login with the platform result code, changing nothing', async () => {
    const first = await c.get<Envelope<Array<{ login: number; group: string; name: string }>>>(
      `${c.v2pf4}/UsersRequest?limit=1`,
    );
    const { login, group, name } = first.body.data![0];
    const res = await c.post<Envelope>(`${c.v2pf4}/UserRecordNew`, { login, group, name: 'Duplicate' });
    expect(res.body).toStrictEqual({
      data: null,
      error: { code: 'PF4Error', managerCode: 'InvalidData', message: `login ${login} already exists` },
      meta: { activityId: expect.stringMatching(/^[0-9a-f]{32}$/) },
    });
    expect((await c.get<Envelope<{ name: string }>>(`${c.v2pf4}/UserRecordRequest/${login}`)).body.data!.name).toBe(
      name,
    );
  });

  it('pages open trades from the cache by ascending ticket', async () => {
    const page1 = await c.get<Envelope<Array<{ order: number }>>>(`${c.v2pf4}/TradesGet?limit=10`);
    expect(page1.body.error).toBeNull();
    expect(page1.body.data).toHaveLength(10);
    expect(page1.body.meta.paging!.hasMore).toBe(true);
    const page2 = await c.get<Envelope<Array<{ order: number }>>>(
      `${c.v2pf4}/TradesGet?limit=10&cursor=${encodeURIComponent(page1.body.meta.paging!.nextCursor!)}`,
    );
    const orders = [...page1.body.data!, ...page2.body.data!].map((t) => t.order);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    expect(page2.body.data![0].order).toBeGreaterThan(page1.body.data![9].order);
  });

  it('answers the last tick of a traded symbol from the cache', async () => {
    const trades = await c.get<Envelope<Array<{ symbol: string }>>>(`${c.v2pf4}/TradesGet?limit=1`);
    const symbol = trades.body.data![0].symbol;
    const tick = await c.get<Envelope<{ symbol: string; bid: number; ask: number; time: string }>>(
      `${c.v2pf4}/TickInfoLast/${symbol}`,
    );
    expect(tick.body.error).toBeNull();
    expect(tick.body.data!.symbol).toBe(symbol);
    expect(tick.body.data!.bid).toBeGreaterThan(0);
    expect(tick.body.data!.ask).toBeGreaterThan(tick.body.data!.bid);
    const unknown = await c.get<Envelope>(`${c.v2pf4}/TickInfoLast/NOSUCHSYM`);
    expect(unknown.body.error!.code).toBe('NotFound');
  });

  it('refuses SrvRestart without confirm=true', async () => {
    const res = await c.post<Envelope>(`${c.v2pf4}/SrvRestart`);
    expect(res.body.error!.code).toBe('Validation');
    expect(res.body.error!.message).toMatch(/confirm/);
  });
});

describe('v2 PF5', () => {
  it('answers the server time and a cached user', async () => {
    const time = await c.get<Envelope<string>>(`${c.v2pf5}/ServerTime`);
    expect(time.body.error).toBeNull();
    expect(Number.isNaN(Date.parse(time.body.data!))).toBe(false);
    // A login straight from the trading server, read with a manager session of our own.
    const manager = await ManagerClient.connect(c.stack.sim.port, 'demo-pf5');
    let user: { login: number; group: string; name: string };
    try {
      const password = readFileSync(join(c.stack.dataDir, 'manager-password'), 'utf8').trim();
      await manager.ok('login', { login: 1000, password, pump: false });
      user = (
        await manager.ok<{ items: Array<{ login: number; group: string; name: string }> }>('UsersRequest', { limit: 1 })
      ).items[0];
    } finally {
      manager.close();
    }
    const found = await c.get<Envelope<{ login: number; group: string; name: string }>>(
      `${c.v2pf5}/UserGet/${user.login}`,
    );
    expect(found.body.error).toBeNull();
    expect(found.body.data).toMatchObject({ login: user.login, group: user.group, name: user.name });
    const missing = await c.get<Envelope>(`${c.v2pf5}/UserGet/999999999`);
    expect(missing.body.error).toMatchObject({ code: 'NotFound', managerCode: 'ErrNotfound' });
  });
});

describe('v1 PF4', () => {
  it('answers a cached account as the bare record', async () => {
    const first = await c.get<Envelope<Array<{ login: number }>>>(`${c.v2pf4}/UsersRequest?limit=1`);
    const login = first.body.data![0].login;
    const res = await c.get(`${c.v1pf4}/UserRecordGet/${login}`);
    expect(res.status).toBe(200);
    expect(res.body.login).toBe(login);
    expect(res.body).not.toHaveProperty('data');
  });

  it('answers an open ticket, and 404 with an HTTPError body for one that is not open', async () => {
    const trades = await c.get<Envelope<Array<{ order: number; login: number }>>>(`${c.v2pf4}/TradesGet?limit=1`);
    const { order, login } = trades.body.data![0];
    const open = await c.get(`${c.v1pf4}/TradesGet/${order}`);
    expect(open.status).toBe(200);
    expect(open.body).toMatchObject({ order, login });
    const missing = await c.get(`${c.v1pf4}/TradesGet/2147480000`);
    expect(missing.status).toBe(404);
    expect(missing.body).toStrictEqual({
      errorType: 'PF4API',
      errorCode: 'InvalidData',
      errorDescription: 'open trade 2147480000 not found',
    });
    const bad = await c.get(`${c.v1pf4}/TradesGet/0`);
    expect(bad.status).toBe(400);
    expect(bad.body).toStrictEqual({
      errorType: 'Validation',
      errorCode: 'Validation',
      errorDescription: 'ticket: ticket must be at least 1',
    });
  });
});

describe('tenant isolation', () => {
  it("answers another organization's platform exactly as an unknown one", async () => {
    const db = await c.stack.edge.db();
    const org = randomUUID();
    const secret = 'other-org-secret';
    const h = await hashSecret(secret);
    const now = new Date().toISOString();
    await db.batch([
      db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(org, 'Other', now),
      db
        .prepare(
          'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .bind('other-client', org, 'Other', h.hash, h.salt, h.iterations, now),
    ]);
    const tokenRes = await fetch(`${c.stack.edgeUrl}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'other-client', client_secret: secret }),
    });
    const other = ((await tokenRes.json()) as { access_token: string }).access_token;
    const auth = { authorization: `Bearer ${other}`, traceparent: `00-${TRACE}-00f067aa0ba902b7-01` };
    const theirs = await c.get<Envelope>(`${c.v2pf4}/ServerTime`, auth);
    const unknown = await c.get<Envelope>(`/api/v2/PF4/${randomUUID()}/ServerTime`, auth);
    expect(theirs.body.error!.code).toBe('NotFound');
    expect(theirs.body.error!.message!.replace(c.stack.platforms.pf4, 'X')).toBe(
      unknown.body.error!.message!.replace(/[0-9a-f-]{36}/, 'X'),
    );
    const v1 = await c.get(`/api/TradePlatforms/${c.stack.platforms.pf4}`, auth);
    expect(v1.status).toBe(404);
    expect(v1.body).toStrictEqual({
      errorType: 'NotFound',
      errorCode: 'NotFound',
      errorDescription: `trade platform ${c.stack.platforms.pf4} not found`,
    });
    const list = await c.get('/api/TradePlatforms', auth);
    expect(list.body).toEqual([]);
  });
});

describe('logs', () => {
  it('never carry a secret: client secret, bearer token, manager password or broker secret', () => {
    const secrets = [
      c.stack.clientSecret,
      c.token,
      readFileSync(join(c.stack.dataDir, 'manager-password'), 'utf8').trim(),
      readFileSync(join(c.stack.dataDir, 'broker-secret'), 'utf8').trim(),
    ];
    expect(c.logLines.length).toBeGreaterThan(0);
    for (const line of c.logLines) for (const secret of secrets) expect(line.includes(secret), line).toBe(false);
  });
});
