/**
 * The catalog routes' own deadline and failure answers (workers/api/catalogRoutes.ts), in a Hono app in this process
 * with gateway objects that never answer or that fail: what workerd cannot be made to do on purpose. The platform is
 * taken from the registry cache, filled beforehand, so no D1 is needed. Also the query parse of a request URL, and
 * bodies refused before they are parsed (not UTF-8, a read that fails midway, too deep to read exactly).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Hono } from 'hono';
import type { AppEnv, Env } from '../env.js';
import { catalogRoutes, EDGE_GRACE_MS, forwardedOperations, groupOfPath, honoPath, queryOf } from './catalogRoutes.js';
import { LINK_GRACE_MS } from '../gateway/index.js';
import { catalog } from '../../shared/catalog/index.js';
import { cachedPlatform } from '../registry/platformCache.js';
import { NOT_UTF8_BODY, UNREADABLE_BODY } from './requestBody.js';

// The routes reach the gateway's Durable Object classes; their base class is all that Node lacks.
vi.mock('cloudflare:workers', () => ({ DurableObject: class {} }));

const ORG = '0a000000-0000-4000-8000-00000000000a';
const PLATFORM = '0b000000-0000-4000-8000-00000000000b';
const TRACE = '0123456789abcdef0123456789abcdef';

/** Gateway object stubs whose one RPC does what `call` does; every call's argument is kept. */
function objects(call: (arg: unknown) => Promise<unknown>, vars: Record<string, string> = {}) {
  const calls: unknown[] = [];
  /** The binding and object name of each call, in order. */
  const via: string[] = [];
  const namespace = (binding: string) => ({
    idFromName: (name: string) => ({ name }),
    get: (id: { name: string }) => ({
      call: (arg: unknown) => {
        calls.push(arg);
        via.push(`${binding} ${id.name}`);
        return call(arg);
      },
    }),
  });
  return {
    calls,
    via,
    // The audit trail is left out here (test/edge/auditTrail.test.ts runs it in workerd).
    env: {
      LINKS: namespace('LINKS'),
      IDEMPOTENCY: namespace('IDEMPOTENCY'),
      AUDIT_RETENTION_DAYS: '0',
      ...vars,
    } as unknown as Env,
  };
}

function app() {
  const a = new Hono<AppEnv>();
  a.use('*', async (c, next) => {
    c.set('traceId', TRACE);
    c.set('caller', { clientId: 'client-a', organizationId: ORG, scopes: ['webapi', 'webapi.write', 'webapi.admin'] });
    await next();
  });
  a.route('/', catalogRoutes());
  return a;
}

