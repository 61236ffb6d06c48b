/**
 * The registry readiness gate, one migration short: with every migration the worker is built with recorded in
 * `d1_migrations` but one, whichever it is (the newest included), every route but `/livez` still answers 503
 * `RegistryNotReady`; with all of them recorded the edge serves. Ready is final for an isolate, so the edge opens
 * only at the end, once every "all but one" was refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTRY_MIGRATIONS } from '../../workers/registry/migrationNames.js';
import { startTestEdge, type TestEdge } from '../support/edge.js';

let edge: TestEdge;
const warnings: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  edge = await startTestEdge({
    log: (line, stream) => {
      if (stream === 'stderr' && line.startsWith('{')) warnings.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

const NOT_READY = {
  errorType: 'Unavailable',
  errorCode: 'RegistryNotReady',
  errorDescription: 'the platform registry is not ready yet: retry shortly',
};

async function answer(path: string) {
  const res = await fetch(new URL(path, edge.url));
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* plain text */
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}

/**
 * Past the gate's ASK_EVERY_MS (250 ms): a "not ready" answer stands that long before D1 is asked again. Waited out:
 * every case here gives the same answer and the same reason (logged once), so nothing tells that D1 was asked again.
 */
const pastAskInterval = () => new Promise((r) => setTimeout(r, 400));

/** Records exactly `names` in d1_migrations (the schema itself stays fully migrated). */
async function record(names: readonly string[]) {
  const db = await edge.db();
  await db.batch([
    db.prepare('DELETE FROM d1_migrations'),
    ...names.map((name) => db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(name)),
  ]);
}

describe('the registry readiness gate, one migration short', () => {
  it('stays shut with every migration recorded but any one of them, and opens once all are', async () => {
    expect(REGISTRY_MIGRATIONS.length).toBeGreaterThan(1);
    const allButOne = REGISTRY_MIGRATIONS.map(
      (missing) => [missing, REGISTRY_MIGRATIONS.filter((name) => name !== missing)] as const,
    );
    // The newest first: the one a gate counting one short would let through.
    for (const [missing, recorded] of allButOne.reverse()) {
      await record(recorded);
      await pastAskInterval();
      expect([missing, await answer('/openapi.json')]).toStrictEqual([
        missing,
        { status: 503, retryAfter: '1', body: NOT_READY },
      ]);
      expect([missing, await answer('/livez')]).toStrictEqual([missing, { status: 200, retryAfter: null, body: 'ok' }]);
    }
    // One reason for every case (the count is the same), logged once.
    expect(warnings.filter((w) => w.msg === 'the registry is not ready').map((w) => [w.level, w.reason])).toStrictEqual(
      [['warn', `${REGISTRY_MIGRATIONS.length - 1} of ${REGISTRY_MIGRATIONS.length} migrations applied`]],
    );

    await record(REGISTRY_MIGRATIONS);
    await pastAskInterval();
    const served = await answer('/openapi.json');
    expect([served.status, served.retryAfter]).toStrictEqual([200, null]);
    expect(served.body).toMatchObject({ openapi: expect.stringMatching(/^3\./), paths: expect.any(Object) });
  });
});
