/**
 * Where the edge sends a platform's calls by region (docs/regions.md), in real workerd against a scripted broker: a
 * cached read goes to the platform's link objects in the caller's region, a live read and a write to those of its home
 * region (the registry's, else HOME_REGION); a keyed write's ledger sends through the home's links; an organization
 * pinned to a jurisdiction has its objects in that jurisdiction's namespace, and a caller from outside it is served
 * by the home region's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { PING_OP } from '../../shared/frames.js';
import type { Region } from '../../shared/regions.js';
import { ORG_A, type TestEdge } from '../support/edge.js';
import { edgeWithFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import {
  DEFAULT_IDEMPOTENCY_SHARDS,
  DEFAULT_LINKS_PER_PLATFORM,
  ledgerName,
  linkName,
  pickLink,
} from '../../workers/gateway/names.js';
import { objectCall } from '../../launcher/edge.js';
import { freePort, startDelayProxy, type DelayProxy } from '../../bench/delayProxy.js';
import { until } from '../support/until.js';

let edge: TestEdge;
let broker: FakeBroker;
let token: string;

/** Where the `oc` region's objects reach the broker: a port nothing listens on until a test puts a proxy there. */
let ocRoute: number;
const setup = edgeWithFakeBroker(async (fake) => {
  ocRoute = await freePort();
  return { REGION_BROKER_ROUTES: JSON.stringify({ oc: { [fake.url]: `http://127.0.0.1:${ocRoute}` } }) };
});
beforeAll(() => {
  ({ edge, broker, token } = setup);
});

