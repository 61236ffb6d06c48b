/**
 * The edge serves nothing but liveness until its registry is ready: every migration it was built with recorded in
 * wrangler's `d1_migrations`, and no setup step holding it (`registry_holds`). Before that every route answers 503
 * `RegistryNotReady` with `Retry-After: 1`, a token request included, even when its query would succeed against the
 * part of the schema already there; the reason is logged once each time it changes. Ready is final: the edge stays
 * open afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdRegistry, LAUNCHER_HOLD, migrationFiles } from '../../launcher/edge.js';
import { REGISTRY_MIGRATIONS } from '../../workers/registry/migrationNames.js';
import { ORG_A, PF4_A, PF4_B, PF5_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import { until } from '../support/until.js';

let edge: TestEdge;
let broker: FakeBroker;
const warnings: Array<Record<string, unknown>> = [];

const NOT_READY = {
  errorType: 'Unavailable',
  errorCode: 'RegistryNotReady',
  errorDescription: 'the platform registry is not ready yet: retry shortly',
};
const up = (family: string) => ({ family, up: true, since: new Date().toISOString(), lastError: null });

beforeAll(async () => {
  broker = await startFakeBroker();
  broker.health = {
    status: 200,
    body: { status: 'ok', platforms: { [PF4_A]: up('PF4'), [PF5_A]: up('PF5'), [PF4_B]: up('PF4') } },
  };
  edge = await startTestEdge({
    vars: { BROKER_URL: broker.url },
    log: (line, _stream) => {
      // Warnings on standard error, the registry's setup steps at info on standard output.
      if (line.startsWith('{')) warnings.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  await edge.seedClient('client-r', 'secret-r', ORG_A);
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

async function answer(path: string, init: RequestInit = {}) {
  const res = await fetch(new URL(path, edge.url), init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* plain text */
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}

const tokenRequest = () =>
  answer('/connect/token', {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa('client-r:secret-r')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=webapi',
  });

/** The reasons the gate has logged, oldest first. */
const reasons = () => warnings.filter((w) => w.msg === 'the registry is not ready').map((w) => w.reason as string);

/**
 * Every kind of route refused alike; liveness answered. First asked until the gate has seen the registry as it is
 * now: its answer stands ASK_EVERY_MS, and it logs each new reason once.
 */
async function expectNotReady(token: string, reason: string | RegExp) {
  await until(
    async () => {
      await answer('/healthz');
      const last = reasons().at(-1);
      return last !== undefined && (typeof reason === 'string' ? last === reason : reason.test(last));
    },
    `the reason ${String(reason)} logged`,
  );
  const refused = { status: 503, retryAfter: '1', body: NOT_READY };
  expect(await answer('/healthz')).toStrictEqual(refused);
  expect(await tokenRequest()).toStrictEqual(refused);
  expect(
    await answer(`/api/v2/PF4/${PF4_A}/ServerTime`, { headers: { authorization: `Bearer ${token}` } }),
  ).toStrictEqual(refused);
  expect(await answer('/openapi.json')).toStrictEqual(refused);
  expect(await answer('/livez')).toStrictEqual({ status: 200, retryAfter: null, body: 'ok' });
}

describe('the registry readiness gate', () => {
  it("lists every migration file the worker is built with, in wrangler's order", () => {
    expect(REGISTRY_MIGRATIONS).toStrictEqual(migrationFiles());
  });

  it('answers 503 RegistryNotReady until every migration is recorded and no setup step holds the registry, then serves', async () => {
    const db = await edge.db();
    const token = await edge.token();
    const records = (
      await db.prepare('SELECT name FROM d1_migrations ORDER BY id').all<{ name: string }>()
    ).results.map((r) => r.name);
    expect(records).toStrictEqual([...REGISTRY_MIGRATIONS]);

    // Neither readiness table: a registry nothing has set up yet (a fresh one, before its first migration or hold).
    await db.exec('DROP TABLE d1_migrations');
    await db.exec('DROP TABLE registry_holds');
    await expectNotReady(token, 'nothing migrated yet');

    // No migration recorded at all, beside the other tables.
    await db.exec('CREATE TABLE registry_holds (name TEXT PRIMARY KEY, since TEXT NOT NULL)');
    await expectNotReady(token, /no such table: d1_migrations/);

    // Half migrated by the record: the token query would succeed on the schema there, and is still not answered.
    await db.exec(
      'CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)',
    );
    for (const name of REGISTRY_MIGRATIONS.slice(0, 2))
      await db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(name).run();
    await expectNotReady(token, `2 of ${REGISTRY_MIGRATIONS.length} migrations applied`);

    // Fully migrated, but held while the launcher seeds it.
    let resume!: () => void;
    const seeding = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const held = holdRegistry(db, async () => {
      for (const name of REGISTRY_MIGRATIONS.slice(2))
        await db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(name).run();
      await seeding;
    });
    await expect
      .poll(async () => (await db.prepare('SELECT name FROM registry_holds').all<{ name: string }>()).results)
      .toStrictEqual([{ name: LAUNCHER_HOLD }]);
    await expect
      .poll(async () => (await db.prepare('SELECT COUNT(*) AS n FROM d1_migrations').first<{ n: number }>())?.n)
      .toBe(REGISTRY_MIGRATIONS.length);
    await expectNotReady(token, `held by ${LAUNCHER_HOLD}`);
    resume();
    await held;

    // Served once the gate asks again, ASK_EVERY_MS after its last "not ready".
    const health = await until(async () => {
      const a = await answer('/healthz');
      return a.status !== 503 && a;
    }, 'an answer other than 503');
    expect(health).toStrictEqual({
      status: 200,
      retryAfter: null,
      body: { status: 'ok', edge: 'up', broker: 'up', platforms: 'up' },
    });
    const issued = await tokenRequest();
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer' });

    // One line per reason, in the order they came: at info while the registry is being set up, else a warning.
    expect(warnings.filter((w) => w.msg === 'the registry is not ready').map((w) => [w.level, w.reason])).toStrictEqual(
      [
        ['info', 'nothing migrated yet'],
        ['warn', expect.stringContaining('no such table: d1_migrations')],
        ['warn', `2 of ${REGISTRY_MIGRATIONS.length} migrations applied`],
        ['info', `held by ${LAUNCHER_HOLD}`],
      ],
    );

    // Ready is final: a hold taken afterwards (a later launcher's seed) does not close a serving edge.
    await db
      .prepare('INSERT INTO registry_holds (name, since) VALUES (?, ?)')
      .bind('a later step', new Date().toISOString())
      .run();
    expect((await answer('/healthz')).status).toBe(200);
  });
});
