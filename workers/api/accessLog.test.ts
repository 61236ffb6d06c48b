/**
 * The edge's access log (workers/api/accessLog.ts) in a Hono app in this process, on fake timers: the exact line per
 * request (trace, client, method, operation addressed, status, outcome, duration), and how lines are batched into
 * one write: ACCESS_LOG_FLUSH_MS after the first of a batch, at once at 1,000 waiting, kept open by `waitUntil`, or
 * one write per line with ACCESS_LOG_BATCH=1.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Hono } from 'hono';
import type { AppEnv, Env } from '../env.js';
import { ACCESS_LOG_FLUSH_MS, accessLog } from './accessLog.js';

// The module reaches the gateway's Durable Object classes through the catalog routes; their base class is all that
// Node lacks (vi.mock is hoisted above the imports).
vi.mock('cloudflare:workers', () => ({ DurableObject: class {} }));

const V2_NOT_FOUND =
  '{"data":null,"error":{"code":"NotFound","managerCode":null,"message":"x"},"meta":{"activityId":"t"}}';

/** An app logging to `lines` (each element one write), with the trace id and caller set as the edge's guards would. */
function appWith(write?: (line: string) => void) {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('traceId', c.req.header('x-trace') ?? 'trace-1');
    await next();
  });
  app.use('*', write ? accessLog(write) : accessLog());
  app.use('*', async (c, next) => {
    const client = c.req.header('x-client');
    if (client) c.set('caller', { clientId: client, organizationId: 'org', scopes: [] });
    if (c.req.header('x-refuse')) return c.text('no token', 401);
    await next();
  });
  app.get('/api/v2/PF4/:tradePlatform/ServerTime', (c) => {
    const ms = Number(c.req.header('x-ms') ?? 0);
    if (ms) vi.advanceTimersByTime(ms);
    return c.body(V2_NOT_FOUND, 200, { 'content-type': 'application/json' });
  });
  app.get('/api/v2/PF4/:tradePlatform/UserRecordGet/:login', (c) => {
    c.set('operation', 'set by the route');
    c.set('outcome', 'Timeout');
    return c.body(V2_NOT_FOUND, 200, { 'content-type': 'application/json' });
  });
  app.all('/api/probe/:id', (c) => c.text('probe'));
  app.get('/api/PF4/:tradePlatform/v1json', (c) => c.body(V2_NOT_FOUND, 200, { 'content-type': 'application/json' }));
  app.get('/api/v2/text', (c) => c.body(V2_NOT_FOUND, 200, { 'content-type': 'text/plain' }));
  app.get('/api/v2/untyped', () => new Response(V2_NOT_FOUND));
  app.get(
    '/api/v2/broken',
    () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.error(new Error('gone'));
          },
        }),
        {
          headers: { 'content-type': 'application/json' },
        },
      ),
  );
  app.get('/api/v2/unavailable', (c) => c.body(V2_NOT_FOUND, 503, { 'content-type': 'application/json' }));
  return app;
}

interface Line {
  msg: string;
  traceId: string;
  clientId: string | null;
  method: string;
  operation: string | null;
  status: number;
  outcome: string;
  ms: number;
}
const line = (fields: Partial<Line>): string =>
  JSON.stringify({
    msg: 'request',
    traceId: 'trace-1',
    clientId: null,
    method: 'GET',
    operation: null,
    status: 200,
    outcome: 'ok',
    ms: 0,
    ...fields,
  });

let writes: string[];
const write = (text: string) => {
  writes.push(text);
};
const single = { ACCESS_LOG_BATCH: '1' } as Env;

