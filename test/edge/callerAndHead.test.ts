/**
 * What the edge tells the broker of a call's caller, and what it does with HEAD, in real workerd against a scripted
 * broker: every call frame names its API client (`client`, the broker's unit of fair use of a manager session), keyed
 * or not; HEAD on an operation is refused 405 naming the method to use, and nothing reaches the broker (Hono would
 * run the GET handler for it: a sync read's rows or a live round trip lost to a caller that reads no body).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PF4_A, type TestEdge } from '../support/edge.js';
import { edgeWithFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;
let token: string;
const setup = edgeWithFakeBroker();
beforeAll(() => {
  ({ edge, broker, token } = setup);
});

const v2 = `/api/v2/PF4/${PF4_A}`;
const v1 = `/api/PF4/${PF4_A}`;
const request = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
  fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('the caller in call frames', () => {
  it('names the API client in every call frame, keyed or not', async () => {
    broker.script.set('ServerTime', { reply: { ok: true, data: '2026-12-01T00:00:00Z' } });
    broker.script.set('PF4.UserRecordNew', { reply: { ok: true, data: { login: 5, group: 'demo', name: 'A' } } });
    expect((await request('GET', `${v2}/ServerTime`)).status).toBe(200);
    const created = await request(
      'POST',
      `${v2}/UserRecordNew`,
      { 'idempotency-key': `caller-${Date.now()}` },
      { group: 'demo', name: 'A' },
    );
    expect(((await created.json()) as { error: unknown }).error).toBeNull();
    expect(broker.frames.map((f) => [f.op, f.client])).toStrictEqual([
      ['ServerTime', 'client-a'],
      ['PF4.UserRecordNew', 'client-a'],
    ]);
    expect(broker.frames[1].callId).toEqual(expect.any(String));
  });
});

describe('a "not now" refusal under an Idempotency-Key', () => {
  it('is answered with its Retry-After and not kept for the key: a retry with the key is sent afresh', async () => {
    let calls = 0;
    broker.script.set('PF4.UserRecordNew', {
      reply: () =>
        ++calls === 1
          ? {
              ok: false,
              error: {
                code: 'PF4Error',
                managerCode: 7,
                message: "the trade platform's manager session is shared by 2 callers; retry after 1 s",
              },
              retryAfterSeconds: 1,
            }
          : { ok: true, data: { login: 9, group: 'demo', name: 'A' } },
    });
    const key = { 'idempotency-key': `not-now-${Date.now()}` };
    const refused = await request('POST', `${v2}/UserRecordNew`, key, { group: 'demo', name: 'A' });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'PF4Error',
      message: expect.stringContaining('retry after 1 s'),
    });
    const retried = await request('POST', `${v2}/UserRecordNew`, key, { group: 'demo', name: 'A' });
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    expect(((await retried.json()) as { data: unknown }).data).toStrictEqual({ login: 9, group: 'demo', name: 'A' });
    const frames = broker.framesFor('PF4.UserRecordNew');
    expect(frames).toHaveLength(2);
    expect(frames[0].callId).not.toBe(frames[1].callId);
  });
});

describe('a refusal because the trading server does not implement the call, under an Idempotency-Key', () => {
  it('is not kept for the key: once the bridge declares the command, a retry with the key is sent afresh', async () => {
    let calls = 0;
    broker.script.set('PF4.UserRecordNew', {
      reply: () =>
        ++calls === 1
          ? {
              ok: false,
              error: {
                code: 'PF4Error',
                managerCode: null,
                message:
                  'the trading server does not implement UserRecordNew (not among the commands its login declared)',
              },
              notImplemented: true,
            }
          : { ok: true, data: { login: 11, group: 'demo', name: 'B' } },
    });
    const key = { 'idempotency-key': `not-implemented-${Date.now()}` };
    const refused = await request('POST', `${v2}/UserRecordNew`, key, { group: 'demo', name: 'B' });
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'PF4Error',
      message: expect.stringContaining('does not implement UserRecordNew'),
    });
    const retried = await request('POST', `${v2}/UserRecordNew`, key, { group: 'demo', name: 'B' });
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
    expect(((await retried.json()) as { data: unknown }).data).toStrictEqual({ login: 11, group: 'demo', name: 'B' });
    expect(broker.framesFor('PF4.UserRecordNew').length).toBeGreaterThanOrEqual(2);
  });
});

describe('HEAD on an operation', () => {
  it('is refused 405 with Allow: GET, on v1 and v2, and sends nothing to the broker', async () => {
    broker.script.set('PF4.UsersSyncRead', { reply: { ok: true, data: [] } });
    for (const path of [`${v2}/UsersSyncRead?limit=100`, `${v2}/ServerTime`, `${v1}/ServerTime`]) {
      const res = await request('HEAD', path);
      expect([path, res.status, res.headers.get('allow'), await res.text()]).toStrictEqual([path, 405, 'GET', '']);
      expect(res.headers.get('x-request-timeout-applied')).toMatch(/^\d+$/);
    }
    expect(broker.frames).toStrictEqual([]);
    // GET itself still reads.
    expect((await request('GET', `${v2}/UsersSyncRead?limit=100`)).status).toBe(200);
    expect(broker.framesFor('PF4.UsersSyncRead')).toHaveLength(1);
  });

  it('still asks for a token first', async () => {
    const res = await fetch(new URL(`${v2}/ServerTime`, edge.url), { method: 'HEAD' });
    expect(res.status).toBe(401);
    expect(broker.frames).toStrictEqual([]);
  });
});
