/**
 * Exactly-once writes under one Idempotency-Key across the real processes, whatever happens to the first call: it
 * passes its deadline while the trading server still completes it, a duplicate arrives while it runs, or the broker
 * dies under it. Accounts are counted in the trading server's own state, never through the gateway's answers alone.
 * Also: a platform's reads spread over several link objects, and in-flight calls are answered when a link drops.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { stackForFile, eventually, waitHealthy, type Client, type Envelope } from './support.js';
import {
  DEFAULT_IDEMPOTENCY_SHARDS,
  DEFAULT_LINKS_PER_PLATFORM,
  ledgerName,
  linkName,
} from '../../workers/gateway/names.js';
import { objectCall } from '../../launcher/edge.js';
import { LOCAL_HOME } from '../support/edge.js';

let c: Client;
const setup = stackForFile();
beforeAll(() => {
  c = setup.client;
});

type Account = { login: number; name: string; group: string };
type Answer = { status: number; headers: Headers; body: Envelope<Account> };

/** Accounts the PF4 trading server holds, from its own counters. */
const serverUsers = async () => ((await c.stack.control('demo-pf4', 'state')) as { users: number }).users;
/** Accounts of this name on the trading server, read live (not from the cache). */
const named = async (name: string) => {
  const all = await c.get<Envelope<Account[]>>(`${c.v2pf4}/UsersRequest`);
  if (all.body.error) throw new Error(`UsersRequest failed: ${JSON.stringify(all.body.error)}`);
  return all.body.data!.filter((u) => u.name === name).length;
};
const demoGroup = async () => (await c.get<Envelope<Account[]>>(`${c.v2pf4}/UsersRequest?limit=1`)).body.data![0].group;
const create = (body: object, key: string, seconds: number): Promise<Answer> =>
  c.post(`${c.v2pf4}/UserRecordNew?requestTimeout=${seconds}`, body, { 'idempotency-key': key });
/** The state of `key` of the demo client in the ledger that owns it (a ledger holds other keys too). */
const keyState = async (key: string) => {
  const ledger = ledgerName(c.stack.clientId, key, DEFAULT_IDEMPOTENCY_SHARDS);
  return (
    await objectCall<{ keyState: string | null }>(
      c.stack.edge.miniflare,
      'IDEMPOTENCY',
      ledger,
      'stats',
      `${c.stack.clientId}:${key}`,
    )
  ).keyState;
};
const delayCreates = (ms: number) => c.stack.control('demo-pf4', 'delay', { ms, cmd: 'UserRecordNew' });