let errors: string[];
beforeEach(async () => {
  vi.useFakeTimers();
  errors = [];
  vi.spyOn(console, 'error').mockImplementation((line: string) => {
    errors.push(line);
  });
  // The registry cache holds the platform for the test's (fake) seconds.
  await cachedPlatform(ORG, PLATFORM, 3600, () =>
    Promise.resolve({
      platform: {
        id: PLATFORM,
        name: 'P',
        type: 'PF4',
        organizationId: ORG,
        organization: { id: ORG, name: 'O' } as never,
        created: '2026-01-01T00:00:00Z',
      },
      brokerUrls: null,
      homeRegion: null,
      jurisdiction: null,
    }),
  );
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('the edge deadline', () => {
  it('answers a read NoConnect, timed out, once the budget and the grace pass without an answer from the object', async () => {
    const { env, calls } = objects(() => new Promise(() => {}));
    const pending = app().request(`/api/v2/PF4/${PLATFORM}/ServerTime`, { headers: { 'x-request-timeout': '3' } }, env);
    await vi.advanceTimersByTimeAsync(3000 + EDGE_GRACE_MS - 1);
    let settled = false;
    void Promise.resolve(pending).then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-timeout-applied')).toBe('3');
    expect(res.headers.get('x-request-outcome')).toBeNull();
    expect(await res.json()).toStrictEqual({
      data: null,
      error: { code: 'NoConnect', managerCode: null, message: 'no answer from the trading platform within 3 s' },
      meta: { activityId: TRACE },
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      operationId: 'v2.PF4.ServerTime',
      platform: PLATFORM,
      timeoutMs: 3000,
      mutating: false,
      brokerUrls: ['http://127.0.0.1:8790'],
    });
  });

  it('answers a v1 read 504 with Retry-After 1, the deadline being a time-out', async () => {
    const { env } = objects(() => new Promise(() => {}));
    const pending = app().request(`/api/PF4/${PLATFORM}/ServerTime?requestTimeout=1.5`, {}, env);
    await vi.advanceTimersByTimeAsync(1500 + EDGE_GRACE_MS);
    const res = await pending;
    expect(res.status).toBe(504);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ errorDescription: 'no answer from the trading platform within 1.5 s' });
  });

  it('answers a write with its outcome unknown', async () => {
    const { env, calls } = objects(() => new Promise(() => {}));
    const pending = app().request(`/api/v2/PF4/${PLATFORM}/CfgDeleteHoliday/2`, { method: 'POST' }, env);
    await vi.advanceTimersByTimeAsync(60_000 + EDGE_GRACE_MS);
    const res = await pending;
    expect(res.headers.get('x-request-outcome')).toBe('unknown');
    expect((await res.json<{ error: unknown }>()).error).toStrictEqual({
      code: 'NoConnect',
      managerCode: null,
      message: `no answer from the trading platform within ${(calls[0] as { timeoutMs: number }).timeoutMs / 1000} s`,
    });
    expect(calls[0]).toMatchObject({ operationId: 'v2.PF4.CfgDeleteHoliday', mutating: true, args: { pos: 2 } });
  });

  it("answers the object's own answer when it comes first, and leaves no timer behind", async () => {
    const answer = {
      status: 200,
      body: '{"data":"2030-01-01T00:00:00Z","error":null,"meta":{"activityId":"x"}}',
      headers: {},
    };
    const { env } = objects(() => Promise.resolve(answer));
    const res = await app().request(`/api/v2/PF4/${PLATFORM}/ServerTime`, {}, env);
    expect(await res.text()).toBe(answer.body);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the platform in the path', () => {
  it('refuses anything but a whole uuid before looking the platform up or calling an object', async () => {
    const { env, calls } = objects(() => Promise.reject(new Error('not to be called')));
    for (const id of [`${PLATFORM}0`, `0${PLATFORM}`, PLATFORM.replace(/-/g, ''), 'PF4']) {
      const res = await app().request(`/api/v2/PF4/${id}/ServerTime`, {}, env);
      expect(await res.json(), id).toStrictEqual({
        data: null,
        error: { code: 'Validation', managerCode: null, message: 'tradePlatform: must be a uuid' },
        meta: { activityId: TRACE },
      });
    }
    expect(calls).toStrictEqual([]);
  });

  it('takes the uuid in any case', async () => {
    const { env, calls } = objects(() => Promise.resolve({ status: 200, body: '{}', headers: {} }));
    const res = await app().request(`/api/v2/PF4/${PLATFORM.toUpperCase()}/ServerTime`, {}, env);
    expect(await res.text()).toBe('{}');
    expect(calls).toHaveLength(1);
  });
});

describe('the routes', () => {
  it('forward every catalog entry that reaches a trading server, and no local one', () => {
    const forwarded = forwardedOperations();
    expect(forwarded.filter((e) => e.read === 'local')).toStrictEqual([]);
    expect(new Set(forwarded)).toStrictEqual(new Set(catalog.filter((e) => e.read !== 'local')));
    expect(forwarded).toHaveLength(new Set(forwarded).size);
  });

  it("wait for a gateway object a second past the object's own wait for the broker's time-out answer", () => {
    expect(EDGE_GRACE_MS).toBe(LINK_GRACE_MS + 1000);
  });
});

describe('the body and the answer', () => {
  it('reads an empty or blank body as no body (the body is required), and anything else unparsable as malformed', async () => {
    const { env, calls } = objects(() => Promise.reject(new Error('not to be called')));
    const post = async (body: string) => {
      const res = await app().request(
        `/api/v2/PF4/${PLATFORM}/UserRecordNew`,
        { method: 'POST', body, headers: { 'content-type': 'application/json' } },
        env,
      );
      return (await res.json<{ error: { message: string } }>()).error.message;
    };
    expect(await post('')).toBe('body: Invalid input: expected object, received undefined');
    expect(await post(' \n\t ')).toBe('body: Invalid input: expected object, received undefined');
    expect(await post('{"group":')).toBe('body: must be well-formed JSON');
    expect(calls).toStrictEqual([]);
  });

  const validationOf = async (res: Response) => (await res.json<{ error: { code: string; message: string } }>()).error;

  it('refuses a body that is not UTF-8, naming the body, and sends nothing; a UTF-8 body with a byte order mark is read', async () => {
    const { env, calls } = objects(() => Promise.resolve({ status: 200, body: '{}', headers: {} }));
    const post = (body: Uint8Array) =>
      app().request(
        `/api/v2/PF4/${PLATFORM}/UserRecordNew`,
        { method: 'POST', body, headers: { 'content-type': 'application/json' } },
        env,
      );
    const utf8 = (text: string) => new TextEncoder().encode(text);
    for (const bad of [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]]) {
      const body = new Uint8Array([...utf8('{"group":"demo","name":"'), ...bad, ...utf8('"}')]);
      expect(await validationOf(await post(body)), String(bad)).toStrictEqual({
        code: 'Validation',
        managerCode: null,
        message: NOT_UTF8_BODY,
      });
    }
    expect(NOT_UTF8_BODY).toBe('body: must be UTF-8 text (it holds bytes that are not UTF-8)');
    expect(calls).toStrictEqual([]);
    expect(
      await (await post(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('{"group":"demo","name":"Zoë"}')]))).text(),
    ).toBe('{}');
    expect(calls).toMatchObject([{ args: { body: { group: 'demo', name: 'Zoë' } } }]);
  });

  it('refuses a body whose read fails midway (v2 envelope, v1 400) and logs it at debug level, not as an error', async () => {
    const { env, calls } = objects(() => Promise.reject(new Error('not to be called')));
    const debug: string[] = [];
    vi.spyOn(console, 'debug').mockImplementation((line: string) => {
      debug.push(line);
    });
    const failing = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"group":"de'));
          controller.error(new Error('Network connection lost.'));
        },
      });
    const post = (path: string) =>
      app().request(
        path,
        {
          method: 'POST',
          body: failing(),
          duplex: 'half',
          headers: { 'content-type': 'application/json' },
        } as RequestInit,
        env,
      );
    const v2 = await post(`/api/v2/PF4/${PLATFORM}/UserRecordNew`);
    expect(v2.status).toBe(200);
    expect(await v2.json()).toStrictEqual({
      data: null,
      error: { code: 'Validation', managerCode: null, message: UNREADABLE_BODY },
      meta: { activityId: TRACE },
    });
    const v1 = await post(`/api/PF4/${PLATFORM}/UserRecordNew`);
    expect(v1.status).toBe(400);
    expect(await v1.json()).toStrictEqual({
      errorType: 'Validation',
      errorCode: 'Validation',
      errorDescription: UNREADABLE_BODY,
    });
    expect(calls).toStrictEqual([]);
    expect(errors).toStrictEqual([]);
    expect(debug.map((line) => JSON.parse(line))).toStrictEqual(
      Array(2).fill({
        level: 'debug',
        msg: 'request body not read to its end',
        traceId: TRACE,
        error: 'Error: Network connection lost.',
      }),
    );
  });

  it('refuses a body too deep to read its big integers exactly as too deep, not as malformed', async () => {
    const { env, calls } = objects(() => Promise.reject(new Error('not to be called')));
    const body = `{"group":"demo","name":${'['.repeat(600)}12345678901234567890${']'.repeat(600)}}`;
    const res = await app().request(
      `/api/v2/PF4/${PLATFORM}/UserRecordNew`,
      { method: 'POST', body, headers: { 'content-type': 'application/json' } },
      env,
    );
    expect(await validationOf(res)).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'body: nests deeper than 32 levels',
    });
    expect(calls).toStrictEqual([]);
  });

  it("answers JSON in UTF-8 with the budget that applied, and the object's own headers", async () => {
    const { env } = objects(() =>
      Promise.resolve({
        status: 200,
        body: '{"data":1,"error":null,"meta":{"activityId":"t"}}',
        headers: { 'x-request-outcome': 'unknown' },
      }),
    );
    const res = await app().request(`/api/v2/PF4/${PLATFORM}/ServerTime?requestTimeout=7`, {}, env);
    expect(Object.fromEntries(res.headers)).toStrictEqual({
      'content-type': 'application/json; charset=utf-8',
      'x-request-outcome': 'unknown',
      'x-request-timeout-applied': '7',
    });
  });
});

