/**
 * Idempotency-Key for the edge's own changes, over a real D1 registry in this process: a duplicate while the first
 * is running hears it is in progress, a repeat after it gets the first answer, a change that failed in the edge and a
 * binding cut off before its answer are unknown (never made again), keys are a client's within its organization, a
 * client holds a bounded number of keys, and expired keys go. Calls without a key are not bound at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import type { AppEnv, Caller } from '../env.js';
import { webhookOperations } from '../../shared/catalog/webhooks.js';
import { startRegistryDb, type RegistryDb } from '../../test/support/registryDb.js';
import { expireLocalKeys, keyedChange, MAX_KEYS_PER_CLIENT, RUNNING_MS } from './localKeys.js';

let registry: RegistryDb;
beforeAll(async () => {
  registry = await startRegistryDb();
}, 60_000);
afterAll(() => registry?.close());

/** A change route whose change the test runs: each call counted, answered by `answer` (or thrown). */
function app(answer: (n: number) => Promise<unknown>, organizationId = 'org') {
  let made = 0;
  const a = new Hono<AppEnv>();
  a.use('*', async (c, next) => {
    c.set('caller', { clientId: 'keys-a', organizationId, scopes: ['webapi'] } satisfies Caller);
    c.set('traceId', 'trace');
    await next();
  });
  a.post('/api/v2/Webhooks/:webhookId/Test', (c) =>
    keyedChange(c, webhookOperations.WebhookTest, { webhookId: c.req.param('webhookId') }, async () =>
      c.json({ data: await answer(++made), error: null, meta: { activityId: 'trace' } }),
    ),
  );
  a.onError((error, c) => c.json({ thrown: error.message }, 500));
  const call = async (id: string, key?: string) => {
    const res = await a.request(
      `/api/v2/Webhooks/${id}/Test`,
      { method: 'POST', headers: key ? { 'idempotency-key': key } : {} },
      { DB: registry.db, IDEMPOTENCY_RETENTION_HOURS: '1' },
    );
    return { res, body: (await res.json()) as any };
  };
  return { call, made: () => made };
}

const ID = '11111111-1111-4111-8111-111111111111';