/** A fresh PF4 platform of `organization` with `home` as its registry home region (null: the edge's default). */
async function addPlatform(home: Region | null, organization = ORG_A): Promise<string> {
  const id = randomUUID();
  await (await edge.db())
    .prepare(
      'INSERT INTO trade_platforms (id, name, type, organization_id, home_region, created) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .bind(id, 'regional PF4', 'PF4', organization, home, new Date().toISOString())
    .run();
  return id;
}

/** Calls forwarded by each region's link objects of a platform (summed over the region's links). */
async function callsIn(platform: string, region: Region, jurisdiction?: string): Promise<number> {
  const binding = jurisdiction ? { binding: 'LINKS', jurisdiction } : 'LINKS';
  const stats = await Promise.all(
    Array.from({ length: DEFAULT_LINKS_PER_PLATFORM }, (_, n) =>
      objectCall<{ calls: number }>(edge.miniflare, binding, linkName(platform, region, n), 'stats'),
    ),
  );
  return stats.reduce((sum, s) => sum + s.calls, 0);
}

async function call(
  method: string,
  path: string,
  region: Region,
  options: { body?: unknown; headers?: Record<string, string>; bearer?: string } = {},
) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${options.bearer ?? token}`,
      'x-gateway-region': region,
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return { status: res.status, region: res.headers.get('x-gateway-region'), body: await res.json() };
}

const user = { login: 7, group: 'demo', name: 'Regional' };

function scriptUser(): void {
  broker.script.set('PF4.UserRecordGet', { reply: { ok: true, data: user } });
  broker.script.set('PF4.UserRecordRequest', { reply: { ok: true, data: user } });
  broker.script.set('PF4.UserRecordNew', { reply: { ok: true, data: user } });
}

describe('link objects by region', () => {
  it("sends a cached read to the caller's region and a live read and a write to the platform's home", async () => {
    scriptUser();
    const platform = await addPlatform(null);
    const v2 = `/api/v2/PF4/${platform}`;

    const cached = await call('GET', `${v2}/UserRecordGet/7`, 'apac');
    expect(cached).toMatchObject({ status: 200, region: 'apac', body: { data: user, error: null } });
    expect([await callsIn(platform, 'apac'), await callsIn(platform, 'weur')]).toEqual([1, 0]);

    const live = await call('GET', `${v2}/UserRecordRequest/7`, 'apac');
    expect(live).toMatchObject({ status: 200, region: 'apac', body: { data: user, error: null } });
    const write = await call('POST', `${v2}/UserRecordNew`, 'apac', { body: { group: 'demo', name: 'Regional' } });
    expect(write).toMatchObject({ status: 200, body: { data: user, error: null } });
    expect([await callsIn(platform, 'apac'), await callsIn(platform, 'weur')]).toEqual([1, 2]);
    expect(broker.frames.filter((f) => f.platform === platform).map((f) => f.op)).toEqual([
      'PF4.UserRecordGet',
      'PF4.UserRecordRequest',
      'PF4.UserRecordNew',
    ]);
  });

  it("serves a caller in the platform's home region from the home's links alone", async () => {
    scriptUser();
    const platform = await addPlatform(null);
    await call('GET', `/api/v2/PF4/${platform}/UserRecordGet/7`, 'weur');
    await call('GET', `/api/v2/PF4/${platform}/UserRecordRequest/7`, 'weur');
    expect(await callsIn(platform, 'weur')).toBe(2);
  });

  it('takes the home region from the registry: live calls go there, cached reads stay with the caller', async () => {
    scriptUser();
    const platform = await addPlatform('sam');
    const v2 = `/api/v2/PF4/${platform}`;
    expect((await call('GET', `${v2}/UserRecordGet/7`, 'weur')).body.data).toEqual(user);
    expect((await call('GET', `${v2}/UserRecordRequest/7`, 'weur')).body.data).toEqual(user);
    expect((await call('GET', `${v2}/UserRecordGet/7`, 'sam')).body.data).toEqual(user);
    expect([await callsIn(platform, 'weur'), await callsIn(platform, 'sam')]).toEqual([1, 2]);
  });

  it("sends a keyed write through its ledger and the home's links, and replays it from the ledger", async () => {
    scriptUser();
    const platform = await addPlatform('enam');
    const key = randomUUID();
    const send = () =>
      call('POST', `/api/v2/PF4/${platform}/UserRecordNew`, 'apac', {
        body: { group: 'demo', name: 'Regional' },
        headers: { 'idempotency-key': key },
      });
    expect((await send()).body).toMatchObject({ data: user, error: null });
    expect((await send()).body).toMatchObject({ data: user, error: null });
    expect(broker.framesFor('PF4.UserRecordNew').filter((f) => f.platform === platform)).toHaveLength(1);
    expect([await callsIn(platform, 'enam'), await callsIn(platform, 'apac')]).toEqual([1, 0]);
    const ledger = await objectCall<{ keyState: string | null }>(
      edge.miniflare,
      'IDEMPOTENCY',
      ledgerName('client-a', key, DEFAULT_IDEMPOTENCY_SHARDS),
      'stats',
      `client-a:${key}`,
    );
    expect(ledger.keyState).toBe('done');
  });
});

describe('an organization pinned to a jurisdiction', () => {
  const ORG_EU = 'e0000000-0000-4000-8000-0000000000e0';
  let euToken: string;
  let platform: string;

  beforeAll(async () => {
    const db = await edge.db();
    await db
      .prepare('INSERT INTO organizations (id, name, created, jurisdiction) VALUES (?, ?, ?, ?)')
      .bind(ORG_EU, 'Org EU', new Date().toISOString(), 'eu')
      .run();
    euToken = await edge.token({ client_id: 'client-eu', org: ORG_EU });
    platform = await addPlatform(null, ORG_EU);
  });

  it("serves a caller inside the jurisdiction from its region's objects, in the jurisdiction's namespace", async () => {
    scriptUser();
    const answer = await call('GET', `/api/v2/PF4/${platform}/UserRecordGet/7`, 'eeur', { bearer: euToken });
    expect(answer).toMatchObject({ status: 200, region: 'eeur', body: { data: user } });
    expect(await callsIn(platform, 'eeur', 'eu')).toBe(1);
    expect(await callsIn(platform, 'eeur')).toBe(0);
  });

  it("serves a caller from outside the jurisdiction from the home region's objects inside it", async () => {
    scriptUser();
    const before = await callsIn(platform, 'weur', 'eu');
    const answer = await call('GET', `/api/v2/PF4/${platform}/UserRecordGet/7`, 'apac', { bearer: euToken });
    expect(answer).toMatchObject({ status: 200, region: 'apac', body: { data: user } });
    await call('POST', `/api/v2/PF4/${platform}/UserRecordNew`, 'apac', {
      body: { group: 'demo', name: 'Regional' },
      bearer: euToken,
    });
    expect(await callsIn(platform, 'weur', 'eu')).toBe(before + 2);
    expect([await callsIn(platform, 'apac', 'eu'), await callsIn(platform, 'weur')]).toEqual([0, 0]);
  });
});

describe('a region that cannot reach the brokers', () => {
  let proxy: DelayProxy | undefined;
  afterAll(async () => {
    await proxy?.close();
  });

  /** The figures of the link object of `region` that a trace id picks. */
  const linkOf = (platform: string, region: Region, traceId: string) =>
    objectCall<{ calls: number; viaHome: number; connected: boolean }>(
      edge.miniflare,
      'LINKS',
      pickLink(platform, region, traceId, DEFAULT_LINKS_PER_PLATFORM),
      'stats',
    );

  it("answers its cached reads through the home region's links, and alone again once it reaches them", async () => {
    scriptUser();
    broker.script.set(PING_OP, { reply: { ok: true, data: { broker: 'fake', draining: false, platform: null } } });
    const platform = await addPlatform(null);
    const traceId = randomBytes(16).toString('hex');
    const traced = { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
    const read = () => call('GET', `/api/v2/PF4/${platform}/UserRecordGet/7`, 'oc', { headers: traced });

    // Nothing listens where oc reaches the broker: the home's link answers, the same answer.
    expect(await read()).toMatchObject({ status: 200, region: 'oc', body: { data: user, error: null } });
    expect(await read()).toMatchObject({ status: 200, body: { data: user, error: null } });
    expect(await linkOf(platform, 'oc', traceId)).toMatchObject({ calls: 2, viaHome: 2, connected: false });
    expect((await linkOf(platform, 'weur', traceId)).calls).toBe(2);

    // The route comes back: the oc link reconnects in the background, and its reads no longer go home.
    proxy = await startDelayProxy(broker.url, 0, ocRoute);
    await until(async () => {
      await read();
      return (await linkOf(platform, 'oc', traceId)).connected;
    }, 'the oc link connected through the route');
    const before = await linkOf(platform, 'oc', traceId);
    const homeBefore = (await linkOf(platform, 'weur', traceId)).calls;
    expect(await read()).toMatchObject({ status: 200, body: { data: user, error: null } });
    expect(await linkOf(platform, 'oc', traceId)).toMatchObject({ calls: before.calls + 1, viaHome: before.viaHome });
    expect((await linkOf(platform, 'weur', traceId)).calls).toBe(homeBefore);
    expect(proxy.connections).toBeGreaterThan(0);
  });
});
