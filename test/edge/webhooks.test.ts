/**
 * The webhook resource and its deliveries through the real worker in workerd, its queues in Miniflare, against a
 * receiver on 127.0.0.1 that verifies every signature with the `standardwebhooks` package: endpoints registered,
 * read (never with their secret), changed, disabled and removed by a client holding webapi.webhooks of the
 * organization alone; a test event delivered signed; a failing receiver retried until it answers, with its
 * Retry-After honoured; a rotation signing with both secrets; a 410 Gone disabling the endpoint; every attempt logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { ORG_A, ORG_B, PF4_A, PF4_B, PF5_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';
import { until } from '../support/until.js';
import { objectCall } from '../../launcher/edge.js';
import { WebhookStore } from '../../workers/webhooks/webhookStore.js';

let edge: TestEdge;
let receiver: WebhookReceiver;
let manager: string;
let foreign: string;
let reader: string;
let auditor: string;

beforeAll(async () => {
  [edge, receiver] = await Promise.all([
    startTestEdge({ vars: { WEBHOOK_PRIVATE_TARGETS: '1', REGISTRY_CACHE_SECONDS: '0' } }),
    startWebhookReceiver(),
  ]);
  await edge.seedClient('hooks-a', 'unused', ORG_A, 'webapi webapi.webhooks');
  await edge.seedClient('hooks-b', 'unused', ORG_B, 'webapi webapi.webhooks');
  manager = await edge.token({ client_id: 'hooks-a', scope: 'webapi webapi.webhooks' });
  foreign = await edge.token({ client_id: 'hooks-b', org: ORG_B, scope: 'webapi webapi.webhooks' });
  reader = await edge.token({ client_id: 'reader-a', scope: 'webapi webapi.write webapi.admin' });
  await edge.seedClient('auditor-a', 'unused', ORG_A, 'webapi webapi.audit');
  auditor = await edge.token({ client_id: 'auditor-a', scope: 'webapi webapi.audit' });
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await receiver?.close();
});

async function call(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed: any = await res.json();
  return { status: res.status, body: parsed };
}

const create = (body: unknown, token = manager) => call('POST', '/api/v2/Webhooks', token, body);

async function registered(eventTypes = ['account.created']) {
  const created = await create({ url: receiver.url, eventTypes, description: 'CRM' });
  expect(created.body.error).toBeNull();
  return created.body.data as { id: string; secret: string };
}

describe('webhook endpoints', () => {
  it('are registered with a secret shown once, and read without it', async () => {
    const created = await create({
      url: receiver.url,
      eventTypes: ['trade.closed', 'account.created'],
      platforms: [PF4_A],
      description: 'back office',
    });
    expect(created.status).toBe(200);
    const endpoint = created.body.data;
    expect(endpoint).toMatchObject({
      organizationId: ORG_A,
      url: receiver.url,
      description: 'back office',
      // In the catalog's order, whatever the order asked.
      eventTypes: ['account.created', 'trade.closed'],
      platforms: [PF4_A],
      enabled: true,
      disabledReason: null,
      previousSecretValidUntil: null,
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const read = await call('GET', `/api/v2/Webhooks/${endpoint.id}`, manager);
    const { secret: _secret, ...withoutSecret } = endpoint;
    expect(read.body).toEqual({ data: withoutSecret, error: null, meta: { activityId: expect.any(String) } });
    const list = await call('GET', '/api/v2/Webhooks', manager);
    expect(list.body.data.find((e: any) => e.id === endpoint.id)).toEqual(withoutSecret);
    expect(JSON.stringify(list.body)).not.toContain(endpoint.secret);
    // The change is in the audit trail, and the secret is not.
    await until(async () => {
      const trail = await call('GET', '/api/AuditEvents?operation=registry.Registry.WebhookCreate', auditor);
      return trail.body.events?.some((e: any) => JSON.parse(e.args).body.description === 'back office');
    }, 'the audit row of the registration');
    const trail = await call('GET', '/api/AuditEvents?operation=registry.Registry.WebhookCreate', auditor);
    expect(JSON.stringify(trail.body)).not.toContain(endpoint.secret);
  });

  it('refuse bad input naming the field and the rule, changing nothing', async () => {
    const before = (await call('GET', '/api/v2/Webhooks', manager)).body.data.length;
    const refused = async (body: unknown) => (await create(body)).body.error;
    expect(await refused({ url: 'ftp://127.0.0.1/x', eventTypes: ['account.created'] })).toMatchObject({
      code: 'Validation',
      message: 'url must be http or https',
    });
    expect((await refused({ url: receiver.url, eventTypes: ['account.opened'] })).message).toContain(
      'each event type must be one of account.created',
    );
    expect((await refused({ url: receiver.url, eventTypes: [] })).message).toContain(
      'eventTypes must name at least one event type',
    );
    expect((await refused({ url: receiver.url, eventTypes: ['account.created'], secret: 'mine' })).message).toContain(
      'secret',
    );
    expect(await refused({ url: receiver.url, eventTypes: ['account.created'], platforms: [PF4_B] })).toMatchObject({
      code: 'NotFound',
      message: `trade platform ${PF4_B} not found`,
    });
    expect((await call('GET', '/api/v2/Webhooks', manager)).body.data.length).toBe(before);
  });

  it('are created once under an Idempotency-Key, its first answer replayed, and the key refused for another request', async () => {
    const key = `create-${crypto.randomUUID()}`;
    const keyed = async (body: unknown, k = key, token = manager) => {
      const res = await fetch(new URL('/api/v2/Webhooks', edge.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': k },
        body: JSON.stringify(body),
      });
      return { replayed: res.headers.get('idempotency-replayed'), text: await res.text() };
    };
    const before = (await call('GET', '/api/v2/Webhooks', manager)).body.data.length;
    const body = { url: receiver.url, eventTypes: ['account.created'], description: 'keyed' };
    const first = await keyed(body);
    expect(first.replayed).toBeNull();
    const created = JSON.parse(first.text).data as { id: string; secret: string };
    expect(created.secret).toMatch(/^whsec_/);
    // The same request in another spelling (members in another order) is a repeat: the first answer, byte for byte.
    const again = await keyed({ description: 'keyed', eventTypes: ['account.created'], url: receiver.url });
    expect(again).toStrictEqual({ replayed: 'true', text: first.text });
    const list = (await call('GET', '/api/v2/Webhooks', manager)).body.data as Array<{ id: string }>;
    expect(list.length).toBe(before + 1);
    expect(list.filter((e) => e.id === created.id)).toHaveLength(1);

    const other = JSON.parse((await keyed({ ...body, description: 'another' })).text);
    expect(other.error).toEqual({
      code: 'Validation',
      managerCode: null,
      message: 'Idempotency-Key: already used with another request; use a fresh key for a new change',
    });
    const malformed = JSON.parse((await keyed(body, 'has space')).text);
    expect(malformed.error.message).toBe('Idempotency-Key: must be 1 to 255 visible ASCII characters');
    // Keys are each client's own: another client with the same key makes its own change.
    await edge.seedClient('hooks-a2', 'unused', ORG_A, 'webapi webapi.webhooks');
    const colleague = await edge.token({ client_id: 'hooks-a2', scope: 'webapi webapi.webhooks' });
    const theirs = JSON.parse((await keyed(body, key, colleague)).text);
    expect(theirs.error).toBeNull();
    expect(theirs.data.id).not.toBe(created.id);
    expect((await call('GET', '/api/v2/Webhooks', manager)).body.data.length).toBe(before + 2);

    // The trail tells the replay from the change.
    type Row = { clientId: string; idempotencyKey: string | null; replayed: boolean; outcome: string };
    const rows = await until(async () => {
      const trail = await call('GET', '/api/AuditEvents?operation=registry.Registry.WebhookCreate', auditor);
      const keyed = (trail.body.events as Row[]).filter((e) => e.idempotencyKey === key);
      return keyed.length >= 4 ? keyed : null;
    }, 'the keyed calls in the audit trail');
    expect(rows.map((r) => [r.clientId, r.outcome, r.replayed])).toStrictEqual([
      ['hooks-a', 'applied', false],
      ['hooks-a', 'applied', true],
      ['hooks-a', 'refused', false],
      ['hooks-a2', 'applied', false],
    ]);
    await call('DELETE', `/api/v2/Webhooks/${created.id}?confirm=true`, manager);
    await call('DELETE', `/api/v2/Webhooks/${theirs.data.id}?confirm=true`, colleague);
  });

  it('are the organization’s alone, need webapi.webhooks, and need confirm=true to be removed', async () => {
    const { id } = await registered();
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['GET', `/api/v2/Webhooks/${id}`],
      ['DELETE', `/api/v2/Webhooks/${id}?confirm=true`],
      ['POST', `/api/v2/Webhooks/${id}/Test`],
    ] as const) {
      const theirs = await call(method, path, foreign);
      const none = await call(method, path.replace(id, unknown), foreign);
      expect(theirs.body.error).toEqual({ ...none.body.error, message: none.body.error.message.replace(unknown, id) });
      expect(theirs.body.error.code).toBe('NotFound');
    }
    expect((await call('GET', '/api/v2/Webhooks', foreign)).body.data).toEqual([]);
    const noScope = await call('GET', '/api/v2/Webhooks', reader);
    expect(noScope.body.error).toMatchObject({
      code: 'Forbidden',
      message: 'the access token lacks the webapi.webhooks scope this operation needs',
    });
    expect((await call('DELETE', `/api/v2/Webhooks/${id}`, manager)).body.error).toMatchObject({
      code: 'Validation',
      message: 'confirm: must be true for this destructive operation',
    });
    expect((await call('DELETE', `/api/v2/Webhooks/${id}?confirm=true`, manager)).body.data.id).toBe(id);
    expect((await call('GET', `/api/v2/Webhooks/${id}`, manager)).body.error.code).toBe('NotFound');
  });

  it('change any field, and refuse an empty change', async () => {
    const { id } = await registered();
    const changed = await call('PATCH', `/api/v2/Webhooks/${id}`, manager, {
      eventTypes: ['position.opened'],
      platforms: [PF5_A],
      description: null,
      enabled: false,
    });
    expect(changed.body.data).toMatchObject({
      eventTypes: ['position.opened'],
      platforms: [PF5_A],
      description: null,
      enabled: false,
      disabledReason: 'disabled by a caller',
    });
    expect((await call('PATCH', `/api/v2/Webhooks/${id}`, manager, { enabled: true })).body.data).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
    expect((await call('PATCH', `/api/v2/Webhooks/${id}`, manager, {})).body.error.message).toContain(
      'the body must change at least one field',
    );
  });
});

describe('webhook deliveries', () => {
  it('deliver a test event signed as Standard Webhooks says, and log the attempt', async () => {
    const { id, secret } = await registered();
    receiver.secret = secret;
    receiver.answer = { status: 204 };
    const queued = await call('POST', `/api/v2/Webhooks/${id}/Test`, manager);
    expect(queued.body.data.queued).toBe(1);
    const [eventId] = queued.body.data.eventIds as string[];
    await until(() => receiver.received.some((r) => r.id === eventId), 'the test delivery');
    const got = receiver.received.find((r) => r.id === eventId)!;
    expect(got.verified).toMatchObject({
      id: eventId,
      type: 'webhook.test',
      data: { message: 'a test event, sent on request', requestedBy: 'hooks-a' },
    });
    await until(
      async () => (await call('GET', `/api/v2/Webhooks/${id}/Attempts`, manager)).body.data.length === 1,
      'the attempt logged',
    );
    const [attempt] = (await call('GET', `/api/v2/Webhooks/${id}/Attempts`, manager)).body.data;
    expect(attempt).toMatchObject({
      eventId,
      eventType: 'webhook.test',
      attempt: 1,
      status: 204,
      error: null,
      outcome: 'delivered',
    });
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('try a failing receiver again, later when it asks with Retry-After, until it takes the event', async () => {
    const { id, secret } = await registered();
    receiver.secret = secret;
    receiver.answer = { status: 503, headers: { 'retry-after': '1' } };
    const [eventId] = (await call('POST', `/api/v2/Webhooks/${id}/Test`, manager)).body.data.eventIds;
    await until(() => receiver.received.filter((r) => r.id === eventId).length >= 1, 'the first attempt');
    receiver.answer = { status: 200 };
    await until(
      () => receiver.received.some((r) => r.id === eventId && r.status === 200),
      'the retry after the receiver came back',
      20_000,
    );
    const attempts = (await call('GET', `/api/v2/Webhooks/${id}/Attempts`, manager)).body.data as any[];
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [2, 200, 'delivered'],
      [1, 503, 'retrying'],
    ]);
    expect(attempts[1].error).toBe('the receiver answered 503');
    // The attempts of one event alone.
    const ofEvent = (await call('GET', `/api/v2/Webhooks/${id}/Attempts?eventId=${eventId}`, manager)).body.data;
    expect(ofEvent).toEqual(attempts.filter((a) => a.eventId === eventId));
    expect((await call('GET', `/api/v2/Webhooks/${id}/Attempts?eventId=evt_x`, manager)).body.error.message).toContain(
      'eventId must be an event id',
    );
    // Delivered once: the same webhook-id on both attempts, one of them taken.
    expect(new Set(receiver.received.filter((r) => r.id === eventId).map((r) => r.verified?.id))).toEqual(
      new Set([eventId]),
    );
  });

  it('sign with both secrets during a rotation, and only the new one without a grace period', async () => {
    const { id, secret: old } = await registered();
    const rotated = await call('POST', `/api/v2/Webhooks/${id}/RotateSecret`, manager, { graceHours: 1 });
    const fresh = rotated.body.data.secret as string;
    expect(fresh).not.toBe(old);
    expect(Date.parse(rotated.body.data.previousSecretValidUntil)).toBeGreaterThan(Date.now());
    receiver.secret = fresh;
    receiver.answer = { status: 204 };
    const [eventId] = (await call('POST', `/api/v2/Webhooks/${id}/Test`, manager)).body.data.eventIds;
    await until(() => receiver.received.some((r) => r.id === eventId), 'the delivery after the rotation');
    const got = receiver.received.find((r) => r.id === eventId)!;
    const headers = { 'webhook-id': got.id, 'webhook-timestamp': got.timestamp, 'webhook-signature': got.signature };
    expect(got.signature.split(' ')).toHaveLength(2);
    expect(new Webhook(old).verify(got.body, headers)).toMatchObject({ id: eventId });
    expect(new Webhook(fresh).verify(got.body, headers)).toMatchObject({ id: eventId });
    const again = await call('POST', `/api/v2/Webhooks/${id}/RotateSecret`, manager, { graceHours: 0 });
    expect(again.body.data.previousSecretValidUntil).toBeNull();
    receiver.secret = again.body.data.secret;
    const [second] = (await call('POST', `/api/v2/Webhooks/${id}/Test`, manager)).body.data.eventIds;
    await until(() => receiver.received.some((r) => r.id === second), 'the delivery after the second rotation');
    const last = receiver.received.find((r) => r.id === second)!;
    expect(last.signature.split(' ')).toHaveLength(1);
    expect(last.verified).toMatchObject({ id: second });
  });

  it('disable the endpoint on 410 Gone, keep what follows as dead letters, and redeliver them once enabled', async () => {
    const { id, secret } = await registered();
    receiver.secret = secret;
    receiver.answer = { status: 410 };
    const [gone] = (await call('POST', `/api/v2/Webhooks/${id}/Test`, manager)).body.data.eventIds;
    await until(async () => !(await call('GET', `/api/v2/Webhooks/${id}`, manager)).body.data.enabled, 'the disabling');
    const endpoint = (await call('GET', `/api/v2/Webhooks/${id}`, manager)).body.data;
    expect(endpoint.disabledReason).toMatch(/^410 Gone from the receiver at \d{4}-/);
    const [held] = (await call('POST', `/api/v2/Webhooks/${id}/Test`, manager)).body.data.eventIds;
    await until(
      async () => (await call('GET', `/api/v2/Webhooks/${id}/DeadLetters`, manager)).body.data.length === 2,
      'both events dead letters',
    );
    const dead = (await call('GET', `/api/v2/Webhooks/${id}/DeadLetters`, manager)).body.data as any[];
    expect(dead.map((d) => d.eventId).sort()).toEqual([gone, held].sort());
    expect(receiver.received.filter((r) => r.id === held)).toEqual([]);
    receiver.answer = { status: 204 };
    await call('PATCH', `/api/v2/Webhooks/${id}`, manager, { enabled: true });
    const redelivered = await call('POST', `/api/v2/Webhooks/${id}/Redeliver`, manager, { eventId: held });
    expect(redelivered.body.data).toEqual({ queued: 1, eventIds: [held] });
    await until(() => receiver.received.some((r) => r.id === held && r.status === 204), 'the redelivery');
    expect(
      (await call('GET', `/api/v2/Webhooks/${id}/DeadLetters`, manager)).body.data.map((d: any) => d.eventId),
    ).toEqual([gone]);
    expect(
      (await call('POST', `/api/v2/Webhooks/${id}/Redeliver`, manager, { from: 'x', to: 'y' })).body.error.code,
    ).toBe('Validation');
    // A time range: both events taken in it, sent again with their own ids.
    const range = await call('POST', `/api/v2/Webhooks/${id}/Redeliver`, manager, {
      from: new Date(Date.now() - 10 * 60_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString(),
    });
    expect([...range.body.data.eventIds].sort()).toEqual([gone, held].sort());
    expect(range.body.data.queued).toBe(2);
    await until(() => receiver.received.some((r) => r.id === gone && r.status === 204), 'the range redelivered');
    expect((await call('GET', `/api/v2/Webhooks/${id}/DeadLetters`, manager)).body.data).toEqual([]);
  });
});

describe('webhook bounds', () => {
  it('keep at most 20 endpoints per organization, refusing the next one whole', async () => {
    // The organization of the earlier tests (its sources run already): filled up to 20 with the ones it has.
    const held = (await call('GET', '/api/v2/Webhooks', manager)).body.data.length as number;
    const ids: string[] = [];
    for (let i = held; i < 20; i++) {
      const created = await create({ url: receiver.url, eventTypes: ['account.created'] });
      expect(created.body.error).toBeNull();
      ids.push(created.body.data.id);
    }
    const refused = await create({ url: receiver.url, eventTypes: ['account.created'] });
    expect(refused.body).toMatchObject({
      data: null,
      error: {
        code: 'Validation',
        message: 'the organization has 20 webhook endpoints, the most it may have: remove one first',
      },
    });
    expect((await call('GET', '/api/v2/Webhooks', manager)).body.data).toHaveLength(20);
    for (const id of ids) await call('DELETE', `/api/v2/Webhooks/${id}?confirm=true`, manager);
  });

  it('send a record over 256 KiB without it, and make at most WEBHOOK_MAX_IN_FLIGHT attempts at once', async () => {
    const { id, secret } = await registered(['account.created']);
    receiver.secret = secret;
    receiver.answer = { status: 204 };
    const event = (login: number, data: Record<string, unknown>) => ({
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type: 'account.created',
      platform: PF4_A,
      family: 'PF4',
      login,
      occurredAt: new Date().toISOString(),
      data,
    });
    const large = event(8001, { login: 8001, comment: 'x'.repeat(300 * 1024) });
    await objectCall(edge.miniflare, 'WEBHOOKS', id, 'accept', id, [large]);
    const got = await until(() => receiver.received.find((r) => r.id === large.id), 'the large event');
    expect(got.body.length).toBeLessThan(256 * 1024);
    expect(got.verified).toMatchObject({
      type: 'account.created',
      data: { omitted: 'the record is larger than 262144 bytes: read it through the API' },
    });

    // 24 accounts' events, each answer held 300 ms: never more than 8 attempts at once, and more than one.
    const many = Array.from({ length: 24 }, (_, i) => event(8100 + i, { login: 8100 + i }));
    // Counted: this endpoint's events alone (the receiver also hears the earlier tests' endpoints).
    const ids = new Set(many.map((e) => e.id));
    receiver.holdMs = 300;
    receiver.mostAtOnce = 0;
    receiver.counted = (webhookId) => ids.has(webhookId);
    try {
      await objectCall(edge.miniflare, 'WEBHOOKS', id, 'accept', id, many);
      await until(
        () => many.every((e) => receiver.received.some((r) => r.id === e.id && r.status === 204)),
        'every event delivered',
        30_000,
      );
    } finally {
      receiver.holdMs = 0;
      receiver.counted = undefined;
    }
    expect(receiver.mostAtOnce).toBeGreaterThan(1);
    expect(receiver.mostAtOnce).toBeLessThanOrEqual(8);
  });
});

describe('webhook catch-up', () => {
  it('tries the events that waited out an outage at once when the receiver takes a delivery again', async () => {
    const { id, secret } = await registered(['account.created', 'account.changed']);
    receiver.secret = secret;
    receiver.answer = { status: 503 };
    const event = (login: number, type = 'account.created') => ({
      id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
      type,
      platform: PF4_A,
      family: 'PF4',
      login,
      occurredAt: new Date().toISOString(),
      data: { login },
    });
    const accept = (events: unknown[]) => objectCall(edge.miniflare, 'WEBHOOKS', id, 'accept', id, events);
    type Attempt = { at: string; outcome: string };
    const attemptsOf = async (eventId: string) =>
      (await call('GET', `/api/v2/Webhooks/${id}/Attempts?eventId=${eventId}`, manager)).body.data as Attempt[];
    // An account's first event fails twice while the receiver is down (its third try is then 5 to 10 s away), and
    // its second event waits its turn behind it.
    const [failing, behind] = [event(9001), event(9001, 'account.changed')];
    await accept([failing, behind]);
    const failures = await until(async () => {
      const attempts = await attemptsOf(failing.id);
      return attempts.length >= 2 ? attempts : null;
    }, 'two failed attempts');
    const lastFailure = Date.parse(failures[0].at);
    // Back: another account's event is taken at once, and both of the first account's follow without the backoff.
    receiver.answer = { status: 204 };
    await accept([event(9002)]);
    const deliveredAt = async (e: { id: string }) =>
      until(async () => {
        const [newest] = await attemptsOf(e.id);
        return newest?.outcome === 'delivered' ? Date.parse(newest.at) : null;
      }, `${e.id} delivered`);
    const [first, second] = [await deliveredAt(failing), await deliveredAt(behind)];
    expect(second).toBeGreaterThanOrEqual(first);
    // Its own schedule would have tried the first event again no sooner than 5 s after its second failure.
    expect(second - lastFailure).toBeLessThan(5000);
    expect((await attemptsOf(behind.id)).map((a) => a.outcome)).toEqual(['delivered']);
  });
});

describe('webhook sources', () => {
  it("start for an endpoint registered outside the API at the worker's next cron, and stop once none hears the platform", async () => {
    const db = await edge.db();
    const store = new WebhookStore(db);
    const { endpoint } = await store.add(
      ORG_B,
      { url: receiver.url, eventTypes: ['trade.closed'], platforms: [PF4_B] },
      () => Promise.resolve(null),
    );
    const stats = () => objectCall<{ active: boolean }>(edge.miniflare, 'WEBHOOK_SOURCES', PF4_B, 'stats');
    expect((await stats()).active).toBe(false);
    const worker = await edge.miniflare.getWorker('edge');
    await worker.scheduled({ cron: '* * * * *' });
    await until(async () => (await stats()).active, 'the source started by the cron');
    await store.remove(ORG_B, endpoint.id);
    expect(await objectCall(edge.miniflare, 'WEBHOOK_SOURCES', PF4_B, 'recheck')).toBe(false);
    expect((await stats()).active).toBe(false);
  });
});