describe('Idempotency-Key', () => {
  const ok = () => Promise.resolve({ status: 200, body: '{}', headers: {} });
  const key = { 'idempotency-key': 'key-1' };

  it('sends a v2 write under a key to the ledger that owns it, with the key scoped to the client, its fingerprint and retention', async () => {
    const { env, calls, via } = objects(ok);
    await app().request(`/api/v2/PF4/${PLATFORM}/CfgDeleteHoliday/2`, { method: 'POST', headers: key }, env);
    expect(via).toHaveLength(1);
    expect(via[0]).toMatch(/^IDEMPOTENCY /);
    const { idempotency } = calls[0] as { idempotency: Record<string, unknown> };
    expect(idempotency).toStrictEqual({
      key: 'client-a:key-1',
      ledger: expect.any(String),
      requestHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      retentionHours: 24,
    });
    expect(via[0]).toBe(`IDEMPOTENCY ${idempotency.ledger as string}`);
  });

  it('keeps an answer IDEMPOTENCY_RETENTION_HOURS when set to a number, else 24', async () => {
    for (const [value, hours] of [
      ['48', 48],
      ['0', 24],
      ['soon', 24],
    ] as const) {
      const { env, calls } = objects(ok, { IDEMPOTENCY_RETENTION_HOURS: value });
      await app().request(`/api/v2/PF4/${PLATFORM}/CfgDeleteHoliday/2`, { method: 'POST', headers: key }, env);
      expect((calls[0] as { idempotency: { retentionHours: number } }).idempotency.retentionHours, value).toBe(hours);
    }
  });

  it('fingerprints a query list sent comma-joined, repeated or both as one request, and another list as another', async () => {
    const { env, calls } = objects(ok);
    for (const query of ['logins=100138,100000', 'logins=100000&logins=100138', 'logins=100138,100000&logins=7']) {
      await app().request(`/api/v2/PF4/${PLATFORM}/AdmBalanceFix?${query}`, { method: 'POST', headers: key }, env);
    }
    expect(calls.map((c) => (c as { args: unknown }).args)).toStrictEqual([
      { logins: [100138, 100000] },
      { logins: [100000, 100138] },
      { logins: [100138, 100000, 7] },
    ]);
    const hashes = calls.map((c) => (c as { idempotency: { requestHash: string } }).idempotency.requestHash);
    expect(hashes[1]).toBe(hashes[0]);
    expect(hashes[2]).not.toBe(hashes[0]);
  });

  it('is ignored on a v2 read and on a v1 write: both go to a link object without a ledger', async () => {
    for (const [path, method] of [
      [`/api/v2/PF4/${PLATFORM}/ServerTime`, 'GET'],
      [`/api/PF4/${PLATFORM}/AdmBalanceFix/7`, 'GET'],
    ] as const) {
      const { env, calls, via } = objects(ok);
      await app().request(path, { method, headers: key }, env);
      expect(via, path).toHaveLength(1);
      expect(via[0], path).toMatch(/^LINKS /);
      expect(calls[0], path).not.toHaveProperty('idempotency');
    }
  });
});

