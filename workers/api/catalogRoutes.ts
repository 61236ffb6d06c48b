/**
 * The catalog's operation routes: one Hono route per entry that reaches a trading server (`read` cached or live).
 * Per call: the platform is resolved within the caller's organization, inputs and the time budget are validated,
 * destructive v2 calls need `confirm=true`, and the call goes in one RPC to a gateway object (one of the platform's
 * link objects, or the idempotency ledger of its key), which answers it already shaped for the route's generation.
 */
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env.js';
import { configOf } from '../config.js';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import {
  failure,
  OUTCOME_HEADER,
  outcomeOf,
  platformNotFound,
  validation,
  type ShapeContext,
  type ShapedBytes,
  type ShapedResponse,
} from '../envelope/index.js';
import { LINK_GRACE_MS, ledgerName, pickLink, type GatewayCall } from '../gateway/index.js';
import { platformOf } from '../registry/index.js';
import { scopeRefusal } from '../auth/requireScope.js';
import { queryLists, validateInputs } from '../../shared/catalog/inputs.js';
import { resolveTimeout, TIMEOUT_APPLIED_HEADER, TIMEOUT_HEADER } from './timeout.js';
import { canonicalPath, IDEMPOTENCY_HEADER, idempotencyKeyProblem, requestHash } from './idempotency.js';
import { readBody } from './requestBody.js';
import { CallAudit, keepRunning } from '../audit/callAudit.js';
import { REPLAYED_HEADER } from '../gateway/messages.js';
import { homePlacement, nearPlacement } from '../regions/placement.js';
import { parsePosition, POSITION_HEADER, POSITION_RULE } from '../../shared/positions.js';
import { placedStub } from '../regions/objects.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * The edge's own deadline beyond the call's budget: past the gateway object's (which already waits LINK_GRACE_MS for
 * the broker's time-out answer), so this only fires when the object itself does not answer.
 */
export const EDGE_GRACE_MS = LINK_GRACE_MS + 1000;

/** Entries the edge forwards, most specific first so a literal segment wins over a parameter at the same place. */
export function forwardedOperations(): Operation[] {
  return catalog.filter((e) => e.read !== 'local').sort((a, b) => specificity(a.path, b.path));
}

/**
 * The path parameter that names a group, when it is the path's last: a group name holds backslashes (`demo\forex`),
 * which a client that does not percent-encode it sends as `/` (URL parsers turn `\` into `/`), and cannot hold `/`.
 */
export const SPLIT_GROUP_PARAM = 'group';
const endsWithGroup = (path: string) => path.endsWith(`/{${SPLIT_GROUP_PARAM}}`);

/**
 * `{param}` placeholders as Hono `:param` segments; a group that ends the path takes every remaining segment
 * (`/GroupRecordGet/demo/forex`), read back as the backslash form by groupOfPath. Where another parameter follows the
 * group, the group is one segment and must be percent-encoded.
 */
export const honoPath = (path: string) => {
  const hono = path.replace(/\{(\w+)\}/g, ':$1');
  return endsWithGroup(path) ? `${hono}{.+}` : hono;
};

/** A group path parameter as sent (one segment, encoded, or split on `/`) in the backslash form: every `/` is a `\`. */
export const groupOfPath = (value: string) => value.replaceAll('/', '\\');

export function catalogRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  for (const entry of forwardedOperations()) app.on(entry.method, honoPath(entry.path), operationHandler(entry));
  return app;
}

