/**
 * The audit trail through the real worker in workerd against a scripted broker: every call that is not a read is
 * recorded in its organization's trail after its answer, with its outcome, refused ones too, with secrets redacted; an
 * unknown outcome is completed when a retry under its Idempotency-Key learns it; the trail is read by a client holding
 * webapi.audit, filtered and paged, and exported as CSV; another organization's clients see none of it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ORG_A, ORG_B, PF4_A } from '../support/edge.js';
import { edgeWithFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import { until } from '../support/until.js';
import { objectCall } from '../../launcher/edge.js';
import type { TestEdge } from '../support/edge.js';

const setup = edgeWithFakeBroker({ REGISTRY_CACHE_SECONDS: '0' });
let edge: TestEdge;
let broker: FakeBroker;
let writer: string;
let reader: string;
let auditor: string;
let foreignAuditor: string;

const v2 = `/api/v2/PF4/${PF4_A}`;

beforeAll(async () => {
  ({ edge, broker } = setup);
  writer = await edge.token({ client_id: 'audited-writer' });
  reader = await edge.token({ client_id: 'audited-reader', scope: 'webapi' });
  await edge.seedClient('auditor', 'unused', ORG_A, 'webapi webapi.audit');
  auditor = await edge.token({ client_id: 'auditor', scope: 'webapi webapi.audit' });
  await edge.seedClient('foreign-auditor', 'unused', ORG_B, 'webapi webapi.audit');
  foreignAuditor = await edge.token({ client_id: 'foreign-auditor', org: ORG_B, scope: 'webapi webapi.audit' });
});

async function call(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* CSV */
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** The trail's rows of one trace (each call has its own), read as the auditor. */
async function rowsOf(traceId: string): Promise<any[]> {
  const page = await call('GET', '/api/AuditEvents?limit=1000', auditor);
  expect(page.status).toBe(200);
  return (page.body.events as any[]).filter((e) => e.traceId === traceId);
}

const traceOf = (answer: { body: any }) => answer.body.meta.activityId as string;

/** The trail's rows of the registry's admin change, read as the auditor. */
async function adminRows(): Promise<number> {
  const page = await call('GET', '/api/AuditEvents?operation=registry.Registry.ClientAllowedNetworks', auditor);
  return (page.body.events as unknown[]).length;
}

