/**
 * A bench-only edge worker (`npm run bench:profile`, never deployed): the real edge app and its Durable Object
 * classes, plus routes that stop a cached read after each stage of the edge's work, so that the cost of every stage
 * shows as the difference between two neighbouring routes measured in one run:
 *
 *   /bench/raw                                   the worker answering a constant: no router, no middleware
 *   /bench/raw-log                               + one console line the size of an access-log line
 *   /livez                                       the app's router and its global middleware (the bare route)
 *   /api/bench/token                             + the /api/* middleware: time budget header, token check, rate limit
 *   /api/bench/platform/{platform}               + the platform look-up within the caller's organization
 *   /api/bench/validate/{platform}/{login}       + the UserRecordGet entry's input validation
 *   /api/bench/shape/{platform}/{login}          + shaping a fixed account record as the v2 envelope and answering it
 *   /api/bench/object/{platform}/{login}         + one RPC to a Durable Object that answers from memory (the hop alone)
 *   /api/bench/object-fetch/{platform}/{login}   the same hop as a `fetch` to the object instead of an RPC
 *   /api/v2/PF4/{platform}/UserRecordGet/{login} the real route: the platform gateway object, its broker link, the
 *                                                broker and its cache
 *
 * and for a keyed write (v2 PF4 UserPasswordSet under an Idempotency-Key), the ledger's stages, each the real route
 * with its ledger stopped after the stage (`BenchLedger`, a bench-only ledger class beside the real one):
 *
 *   /bench/ledger/bind/api/v2/...                the key bound (row written and on disk); answers `true`, sends nothing
 *   /bench/ledger/send/api/v2/...                + the call sent through a link object; the broker's answer, shaped,
 *                                                with the key left in flight
 *   /api/v2/PF4/{platform}/UserPasswordSet/...   + completed: the real keyed write, its answer stored
 *
 * Each stage route calls the same modules the real route does, in the same order.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Context } from 'hono';
import { IdempotencyLedger } from '../../workers/gateway/idempotencyLedger.js';
import { shapeAnswer } from '../../workers/gateway/shapeAnswer.js';
import type { GatewayCall, GatewayResponse } from '../../workers/gateway/messages.js';
import { createApp } from '../../workers/app.js';
import type { AppEnv, Env } from '../../workers/env.js';
import { catalog } from '../../shared/catalog/index.js';
import { success, type ShapeContext } from '../../workers/envelope/index.js';
import { platformOf } from '../../workers/registry/index.js';
import { validateInputs } from '../../shared/catalog/inputs.js';
import { queryOf } from '../../workers/api/catalogRoutes.js';

export * from '../../workers/index.js';

/** The Durable Object hop alone: answers an already shaped response from memory. */
export class BenchEcho extends DurableObject<Env> {
  call(input: { body: string }): Promise<{ status: number; body: string; headers: Record<string, string> }> {
    return Promise.resolve({ status: 200, body: input.body, headers: {} });
  }

  /** The same hop as an HTTP request to the object's `fetch` handler, to compare the two kinds of call. */
  override async fetch(request: Request): Promise<Response> {
    return new Response(await request.text(), { headers: { 'content-type': 'application/json; charset=utf-8' } });
  }
}

/** The ledger stopped after one stage of a key's first call: `bind`, or `send` (the key then stays in flight). */
export class BenchLedger extends IdempotencyLedger {
  async stage(input: GatewayCall, upTo: LedgerStage): Promise<GatewayResponse> {
    const entry = catalog.find((e) => e.id === input.operationId)!;
    const ctx: ShapeContext = {
      generation: entry.generation,
      family: input.family,
      paged: false,
      traceId: input.traceId,
    };
    const callId = crypto.randomUUID();
    await this.bind(input, ctx, callId);
    if (upTo === 'bind') return success(ctx, true);
    return shapeAnswer(ctx, await this.sendBound(input, callId));
  }
}
type LedgerStage = 'bind' | 'send';

/** BENCH_LEDGER in the place of the edge's IDEMPOTENCY binding: the route's `call` goes to `stage(call, upTo)`. */
const stagedLedgers = new Map<LedgerStage, unknown>();
function stagedLedger(ns: DurableObjectNamespace<BenchLedger>, upTo: LedgerStage): unknown {
  let staged = stagedLedgers.get(upTo);
  if (!staged) {
    stagedLedgers.set(
      upTo,
      (staged = {
        idFromName: (name: string) => ns.idFromName(name),
        get: (id: DurableObjectId) => ({ call: (input: GatewayCall) => ns.get(id).stage(input, upTo) }),
      }),
    );
  }
  return staged;
}

type BenchEnv = AppEnv & {
  Bindings: AppEnv['Bindings'] & {
    BENCH_ECHO: DurableObjectNamespace<BenchEcho>;
    BENCH_LEDGER: DurableObjectNamespace<BenchLedger>;
  };
};

const entry = catalog.find((e) => e.id === 'v2.PF4.UserRecordGet');
if (!entry) throw new Error('no v2.PF4.UserRecordGet in the catalog');

