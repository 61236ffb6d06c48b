/**
 * Faults across the real processes: a restart through the API, dropped connections, slow answers and refused logins.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { stackForFile, eventually, waitHealthy, type Client, type Envelope } from './support.js';

let c: Client;
const setup = stackForFile();
beforeAll(() => {
  c = setup.client;
});

type SimState = { logins: number; connections: number };
const simState = async (server = 'demo-pf4') => (await c.stack.control(server, 'state')) as SimState;

describe('faults', () => {
  it('restarts the server through SrvRestart; the next call logs in afresh', async () => {
    const before = await simState();
    const res = await c.post<Envelope<boolean>>(`${c.v2pf4}/SrvRestart?confirm=true`);
    expect(res.body).toMatchObject({ data: true, error: null });
    expect(res.headers.get('x-request-timeout-applied')).toBe('60');
    // The server closes its sessions just after answering; the broker then logs in afresh and calls succeed again.
    const relogged = await eventually(async () => (await simState()).logins > before.logins, 15_000, 50);
    expect(relogged).toBe(true);
    const time = await eventually(
      async () => {
        const r = await c.get<Envelope<string>>(`${c.v2pf4}/ServerTime`);
        return r.body.error ? null : r.body.data;
      },
      15_000,
      100,
    );
    expect(Number.isNaN(Date.parse(time!))).toBe(false);
  });

  it('recovers after the server drops every manager connection, resyncing the cache', async () => {
    const before = await simState();
    await c.stack.control('demo-pf4', 'drop');
    const first = await c.get<Envelope<Array<{ login: number }>>>(`${c.v2pf4}/UsersRequest?limit=1`);
    const login =
      first.body.data?.[0]?.login ??
      (await eventually(
        async () =>
          (
            await c.get<Envelope<Array<{ login: number }>>>(`${c.v2pf4}/UsersRequest?limit=1`)
          ).body.data?.[0]?.login,
      ));
    expect(login).toBeGreaterThan(0);
    const cached = await eventually(
      async () => (await c.get<Envelope>(`${c.v2pf4}/UserRecordGet/${login}`)).body.data,
      10_000,
    );
    expect(cached).toMatchObject({ login });
    expect((await simState()).logins).toBeGreaterThan(before.logins);
    await waitHealthy(c);
  });

  it('answers a live read that passes its deadline with a time-out, applying the requested budget', async () => {
    await c.stack.control('demo-pf4', 'delay', { ms: 2500, cmd: 'ServerTime' });
    try {
      const res = await c.get<Envelope>(`${c.v2pf4}/ServerTime`, { 'x-request-timeout': '1' });
      expect(res.headers.get('x-request-timeout-applied')).toBe('1');
      expect(res.body.data).toBeNull();
      expect(res.body.error!.code).toBe('NoConnect');
      expect(res.headers.get('x-request-outcome')).toBeNull();
    } finally {
      await c.stack.control('demo-pf4', 'delay', { ms: 0 });
    }
  });

  it('marks a mutating call that passes its deadline as of unknown outcome, and the change still completes on the server', async () => {
    // Answered half a second past the 1 s budget: late enough to be of unknown outcome, soon enough to check.
    await c.stack.control('demo-pf4', 'delay', { ms: 1500, cmd: 'UserRecordNew' });
    const key = randomUUID();
    try {
      const first = await c.get<Envelope<Array<{ group: string }>>>(`${c.v2pf4}/UsersRequest?limit=1`);
      const body = { group: first.body.data![0].group, name: 'Slow Create' };
      const res = await c.post<Envelope>(`${c.v2pf4}/UserRecordNew?requestTimeout=1`, body, { 'idempotency-key': key });
      expect(res.headers.get('x-request-outcome')).toBe('unknown');
      expect(res.body.error!.code).toBe('NoConnect');
    } finally {
      await c.stack.control('demo-pf4', 'delay', { ms: 0 });
    }
    // The change did complete on the server: the caller checks before repeating.
    const named = async () =>
      (await c.get<Envelope<Array<{ name: string }>>>(`${c.v2pf4}/UsersRequest`)).body.data?.filter(
        (u) => u.name === 'Slow Create',
      ).length;
    expect(await eventually(async () => (await named()) === 1, 10_000, 100)).toBe(true);
  });

  it('reports a platform down in /healthz while the server refuses logins, and up again after', async () => {
    await c.stack.control('demo-pf5', 'refuse-login', { on: true });
    try {
      await c.stack.control('demo-pf5', 'drop');
      const degraded = await eventually(
        async () => {
          const h = await c.get<{ platforms: Record<string, string> }>('/healthz');
          return h.status === 503 && h.body.platforms[c.stack.platforms.pf5] === 'down' ? h : null;
        },
        10_000,
        100,
      );
      expect(degraded).toBeTruthy();
      expect(degraded!.body.platforms[c.stack.platforms.pf4]).toBe('up');
    } finally {
      await c.stack.control('demo-pf5', 'refuse-login', { on: false });
    }
    await waitHealthy(c, 30_000);
  });
});