describe('recording', () => {
  it('records a forwarded call after its answer: who, from where, what, on which platform, how it ended', async () => {
    broker.script.set('PF4.UserRecordNew', { hold: true });
    const key = `audit-${randomUUID()}`;
    const answered = call(
      'POST',
      `${v2}/UserRecordNew`,
      writer,
      { group: 'demo', name: 'Ann' },
      { 'Idempotency-Key': key },
    );
    await until(() => broker.held.length === 1, 'the held call');
    const traceId = broker.held[0].traceId as string;
    broker.answerHeld({ ok: true, data: { login: 5001, group: 'demo', name: 'Ann' } });
    const answer = await answered;
    expect(answer.body.data).toMatchObject({ login: 5001 });
    expect(traceOf(answer)).toBe(traceId);
    const rows = await until(async () => {
      const found = await rowsOf(traceId);
      return found.length > 0 ? found : null;
    }, 'the row');
    expect(rows).toEqual([
      {
        id: expect.any(Number),
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        organizationId: ORG_A,
        clientId: 'audited-writer',
        address: null,
        operation: 'v2.PF4.UserRecordNew',
        platform: PF4_A,
        traceId,
        idempotencyKey: key,
        outcome: 'applied',
        code: null,
        completedAt: expect.any(String),
        args: JSON.stringify({ body: { group: 'demo', name: 'Ann' } }),
        replayed: false,
      },
    ]);
    expect(Date.parse(rows[0].completedAt)).toBeGreaterThanOrEqual(Date.parse(rows[0].at));
  });

  it('records refused calls with their code, sending nothing: bad input, a missing scope, an unknown platform', async () => {
    const bad = await call('POST', `${v2}/UserRecordNew`, writer, { group: 'demo', name: 'Ann', nonsense: 1 });
    const readOnly = await call('POST', `${v2}/UserRecordNew`, reader, { group: 'demo', name: 'Ann' });
    const unknown = await call('POST', `/api/v2/PF4/${randomUUID()}/UserRecordNew`, writer, { group: 'demo' });
    expect(broker.framesFor('PF4.UserRecordNew')).toHaveLength(0);
    for (const [answer, client, code] of [
      [bad, 'audited-writer', 'Validation'],
      [readOnly, 'audited-reader', 'Forbidden'],
      [unknown, 'audited-writer', 'NotFound'],
    ] as const) {
      await until(async () => (await rowsOf(traceOf(answer))).length === 1, 'the refused row');
      expect((await rowsOf(traceOf(answer)))[0]).toMatchObject({ clientId: client, outcome: 'refused', code });
    }
  });

  it('records an outcome that is not known as unknown, and completes it when a retry under its key learns it', async () => {
    broker.script.set('PF4.UserRecordNew', {
      reply: {
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message: 'timed out' },
        outcome: 'unknown',
        timedOut: true,
      },
    });
    const key = `lost-${randomUUID()}`;
    const body = { group: 'demo', name: 'Lost' };
    const lost = await call('POST', `${v2}/UserRecordNew`, writer, body, { 'Idempotency-Key': key });
    expect(lost.headers.get('x-request-outcome')).toBe('unknown');
    await until(async () => (await rowsOf(traceOf(lost)))[0]?.outcome === 'unknown', 'the unknown row');
    expect((await rowsOf(traceOf(lost)))[0].code).toBe('NoConnect');

    // The broker learns the first call's outcome: a retry under the key is answered it, and the first row with it.
    broker.script.set('#outcome', {
      reply: { ok: true, data: { state: 'settled', result: { ok: true, data: { login: 5003, ...body } } } },
    });
    const retry = await call('POST', `${v2}/UserRecordNew`, writer, body, { 'Idempotency-Key': key });
    expect(retry.body).toMatchObject({ data: { login: 5003 }, error: null });
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    await until(async () => (await rowsOf(traceOf(lost)))[0]?.outcome === 'applied', 'the completed row');
    expect((await rowsOf(traceOf(lost)))[0]).toMatchObject({
      outcome: 'applied',
      code: null,
      idempotencyKey: key,
      replayed: false,
    });
    // The retry changed nothing again: its row (its own trace, though the replayed body names the first call's) says
    // it was the first call's answer, replayed.
    const retryTrace = retry.headers.get('traceparent')!.split('-')[1];
    expect(retryTrace).not.toBe(traceOf(lost));
    await until(async () => (await rowsOf(retryTrace)).length === 1, 'the retry row');
    expect((await rowsOf(retryTrace))[0]).toMatchObject({ outcome: 'applied', idempotencyKey: key, replayed: true });
  });

  it('never stores a secret: password bodies and secret members are redacted', async () => {
    broker.script.set('PF4.UserPasswordSet', { reply: { ok: true, data: true } });
    broker.script.set('PF4.ExternalCommandJSON', { reply: { ok: true, data: { done: true } } });
    const set = await call('POST', `${v2}/UserPasswordSet/5002`, writer, 'Secret-Pass-1');
    const command = await call('POST', `${v2}/ExternalCommandJSON?confirm=true`, writer, {
      smtp: { host: 'mail.example', password: 'Secret-Pass-2', port: 25 },
      apiKey: 'Secret-Key-3',
      authPasswordMin: 8,
    });
    expect(set.body.data).toBe(true);
    expect(command.body.error).toBeNull();
    await until(
      async () => (await rowsOf(traceOf(command))).length + (await rowsOf(traceOf(set))).length === 2,
      'both rows',
    );
    const rows = [...(await rowsOf(traceOf(set))), ...(await rowsOf(traceOf(command)))];
    expect(rows.map((r) => JSON.parse(r.args))).toEqual([
      { login: 5002, body: '[redacted]' },
      {
        body: {
          smtp: { host: 'mail.example', password: '[redacted]', port: 25 },
          apiKey: '[redacted]',
          authPasswordMin: 8,
        },
      },
    ]);
    const everything = await call('GET', '/api/AuditEvents/Export', auditor);
    expect(everything.text).not.toMatch(/Secret-(Pass|Key)/);
  });

  it("records the registry's admin changes", async () => {
    const changed = await call('PUT', '/api/Clients/audited-reader/AllowedNetworks', writer, {
      allowedNetworks: ['203.0.113.0/24'],
    });
    expect(changed.status).toBe(200);
    const events = await until(async () => {
      const found = (await call('GET', '/api/AuditEvents?operation=registry.Registry.ClientAllowedNetworks', auditor))
        .body.events as any[];
      return found.length > 0 ? found : null;
    }, 'the admin change row');
    expect(events.at(-1)).toMatchObject({
      clientId: 'audited-writer',
      operation: 'registry.Registry.ClientAllowedNetworks',
      platform: null,
      outcome: 'applied',
      args: JSON.stringify({ clientId: 'audited-reader', body: { allowedNetworks: ['203.0.113.0/24'] } }),
    });
    await call('PUT', '/api/Clients/audited-reader/AllowedNetworks', writer, { allowedNetworks: [] });
    // Rows are written after their answers: the tests that read the whole trail start once this last one is in.
    await until(async () => (await adminRows()) === 2, 'the last admin change row');
  });
});