function operationHandler(entry: Operation) {
  const v2 = entry.generation === 'v2';
  const idempotent = v2 && entry.mutating;
  const confirmRequired = v2 && entry.destructive;
  const paged = !!entry.paged;
  const splitGroup = endsWithGroup(entry.path);
  const lists = queryLists(entry);
  const cached = entry.read === 'cached' && !entry.mutating;

  return async (c: Context<AppEnv>) => {
    c.set('operation', entry.id);
    const query = queryOf(c.req.url);
    const budget = resolveTimeout(entry, c.req.header(TIMEOUT_HEADER), query.get('requestTimeout'));
    const ctx: ShapeContext = { generation: entry.generation, family: entry.family, paged, traceId: c.get('traceId') };
    // A call that is not a read is recorded in its organization's audit trail, refused or not (workers/audit/).
    const audit = CallAudit.of(c, entry);
    // A body of bytes is a success (`successBytes`).
    const outcomeText = (r: ShapedResponse | ShapedBytes) =>
      typeof r.body === 'string' ? outcomeOf(r.status, r.body, entry.generation) : 'ok';
    const recorded = (r: ShapedResponse | ShapedBytes) =>
      audit?.finish(outcomeText(r), r.headers[OUTCOME_HEADER] === 'unknown', r.headers[REPLAYED_HEADER] === 'true');
    const reply = (r: ShapedResponse | ShapedBytes) => {
      c.set('outcome', outcomeText(r));
      recorded(r);
      return send(r, budget.seconds);
    };
    // HEAD would run the GET (Hono answers HEAD with it): a sync read's rows or a live round trip, lost to a caller
    // that reads no body. Refused before anything is asked, the way to read named.
    if (c.req.method === 'HEAD') {
      return reply({ status: 405, body: '', headers: { Allow: entry.method } });
    }
    const refused = scopeRefusal(entry, c.get('caller'), ctx);
    if (refused) return reply(refused);

    const platformId = c.req.param('tradePlatform') ?? '';
    if (!UUID.test(platformId)) return reply(validation(ctx, 'tradePlatform: must be a uuid'));
    const found = await platformOf(c, platformId);
    const type = found?.platform.type;
    // A platform of the wrong family is as unknown on this route as a foreign one.
    audit?.addressed(platformId, found?.jurisdiction);
    if (!found || (entry.family !== null && type !== entry.family)) return reply(platformNotFound(ctx, platformId));
    ctx.family = type === 'PF4' || type === 'PF5' ? type : null;

    if (!budget.ok) return reply(validation(ctx, budget.message));
    if (confirmRequired && query.get('confirm')?.toLowerCase() !== 'true') {
      return reply(validation(ctx, 'confirm: must be true for this destructive operation'));
    }
    const body = entry.body ? await readBody(c) : ({ kind: 'none' } as const);
    const params = { ...c.req.param() } as Record<string, string>;
    if (splitGroup && params[SPLIT_GROUP_PARAM] !== undefined)
      params[SPLIT_GROUP_PARAM] = groupOfPath(params[SPLIT_GROUP_PARAM]);
    const inputs = validateInputs(entry, params, { searchParams: query }, body);
    if (!inputs.ok) return reply(validation(ctx, inputs.message));
    audit?.arguments(inputs.args);
    const after = c.req.header(POSITION_HEADER);
    if (after !== undefined && parsePosition(after) === null)
      return reply(validation(ctx, `${POSITION_HEADER}: ${POSITION_RULE}`));

    // Cached reads are answered in the caller's region; live reads and writes in the platform's home (docs/regions.md).
    const home = homePlacement(found, configOf(c.env).HOME_REGION);
    const place = cached ? nearPlacement(found, c.get('region'), configOf(c.env).HOME_REGION) : home;
    const call: GatewayCall = {
      operationId: entry.id,
      op: entry.op,
      platform: found.platform.id,
      family: ctx.family,
      args: inputs.args,
      timeoutMs: Math.round(budget.seconds * 1000),
      traceId: ctx.traceId,
      client: c.get('caller').clientId,
      brokerUrls: found.brokerUrls ?? configOf(c.env).BROKER_URL,
      mutating: entry.mutating,
      home,
      place,
      // A cached read is answered only by a replica that has reached the position the caller sent.
      ...(cached && after !== undefined ? { after } : {}),
    };
    if (idempotent) {
      const key = c.req.header(IDEMPOTENCY_HEADER);
      if (key !== undefined) {
        const problem = idempotencyKeyProblem(key);
        if (problem) return reply(validation(ctx, problem));
        const clientId = c.get('caller').clientId;
        call.idempotency = {
          key: `${clientId}:${key}`,
          ledger: ledgerName(clientId, key, configOf(c.env).IDEMPOTENCY_SHARDS),
          requestHash: await requestHash(
            entry.method,
            { searchParams: query, pathname: '' },
            body.kind === 'json' ? body.value : undefined,
            canonicalPath(entry, found.platform.id, inputs.args),
            lists,
          ),
          retentionHours: configOf(c.env).IDEMPOTENCY_RETENTION_HOURS,
          ...(audit ? { organization: c.get('caller').organizationId } : {}),
        };
      }
    }
    const answer = forward(c, ctx, call);
    // Recorded even if the caller goes away before the answer: the call may change the server all the same.
    if (audit) keepRunning(c, answer.then(recorded));
    return reply(await answer);
  };
}