/** An account record the size of a cached one. */
const RECORD = {
  login: 100000,
  group: 'demo\\forex',
  password: null,
  enable: true,
  enableChangePassword: true,
  enableReadOnly: false,
  passwordInvestor: null,
  passwordPhone: null,
  name: 'Bench Account',
  country: 'Germany',
  city: 'Berlin',
  state: '',
  zipcode: '10115',
  address: 'Unter den Linden 1',
  phone: '+49 30 0000000',
  email: 'bench@example.com',
  comment: '',
  id: '',
  status: 'RE',
  regdate: '2024-01-01T00:00:00Z',
  lastdate: '2024-06-01T00:00:00Z',
  leverage: 100,
  agentAccount: 0,
  timestamp: 1717200000,
  balance: 10000,
  prevmonthbalance: 9000,
  prevbalance: 9500,
  credit: 0,
  interestrate: 0,
  taxes: 0,
  prevmonthequity: 9000,
  prevequity: 9500,
  publicKey: null,
  sendReports: true,
  mqid: 0,
  userColor: 0,
  apiData: null,
};

const app = createApp();

async function platformStage(c: Context<BenchEnv>) {
  const found = await platformOf(c as unknown as Context<AppEnv>, c.req.param('platform') ?? '');
  return found;
}

function validateStage(c: Context<BenchEnv>) {
  return validateInputs(
    entry!,
    { tradePlatform: c.req.param('platform') ?? '', login: c.req.param('login') ?? '' },
    { searchParams: queryOf(c.req.url) },
    { kind: 'none' },
  );
}

function shapeStage(c: Context<BenchEnv>): ShapeContext {
  return { generation: entry!.generation, family: 'PF4', paged: false, traceId: c.get('traceId') };
}

const send = (body: string) =>
  new Response(body, {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'X-Request-Timeout-Applied': '10' },
  });

/** Stage answers carry the budget header as the real route's do, so the /api/* middleware does not look it up. */
const text = (c: Context<BenchEnv>, body: string) => {
  c.header('X-Request-Timeout-Applied', '10');
  return c.text(body);
};

const bench = app as unknown as import('hono').Hono<BenchEnv>;
bench.get('/api/bench/token', (c) => text(c, 'ok'));
bench.get('/api/bench/platform/:platform', async (c) => text(c, (await platformStage(c)) ? 'ok' : 'no platform'));
bench.get('/api/bench/validate/:platform/:login', async (c) => {
  if (!(await platformStage(c))) return text(c, 'no platform');
  const inputs = validateStage(c);
  return text(c, inputs.ok ? 'ok' : inputs.message);
});
bench.get('/api/bench/shape/:platform/:login', async (c) => {
  if (!(await platformStage(c))) return text(c, 'no platform');
  const inputs = validateStage(c);
  if (!inputs.ok) return text(c, inputs.message);
  return send(success(shapeStage(c), { ...RECORD, login: inputs.args.login }).body);
});
/** The shaped answer handed through the platform's echo object, by RPC or by `fetch`. */
const objectStage =
  (hop: (stub: DurableObjectStub<BenchEcho>, body: string) => Promise<string>) => async (c: Context<BenchEnv>) => {
    const found = await platformStage(c);
    if (!found) return text(c, 'no platform');
    const inputs = validateStage(c);
    if (!inputs.ok) return text(c, inputs.message);
    const shaped = success(shapeStage(c), { ...RECORD, login: inputs.args.login });
    return send(await hop(c.env.BENCH_ECHO.get(c.env.BENCH_ECHO.idFromName(found.platform.id)), shaped.body));
  };
bench.get(
  '/api/bench/object/:platform/:login',
  objectStage(async (stub, body) => (await stub.call({ body })).body),
);
bench.get(
  '/api/bench/object-fetch/:platform/:login',
  objectStage(async (stub, body) => (await stub.fetch('http://object/call', { method: 'POST', body })).text()),
);

/** An access-log-sized line, so `/bench/raw-log` costs what one `console.log` of the access log costs. */
const LOG_LINE = {
  msg: 'request',
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  clientId: 'demo',
  method: 'GET',
  operation: 'v2.PF4.UserRecordGet',
  status: 200,
  outcome: 'ok',
  ms: 1,
};

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    // The path without a URL parse, so the routes below pay only for what the real edge does.
    const url = request.url;
    const at = url.indexOf('/', url.indexOf('//') + 2);
    const path = at < 0 ? '/' : url.slice(at);
    if (path === '/bench/raw') return new Response('ok');
    if (path === '/bench/raw-log') {
      console.log(JSON.stringify(LOG_LINE));
      return new Response('ok');
    }
    const staged = /^\/bench\/ledger\/(bind|send)(\/.*)$/.exec(path);
    if (staged) {
      const benchEnv = env as BenchEnv['Bindings'];
      const real = new Request(url.slice(0, at) + staged[2], request);
      return app.fetch(
        real,
        { ...env, IDEMPOTENCY: stagedLedger(benchEnv.BENCH_LEDGER, staged[1] as LedgerStage) },
        ctx,
      );
    }
    return app.fetch(request, env, ctx);
  },
};
