/**
 * An edge whose registry is not migrated yet (`npm start` while it applies the migrations, or a deployment whose
 * migrations were not applied) answers 503 with `Retry-After` and says the registry is not ready, not a 500: a caller
 * and a readiness probe retry. Other failures stay 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryNotMigrated } from '../../workers/registry/notMigrated.js';
import { startTestEdge, type TestEdge } from '../support/edge.js';

let edge: TestEdge;
const errors: string[] = [];

beforeAll(async () => {
  edge = await startTestEdge({
    log: (line, stream) => {
      if (stream === 'stderr') errors.push(line);
    },
  });
  const db = await edge.db();
  await db.exec('DROP TABLE api_clients');
  await db.exec('DROP TABLE trade_platforms');
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

describe('a registry that is not migrated', () => {
  it('answers a token request 503 with Retry-After, naming the registry', async () => {
    const res = await fetch(new URL('/connect/token', edge.url), {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa('client-a:secret-a')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&scope=webapi',
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toStrictEqual({
      errorType: 'Unavailable',
      errorCode: 'RegistryNotReady',
      errorDescription: 'the platform registry is not ready yet: retry shortly',
    });
    const logged = errors.map((line) => JSON.parse(line) as { msg: string; error: string });
    expect(logged.at(-1)).toMatchObject({
      msg: 'the registry is not migrated',
      error: expect.stringContaining('no such table: api_clients'),
    });
    expect(errors.join('\n')).not.toContain('secret-a');
  });

  it('answers the readiness probe 503', async () => {
    const res = await fetch(new URL('/healthz', edge.url));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await res.json()).errorCode).toBe('RegistryNotReady');
  });

  it('is told apart from other errors by the missing table alone', () => {
    expect(registryNotMigrated(new Error('D1_ERROR: no such table: api_clients: SQLITE_ERROR'))).toBe(true);
    expect(registryNotMigrated('no such table: trade_platforms')).toBe(true);
    expect(registryNotMigrated(new Error('D1_ERROR: no such column: scopes: SQLITE_ERROR'))).toBe(false);
    expect(registryNotMigrated(new Error('internal error'))).toBe(false);
    expect(registryNotMigrated(new Error('no such tables here'))).toBe(false);
  });
});