/** The query of a request URL, parsed only when it has one (most reads have none): no whole-URL parse per call. */
const NO_QUERY: Pick<URLSearchParams, 'get' | 'getAll' | 'has'> = new URLSearchParams();
export function queryOf(url: string): URLSearchParams {
  const at = url.indexOf('?');
  if (at < 0) return NO_QUERY as URLSearchParams;
  const end = url.indexOf('#', at);
  return new URLSearchParams(end < 0 ? url.slice(at + 1) : url.slice(at + 1, end));
}

/**
 * The one RPC of the call, bounded by the edge's own deadline in case the gateway object does not answer: a call under
 * an Idempotency-Key goes to the ledger that owns the key (placed in the platform's home), any other to one of the
 * platform's link objects where the call is served (`call.place`), picked by the trace id so that a platform's calls
 * spread over all of them. One promise settled by whichever comes first.
 */
function forward(c: Context<AppEnv>, ctx: ShapeContext, call: GatewayCall): Promise<ShapedResponse | ShapedBytes> {
  const stub = call.idempotency
    ? placedStub(c.env.IDEMPOTENCY, call.idempotency.ledger, call.home)
    : placedStub(
        c.env.LINKS,
        pickLink(call.platform, call.place.region, call.traceId, configOf(c.env).LINKS_PER_PLATFORM),
        call.place,
      );
  return new Promise<ShapedResponse | ShapedBytes>((resolve) => {
    const timer = setTimeout(
      () =>
        resolve(
          failure(ctx, {
            code: 'NoConnect',
            managerCode: null,
            timedOut: true,
            message: `no answer from the trading platform within ${call.timeoutMs / 1000} s`,
            ...(call.mutating ? { outcome: 'unknown' as const } : {}),
          }),
        ),
      call.timeoutMs + EDGE_GRACE_MS,
    );
    (stub.call(call) as Promise<ShapedResponse | ShapedBytes>).then(
      (answer) => {
        clearTimeout(timer);
        resolve(answer);
      },
      (err: unknown) => {
        clearTimeout(timer);
        console.error(JSON.stringify({ msg: 'gateway object failed', traceId: ctx.traceId, error: String(err) }));
        // The object may have sent the change before failing: a mutating call's outcome is then not known.
        resolve(
          failure(ctx, {
            code: 'Internal',
            managerCode: null,
            message: 'gateway object failed',
            ...(call.mutating ? { outcome: 'unknown' as const } : {}),
          }),
        );
      },
    );
  });
}

const JSON_TYPE = 'application/json; charset=utf-8';

function send(r: ShapedResponse | ShapedBytes, seconds: number): Response {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE };
  for (const name in r.headers) headers[name] = r.headers[name];
  headers[TIMEOUT_APPLIED_HEADER] = String(seconds);
  return new Response(r.body, { status: r.status, headers });
}

/** Orders two paths so that, segment by segment, a literal comes before a `{param}`. */
function specificity(a: string, b: string): number {
  const sa = a.split('/');
  const sb = b.split('/');
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const pa = sa[i].startsWith('{');
    const pb = sb[i].startsWith('{');
    if (pa !== pb) return pa ? 1 : -1;
  }
  return 0;
}