describe('reading', () => {
  it('pages oldest first, filters by outcome, client, operation, platform and time', async () => {
    const all = (await call('GET', '/api/AuditEvents', auditor)).body.events as any[];
    expect(all.length).toBeGreaterThanOrEqual(8);
    expect(all.map((e) => e.id)).toEqual([...all.map((e) => e.id)].sort((a, b) => a - b));

    const walked: number[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: any = (await call('GET', `/api/AuditEvents?limit=3${cursor ? `&cursor=${cursor}` : ''}`, auditor))
        .body;
      expect(page.events.length).toBeLessThanOrEqual(3);
      walked.push(...page.events.map((e: any) => e.id));
      cursor = page.nextCursor;
    }
    expect(walked).toEqual(all.map((e) => e.id));

    const refused = (await call('GET', '/api/AuditEvents?outcome=refused', auditor)).body.events as any[];
    expect(refused.length).toBeGreaterThanOrEqual(3);
    expect(refused.every((e) => e.outcome === 'refused')).toBe(true);
    const byReader = (await call('GET', '/api/AuditEvents?clientId=audited-reader', auditor)).body.events as any[];
    expect(byReader.map((e) => [e.clientId, e.code])).toEqual([['audited-reader', 'Forbidden']]);
    const onPlatform = (await call('GET', `/api/AuditEvents?platform=${PF4_A}`, auditor)).body.events as any[];
    expect(onPlatform.length).toBeGreaterThan(0);
    expect(onPlatform.every((e) => e.platform === PF4_A)).toBe(true);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await call('GET', `/api/AuditEvents?from=${later}`, auditor)).body.events).toEqual([]);
    expect((await call('GET', `/api/AuditEvents?to=${all[1].at}`, auditor)).body.events.length).toBeLessThan(
      all.length,
    );
  });

  it('exports CSV, every row once, quoted as RFC 4180 says', async () => {
    const all = (await call('GET', '/api/AuditEvents?limit=1000', auditor)).body.events as any[];
    const csv = await call('GET', '/api/AuditEvents/Export', auditor);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-/);
    const lines = csv.text.split('\r\n');
    expect(lines[0]).toBe(
      'id,at,organizationId,clientId,address,operation,platform,traceId,idempotencyKey,outcome,code,completedAt,args,replayed',
    );
    expect(lines.at(-1)).toBe('');
    expect(lines.length - 2).toBe(all.length);
    const first = all[0];
    expect(lines[1].startsWith(`${first.id},${first.at},${ORG_A},${first.clientId},,${first.operation},`)).toBe(true);
    expect(lines[1].endsWith(`,"${first.args.replaceAll('"', '""')}",${first.replayed}`)).toBe(true);
    const refusedOnly = await call('GET', '/api/AuditEvents/Export?outcome=refused', auditor);
    expect(
      refusedOnly.text
        .split('\r\n')
        .slice(1, -1)
        .every((l) => l.includes(',refused,')),
    ).toBe(true);
  });

  it('is for webapi.audit within the organization, and its filters are checked', async () => {
    const refused = await call('GET', '/api/AuditEvents', writer);
    expect(refused).toMatchObject({
      status: 403,
      body: {
        errorCode: 'Forbidden',
        errorDescription: 'the access token lacks the webapi.audit scope this operation needs',
      },
    });
    expect((await call('GET', '/api/AuditEvents/Export', writer)).status).toBe(403);
    expect((await call('GET', '/api/AuditEvents', foreignAuditor)).body).toEqual({ events: [], nextCursor: null });
    expect((await call('GET', '/api/AuditEvents?outcome=maybe', auditor)).body.errorDescription).toBe(
      'outcome: outcome must be one of applied, refused, unknown',
    );
    expect((await call('GET', '/api/AuditEvents?limit=5000', auditor)).body.errorDescription).toBe(
      'limit: limit must be at most 1000',
    );
    expect((await call('GET', '/api/AuditEvents?from=yesterday', auditor)).body.errorDescription).toBe(
      'from: from must be an ISO 8601 date-time',
    );
  });

  it("keeps the keys of the registry's own changes apart from the ledgers': neither completes the other's rows", async () => {
    const org = randomUUID();
    const row = (operation: string, outcome: string, replayed: boolean, key = 'shared-key') => ({
      uid: randomUUID(),
      at: new Date().toISOString(),
      organizationId: org,
      clientId: 'keyed-client',
      address: null,
      operation,
      platform: null,
      traceId: randomUUID(),
      idempotencyKey: key,
      outcome,
      code: outcome === 'unknown' ? 'NoConnect' : null,
      args: '{}',
      replayed,
    });
    const trail = (method: string, ...args: unknown[]) =>
      objectCall<any>(edge.miniflare, 'AUDIT', `audit:${org}`, method, ...args);
    const outcomes = async () =>
      ((await trail('page', {}, 0, 100)).events as Array<{ operation: string; outcome: string }>).map((e) => [
        e.operation,
        e.outcome,
      ]);
    // A trading call left unknown, a webhook change cut off (unknown), then each key's text replayed by the other kind.
    await trail('record', [
      row('v2.PF4.UserDepositChange', 'unknown', false),
      row('registry.Registry.WebhookCreate', 'unknown', false),
    ]);
    await trail('record', [row('registry.Registry.WebhookTest', 'applied', true)]);
    expect(await outcomes()).toEqual([
      ['v2.PF4.UserDepositChange', 'unknown'],
      ['registry.Registry.WebhookCreate', 'unknown'],
      ['registry.Registry.WebhookTest', 'applied'],
    ]);
    await trail('settle', 'keyed-client', 'shared-key', 'applied', null);
    expect((await outcomes()).slice(0, 2)).toEqual([
      ['v2.PF4.UserDepositChange', 'applied'],
      ['registry.Registry.WebhookCreate', 'unknown'],
    ]);
    // A row of the webhook change recorded after the ledger vouched for the key is not completed by it.
    await trail('record', [row('registry.Registry.WebhookUpdate', 'unknown', false)]);
    expect((await outcomes()).at(-1)).toEqual(['registry.Registry.WebhookUpdate', 'unknown']);
  });

  it('deletes the rows older than AUDIT_RETENTION_DAYS (400 by default), the work of its daily alarm, and keeps the rest', async () => {
    const org = randomUUID();
    const row = (daysAgo: number) => ({
      uid: randomUUID(),
      at: new Date(Date.now() - daysAgo * 86_400_000).toISOString(),
      organizationId: org,
      clientId: 'retained',
      address: null,
      operation: 'v2.PF4.UserDepositChange',
      platform: null,
      traceId: `kept-${daysAgo}`,
      idempotencyKey: null,
      outcome: 'applied',
      code: null,
      args: '{}',
      replayed: false,
    });
    const trail = (method: string, ...args: unknown[]) =>
      objectCall<any>(edge.miniflare, 'AUDIT', `audit:${org}`, method, ...args);
    await trail('record', [row(401), row(399), row(0)]);
    expect(await trail('expire')).toBe(true);
    expect(((await trail('page', {}, 0, 100)).events as Array<{ traceId: string }>).map((e) => e.traceId)).toEqual([
      'kept-399',
      'kept-0',
    ]);
  });

  // Last: it fills the other organization's trail, which the test before reads as empty.
  it('exports a trail of many pages whole and in order, a page of 1,000 rows at a time', async () => {
    const rows = Array.from({ length: 2345 }, (_, i) => ({
      uid: randomUUID(),
      at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
      organizationId: ORG_B,
      clientId: 'foreign-auditor',
      address: '198.51.100.7',
      operation: 'v2.PF4.UserDepositChange',
      platform: null,
      traceId: `trace-${i}`,
      idempotencyKey: null,
      outcome: 'applied',
      code: null,
      args: JSON.stringify({ login: 7, body: { amount: i, comment: 'a, "quoted" comment' } }),
      sent: true,
    }));
    for (let at = 0; at < rows.length; at += 500)
      await objectCall(edge.miniflare, 'AUDIT', `audit:${ORG_B}`, 'record', rows.slice(at, at + 500));
    const csv = await call('GET', '/api/AuditEvents/Export?to=2026-12-01T00:00:00Z', foreignAuditor);
    const lines = csv.text.split('\r\n').slice(1, -1);
    expect(lines).toHaveLength(2345);
    expect(lines.map((l) => l.split(',')[7])).toEqual(rows.map((r) => r.traceId));
    expect(lines[5]).toContain(',"{""login"":7,""body"":{""amount"":5,""comment"":""a, \\""quoted\\"" comment""}}"');
    // A second record of the same rows (a batch retried) stores nothing twice.
    await objectCall(edge.miniflare, 'AUDIT', `audit:${ORG_B}`, 'record', rows.slice(0, 10));
    const page = (await call('GET', '/api/AuditEvents?limit=1000&cursor=2000', foreignAuditor)).body;
    expect(page.events.map((e: any) => e.traceId)).toEqual(rows.slice(2000).map((r) => r.traceId));
    expect(page.nextCursor).toBeNull();
  });
});