beforeEach(() => {
  vi.useFakeTimers();
  writes = [];
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('access log lines', () => {
  it('names the catalog operation a route serves, the outcome read from its v2 envelope, the client and the duration', async () => {
    const app = appWith(write);
    await app.request(
      '/api/v2/PF4/p1/ServerTime',
      { headers: { 'x-trace': 't9', 'x-client': 'client-a', 'x-ms': '7' } },
      single,
    );
    expect(writes).toEqual([
      line({ traceId: 't9', clientId: 'client-a', operation: 'v2.PF4.ServerTime', outcome: 'NotFound', ms: 7 }),
    ]);
  });

  it('takes the operation and outcome a route set itself', async () => {
    const app = appWith(write);
    await app.request('/api/v2/PF4/p1/UserRecordGet/7', {}, single);
    expect(writes).toEqual([line({ operation: 'set by the route', outcome: 'Timeout' })]);
  });

  it('names the operation addressed even when the request was refused before its route', async () => {
    const app = appWith(write);
    await app.request('/api/v2/PF4/p1/ServerTime', { headers: { 'x-refuse': '1' } }, single);
    expect(writes).toEqual([line({ operation: 'v2.PF4.ServerTime', status: 401, outcome: 'Unauthorized' })]);
  });

  it('names another route by the request method and its pattern, and an unknown route not at all', async () => {
    const app = appWith(write);
    await app.request('/api/probe/secret-value', { method: 'POST' }, single);
    await app.request('/api/nowhere', {}, single);
    expect(writes).toEqual([
      line({ method: 'POST', operation: 'POST /api/probe/:id' }),
      line({ status: 404, outcome: 'NotFound' }),
    ]);
  });

  it('reads an outcome from the body of a v2 JSON success only', async () => {
    const app = appWith(write);
    for (const path of [
      '/api/PF4/p1/v1json',
      '/api/v2/text',
      '/api/v2/untyped',
      '/api/v2/broken',
      '/api/v2/unavailable',
    ]) {
      await app.request(path, {}, single);
    }
    expect(writes.map((text) => JSON.parse(text).outcome)).toEqual(['ok', 'ok', 'ok', 'ok', 'NoConnect']);
  });

  it('writes to console.log by default', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    await appWith().request('/api/probe/1', {}, single);
    expect(log.mock.calls).toEqual([[line({ operation: 'GET /api/probe/:id' })]]);
  });
});

describe('access log batches', () => {
  const context = () => {
    const waited: Array<Promise<unknown>> = [];
    return {
      waited,
      ctx: {
        waitUntil: (p: Promise<unknown>) => {
          waited.push(p);
        },
        passThroughOnException: () => {},
        props: {},
      },
    };
  };
  const probe = (n: number) => line({ traceId: `t${n}`, operation: 'GET /api/probe/:id' });

  it('writes each line on its own call with ACCESS_LOG_BATCH=1, leaving no timer', async () => {
    const app = appWith(write);
    await app.request('/api/probe/1', { headers: { 'x-trace': 't1' } }, single);
    await app.request('/api/probe/2', { headers: { 'x-trace': 't2' } }, single);
    expect(writes).toEqual([probe(1), probe(2)]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes a batch in one call ACCESS_LOG_FLUSH_MS after its first line, kept open by one waitUntil', async () => {
    expect(ACCESS_LOG_FLUSH_MS).toBe(100);
    const app = appWith(write);
    const { waited, ctx } = context();
    await app.request('/api/probe/1', { headers: { 'x-trace': 't1' } }, {}, ctx);
    await vi.advanceTimersByTimeAsync(10);
    await app.request('/api/probe/2', { headers: { 'x-trace': 't2' } }, {}, ctx);
    expect(waited).toHaveLength(1);
    let settled = false;
    void waited[0].then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(89);
    expect(writes).toEqual([]);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([`${probe(1)}\n${probe(2)}`]);
    expect(settled).toBe(true);

    // A line after the write starts the next batch, with its own timer.
    await vi.advanceTimersByTimeAsync(5);
    await app.request('/api/probe/3', { headers: { 'x-trace': 't3' } }, {}, ctx);
    expect(waited).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(99);
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([`${probe(1)}\n${probe(2)}`, probe(3)]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('writes batches without an execution context too', async () => {
    const app = appWith(write);
    await app.request('/api/probe/1', { headers: { 'x-trace': 't1' } });
    await vi.advanceTimersByTimeAsync(100);
    expect(writes).toEqual([probe(1)]);
  });

  it("writes at once when 1,000 lines wait, and the batch's timer then writes only what came after", async () => {
    const app = appWith(write);
    for (let i = 0; i < 999; i++) await app.request('/api/probe/x', { headers: { 'x-trace': `t${i}` } }, {});
    expect(writes).toEqual([]);
    await app.request('/api/probe/x', { headers: { 'x-trace': 't999' } }, {});
    expect(writes).toHaveLength(1);
    expect(writes[0].split('\n')).toEqual(Array.from({ length: 1000 }, (_, i) => probe(i)));
    await vi.advanceTimersByTimeAsync(100);
    expect(writes).toHaveLength(1);

    await app.request('/api/probe/x', { headers: { 'x-trace': 't1000' } }, {});
    await vi.advanceTimersByTimeAsync(100);
    expect(writes).toEqual([writes[0], probe(1000)]);
  });

  it("writes what came after a full batch when that batch's timer fires", async () => {
    const app = appWith(write);
    for (let i = 0; i < 1000; i++) await app.request('/api/probe/x', { headers: { 'x-trace': `t${i}` } }, {});
    expect(writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(50);
    await app.request('/api/probe/x', { headers: { 'x-trace': 't1000' } }, {});
    await vi.advanceTimersByTimeAsync(50);
    expect(writes).toEqual([writes[0], probe(1000)]);
  });
});