describe('one Idempotency-Key, one account', () => {
  it('applies a create that passes its deadline once: a retry while the server completes it waits for the real outcome, later ones replay it', async () => {
    const body = { group: await demoGroup(), name: `Late ${randomUUID().slice(0, 8)}` };
    const key = randomUUID();
    const before = await serverUsers();
    await delayCreates(2000);
    try {
      const first = await create(body, key, 1);
      expect(first.body.error!.code).toBe('NoConnect');
      expect(first.headers.get('x-request-outcome')).toBe('unknown');

      // The server is still working on the first call: this retry has budget enough to wait for it.
      const during = await create(body, key, 10);
      expect(during.body.error).toBeNull();
      expect(during.body.data).toMatchObject({ name: body.name, login: expect.any(Number) });
      expect(during.headers.get('idempotency-replayed')).toBe('true');

      const after = await create(body, key, 10);
      expect(after.body.data!.login).toBe(during.body.data!.login);
      expect(after.headers.get('idempotency-replayed')).toBe('true');
    } finally {
      await delayCreates(0);
    }
    expect(await named(body.name)).toBe(1);
    expect((await serverUsers()) - before).toBe(1);
  });

  it('completes the stored record with the late answer: a retry after the server finished replays it', async () => {
    const body = { group: await demoGroup(), name: `After ${randomUUID().slice(0, 8)}` };
    const key = randomUUID();
    await delayCreates(1500);
    try {
      const first = await create(body, key, 1);
      expect(first.headers.get('x-request-outcome')).toBe('unknown');
      expect(await eventually(async () => (await named(body.name)) === 1, 10_000, 100)).toBe(true);
      // The broker pushed the late answer: the stored record is complete before anyone retries.
      expect(await eventually(async () => (await keyState(key)) === 'done', 10_000, 50)).toBe(true);
    } finally {
      await delayCreates(0);
    }
    const retry = await create(body, key, 10);
    expect(retry.body.error).toBeNull();
    expect(retry.body.data!.name).toBe(body.name);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect(retry.headers.get('x-request-outcome')).toBeNull();
    expect(await named(body.name)).toBe(1);
  });

  it('makes a concurrent duplicate wait for the first call and answer what it answered', async () => {
    const body = { group: await demoGroup(), name: `Twin ${randomUUID().slice(0, 8)}` };
    const key = randomUUID();
    const before = await serverUsers();
    await delayCreates(800);
    let answers: Answer[];
    try {
      answers = await Promise.all([create(body, key, 10), create(body, key, 10), create(body, key, 10)]);
    } finally {
      await delayCreates(0);
    }
    expect(answers.map((a) => a.body.error)).toEqual([null, null, null]);
    expect(new Set(answers.map((a) => a.body.data!.login)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotency-replayed') === 'true')).toHaveLength(2);
    expect(await named(body.name)).toBe(1);
    expect((await serverUsers()) - before).toBe(1);
  });

  it('tells a retry whose budget ends first that the call is in progress, without sending it again', async () => {
    const body = { group: await demoGroup(), name: `Busy ${randomUUID().slice(0, 8)}` };
    const key = randomUUID();
    await delayCreates(3500);
    try {
      const first = await create(body, key, 1);
      expect(first.headers.get('x-request-outcome')).toBe('unknown');
      const busy = await create(body, key, 1);
      expect(busy.body.data).toBeNull();
      expect(busy.body.error).toMatchObject({ code: 'NoConnect', message: expect.stringMatching(/still in progress/) });
      expect(busy.headers.get('x-request-outcome')).toBe('unknown');
      expect(busy.headers.get('retry-after')).toBe('1');
      const done = await create(body, key, 10);
      expect(done.body.error).toBeNull();
      expect(done.body.data!.name).toBe(body.name);
    } finally {
      await delayCreates(0);
    }
    expect(await named(body.name)).toBe(1);
  });
});

describe('link objects', () => {
  it('spreads the reads of one platform over several link objects', async () => {
    const login = (await c.get<Envelope<Account[]>>(`${c.v2pf4}/UsersRequest?limit=1`)).body.data![0].login;
    const stats = () =>
      Promise.all(
        Array.from({ length: DEFAULT_LINKS_PER_PLATFORM }, (_, n) =>
          objectCall<{ calls: number }>(
            c.stack.edge.miniflare,
            'LINKS',
            linkName(c.stack.platforms.pf4, LOCAL_HOME.region, n),
            'stats',
          ),
        ),
      );
    const before = await stats();
    const reads = await Promise.all(
      Array.from({ length: 40 }, () => c.get<Envelope<Account>>(`${c.v2pf4}/UserRecordGet/${login}`)),
    );
    expect(reads.every((r) => r.body.data?.login === login)).toBe(true);
    const after = await stats();
    const served = after.map((s, n) => s.calls - before[n].calls);
    expect(served.reduce((a, b) => a + b, 0)).toBe(40);
    expect(served.filter((n) => n > 0).length).toBeGreaterThan(1);
  });

  it('answers every call in flight when the broker dies, and never sends a keyed create again after it comes back', async () => {
    const body = { group: await demoGroup(), name: `Orphan ${randomUUID().slice(0, 8)}` };
    const key = randomUUID();
    await c.stack.control('demo-pf4', 'freeze', { on: true });
    let answers: Answer[];
    try {
      const inFlight = [
        create(body, key, 20),
        ...Array.from({ length: 8 }, () => c.get(`${c.v2pf4}/ServerTime?requestTimeout=20`) as Promise<Answer>),
      ];
      // Every call has reached the frozen server through the broker before it dies.
      const parked = async () =>
        ((await c.stack.control('demo-pf4', 'state')) as { parked: Record<string, number> }).parked;
      expect(
        await eventually(
          async () => {
            const held = await parked();
            return held.UserRecordNew === 1 && held.ServerTime === 8;
          },
          10_000,
          20,
        ),
      ).toBe(true);
      c.stack.broker.child.kill('SIGKILL');
      answers = await Promise.all(inFlight);
    } finally {
      await c.stack.control('demo-pf4', 'freeze', { on: false });
    }
    const [change, ...reads] = answers;
    expect(change.status).toBe(200);
    expect(change.body.error!.code).toBe('NoConnect');
    expect(change.headers.get('x-request-outcome')).toBe('unknown');
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body.error!.code).toBe('NoConnect');
      expect(read.headers.get('x-request-outcome')).toBeNull();
    }

    await c.stack.restartBroker();
    await waitHealthy(c, 30_000);
    const applied = await named(body.name);
    expect(applied).toBeLessThanOrEqual(1);
    for (let i = 0; i < 2; i++) {
      const retry = await create(body, key, 5);
      expect(retry.body.error).toMatchObject({ code: 'NoConnect', message: expect.stringMatching(/cannot be known/) });
      expect(retry.headers.get('x-request-outcome')).toBe('unknown');
      expect(retry.headers.get('idempotency-replayed')).toBe('true');
    }
    expect(await named(body.name)).toBe(applied);
  });
});