describe('group names in the path', () => {
  const ok = () => Promise.resolve({ status: 200, body: '{}', headers: {} });
  const argsOf = (call: unknown) => (call as { args: Record<string, unknown> }).args;

  it('reads a group that ends the path percent-encoded, split on / (a client that did not encode it) or both, as the backslash form', async () => {
    const { env, calls } = objects(ok);
    const sent = ['demo%5Cforex', 'demo/forex', 'demo\\forex', 'demo%2Fforex', 'a/b%5Cc', 'demo'];
    for (const group of sent) {
      const res = await app().request(`/api/v2/PF4/${PLATFORM}/GroupRecordGet/${group}`, {}, env);
      expect(res.status, group).toBe(200);
    }
    expect(calls.map((c) => argsOf(c).group)).toStrictEqual([
      'demo\\forex',
      'demo\\forex',
      'demo\\forex',
      'demo\\forex',
      'a\\b\\c',
      'demo',
    ]);
    expect(calls.map((c) => (c as { operationId: string }).operationId)).toStrictEqual(
      sent.map(() => 'v2.PF4.GroupRecordGet'),
    );
  });

  it('takes the group after the parameters before it (login, then group)', async () => {
    const { env, calls } = objects(ok);
    await app().request(`/api/v2/PF4/${PLATFORM}/TradesGetByLogin/7/real/vip/eur`, {}, env);
    expect(argsOf(calls[0])).toStrictEqual({ login: 7, group: 'real\\vip\\eur' });
  });

  it('validates the group read back: its length counts the backslashes', async () => {
    const { env, calls } = objects(ok);
    const res = await app().request(`/api/v2/PF4/${PLATFORM}/GroupRecordGet/abcdefgh/ijklmnop`, {}, env);
    expect((await res.json<{ error: { message: string } }>()).error.message).toBe(
      'group: group must be at most 16 characters',
    );
    expect(calls).toStrictEqual([]);
  });

  it('keeps a group followed by another parameter to one segment: split there, it is no route; encoded, it is read', async () => {
    const { env, calls } = objects(ok);
    expect((await app().request(`/api/PF4/${PLATFORM}/AdmTradesRequest/demo/forex/true`, {}, env)).status).toBe(404);
    await app().request(`/api/PF4/${PLATFORM}/AdmTradesRequest/demo%5Cforex/true`, {}, env);
    expect(argsOf(calls[0])).toMatchObject({ group: 'demo\\forex', openOnly: true });
  });

  it('reads a slash as a backslash and nothing else', () => {
    expect(groupOfPath('a/b/c')).toBe('a\\b\\c');
    expect(groupOfPath('a\\b')).toBe('a\\b');
    expect(groupOfPath('a//b')).toBe('a\\\\b');
  });

  it('fingerprints both forms of one change as one request under an Idempotency-Key, and another group as another', async () => {
    const { env, calls } = objects(ok);
    const post = (group: string) =>
      app().request(
        `/api/v2/PF4/${PLATFORM}/GroupRecordUpdate/${group}`,
        {
          method: 'POST',
          headers: { 'idempotency-key': 'key-g', 'content-type': 'application/json' },
          body: '{"timeout":30}',
        },
        env,
      );
    for (const group of ['demo%5Cforex', 'demo/forex', 'demo/stocks']) await post(group);
    const hashes = calls.map((c) => (c as { idempotency: { requestHash: string } }).idempotency.requestHash);
    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(hashes[1]).toBe(hashes[0]);
    expect(hashes[2]).not.toBe(hashes[0]);
  });

  it("leaves every route reachable: each entry's path, with one-segment values and with a split group, reaches that entry", async () => {
    const router = new Hono();
    const forwarded = forwardedOperations();
    for (const entry of forwarded) router.on(entry.method, honoPath(entry.path), (c) => c.text(entry.id));
    const splitOnes = forwarded.filter((e) => e.path.endsWith('/{group}'));
    // The v2 PF4 and PF5 group routes the contract names, and the v1 ones that end in a group.
    expect(splitOnes.filter((e) => e.generation === 'v2')).toHaveLength(11);
    for (const entry of forwarded) {
      for (const group of entry.path.endsWith('/{group}') ? ['g1', 'demo/forex'] : ['g1']) {
        const path = entry.path.replace(/\{(\w+)\}/g, (_, name: string) =>
          name === 'tradePlatform' ? PLATFORM : name === 'group' ? group : '1',
        );
        const res = await router.request(path, { method: entry.method });
        expect(await res.text(), `${entry.method} ${path}`).toBe(entry.id);
      }
    }
  });
});