describe('keys of the edge’s own changes', () => {
  it('answer a duplicate in progress, then replay the first answer; a change without a key runs each time', async () => {
    let release!: () => void;
    const { call, made } = app((n) =>
      n === 1 ? new Promise((r) => (release = () => r({ n }))) : Promise.resolve({ n }),
    );
    const first = call(ID, 'k-progress');
    await expect.poll(() => made()).toBe(1);
    const duplicate = await call(ID, 'k-progress');
    expect(duplicate.body.error).toEqual({
      code: 'NoConnect',
      managerCode: null,
      message: 'Idempotency-Key: the first request with this key is still in progress; repeat it to get its outcome',
    });
    expect(duplicate.res.headers.get('x-request-outcome')).toBe('unknown');
    expect(duplicate.res.headers.get('retry-after')).toBe('1');
    release();
    expect((await first).body.data).toEqual({ n: 1 });
    const repeat = await call(ID, 'k-progress');
    expect(repeat.body.data).toEqual({ n: 1 });
    expect(repeat.res.headers.get('idempotency-replayed')).toBe('true');
    expect(made()).toBe(1);
    // Another endpoint under the same key is another request.
    expect((await call('22222222-2222-4222-8222-222222222222', 'k-progress')).body.error.message).toBe(
      'Idempotency-Key: already used with another request; use a fresh key for a new change',
    );
    await call(ID);
    await call(ID);
    expect(made()).toBe(3);
  });

  it('never make again a change that failed in the edge, and call a binding cut off before its answer unknown', async () => {
    const { call, made } = app((n) => (n === 1 ? Promise.reject(new Error('D1 went away')) : Promise.resolve({ n })));
    const failed = await call(ID, 'k-failed');
    const message =
      'Idempotency-Key: the change failed in the gateway and may have been made; check its state: it is not made again under this key';
    expect(failed.body.error).toEqual({ code: 'Internal', managerCode: null, message });
    expect(failed.res.headers.get('x-request-outcome')).toBe('unknown');
    const repeat = await call(ID, 'k-failed');
    expect(repeat.body.error.message).toBe(message.replace('the change', 'the first request with this key'));
    expect(repeat.res.headers.get('x-request-outcome')).toBe('unknown');
    expect(repeat.res.headers.get('idempotency-replayed')).toBe('true');
    expect(made()).toBe(1);

    const { call: callCut } = app(() => new Promise(() => {}));
    void callCut(ID, 'k-cut');
    await expect
      .poll(async () =>
        registry.db.prepare("SELECT COUNT(*) AS n FROM local_idempotency WHERE key = 'k-cut'").first<{ n: number }>(),
      )
      .toEqual({ n: 1 });
    await registry.db
      .prepare("UPDATE local_idempotency SET created_ms = created_ms - ? WHERE key = 'k-cut'")
      .bind(RUNNING_MS + 1)
      .run();
    const cut = await call(ID, 'k-cut');
    expect(cut.body.error.message).toBe(
      'Idempotency-Key: the outcome of the first request with this key cannot be known (it was cut off before its answer); it is not made again under this key',
    );
    expect(cut.res.headers.get('x-request-outcome')).toBe('unknown');
    expect(cut.res.headers.get('retry-after')).toBeNull();
    expect(cut.res.headers.get('idempotency-replayed')).toBe('true');
  });

  it("are the client's within its organization: the same client id of another organization is another request", async () => {
    const mine = app((n) => Promise.resolve({ n }));
    expect((await mine.call(ID, 'k-org')).body.data).toEqual({ n: 1 });
    const elsewhere = app((n) => Promise.resolve({ n }), 'another-org');
    expect((await elsewhere.call(ID, 'k-org')).body.error.message).toBe(
      'Idempotency-Key: already used with another request; use a fresh key for a new change',
    );
    expect(elsewhere.made()).toBe(0);
  });

  it('hold a client to its bound of keys, and forget expired ones', async () => {
    const { call, made } = app((n) => Promise.resolve({ n }));
    const now = Date.now();
    // Two keys short of the bound (the client holds the earlier tests' keys too).
    const held = (await registry.db
      .prepare("SELECT COUNT(*) AS n FROM local_idempotency WHERE client_id = 'keys-a'")
      .first<{ n: number }>())!.n;
    await registry.db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO local_idempotency (client_id, key, fingerprint, status, created_ms, expires_ms)
         SELECT 'keys-a', 'filler-' || i, 'f', 200, ?, ? FROM n`,
      )
      .bind(MAX_KEYS_PER_CLIENT - held - 2, now, now + 60_000)
      .run();
    // Five new keys at once: two fit, the others are refused, none made past the bound.
    const racing = await Promise.all([1, 2, 3, 4, 5].map((i) => call(ID, `k-race-${i}`)));
    expect(racing.filter((r) => r.body.error === null)).toHaveLength(2);
    expect(racing.filter((r) => r.res.status === 429)).toHaveLength(3);
    expect(made()).toBe(2);
    const refused = await call(ID, 'k-one-too-many');
    expect(refused.res.status).toBe(429);
    expect(refused.body.error.code).toBe('Forbidden');
    expect(refused.body.error.message).toContain(`this client holds ${MAX_KEYS_PER_CLIENT} keys`);
    // The oldest filler expires in a minute.
    expect([59, 60]).toContain(Number(refused.res.headers.get('retry-after')));
    // A key it holds is still answered.
    expect((await call(ID, 'k-progress')).res.headers.get('idempotency-replayed')).toBe('true');
    await expireLocalKeys(registry.db, now + 60_001);
    expect((await call(ID, 'k-one-too-many')).body.data).toEqual({ n: 3 });
  });
});