describe('a gateway object that fails', () => {
  it('answers Internal, logs the failure with the trace id, and clears the deadline', async () => {
    const { env } = objects(() => Promise.reject(new Error('object reset')));
    const res = await app().request(`/api/v2/PF4/${PLATFORM}/ServerTime`, {}, env);
    expect(await res.json()).toStrictEqual({
      data: null,
      error: { code: 'Internal', managerCode: null, message: 'gateway object failed' },
      meta: { activityId: TRACE },
    });
    expect(res.headers.get('x-request-outcome')).toBeNull();
    expect(errors.map((l) => JSON.parse(l))).toStrictEqual([
      { msg: 'gateway object failed', traceId: TRACE, error: 'Error: object reset' },
    ]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("answers a write's outcome unknown: the object may have sent it before failing", async () => {
    const { env } = objects(() => Promise.reject(new Error('object reset')));
    const res = await app().request(`/api/v2/PF4/${PLATFORM}/CfgDeleteHoliday/2`, { method: 'POST' }, env);
    expect(res.headers.get('x-request-outcome')).toBe('unknown');
    expect((await res.json<{ error: { code: string } }>()).error.code).toBe('Internal');
  });
});

describe('queryOf', () => {
  it('parses the query of a URL, up to a fragment when there is one', () => {
    expect([...queryOf('http://edge/x?a=1&b=2#c=3&d')]).toStrictEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect([...queryOf('http://edge/x?a=1&b=2')]).toStrictEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect([...queryOf('http://edge/x?#a=1')]).toStrictEqual([]);
    expect([...queryOf('http://edge/x')]).toStrictEqual([]);
    expect(queryOf('http://edge/x?a=%20b').get('a')).toBe(' b');
  });
});
