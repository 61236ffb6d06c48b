/**
 * Every refusal the edge answers itself (validation, scope, rate limit, unknown route or platform, oversize or
 * unreadable body, registry not ready, internal error, and the refusals of the stream routes and the SignalR hubs'
 * negotiate and upgrade) is shaped here, by the generation of the route it refuses:
 *
 * - v2 (paths under /api/v2/): HTTP 200 with the envelope `{data: null, error: {code, managerCode: null, message},
 *   meta: {activityId}}`, EXCEPT 429. A client past its API rate limit is answered HTTP 429 with the envelope
 *   (`Forbidden`: the envelope has no rate-limit code) and `Retry-After`, so clients and proxies back off by status.
 * - v1 (every other path: the v1 API, the registry routes, the hubs, the edge's own routes): the refusal's HTTP status
 *   with the spec's general error body `{errorType, errorCode, errorDescription}`.
 * - Refusals that are not an answer to the call are answered alike on every path, v2's included, with their status
 *   and the v1 body: a registry not ready yet (503 `RegistryNotReady`) and an internal error (500). A probe or a load
 *   balancer reads them by status, as it reads the broker's.
 *
 * Headers a refusal carries (a challenge, `Retry-After`) are sent in every shape. Not shaped here, on purpose:
 * OAuth errors (the token endpoint's RFC 6749 §5.2 bodies and the RFC 6750 Bearer challenges of auth/oauthError.ts,
 * and auth/requireToken.ts's `server_error` / `temporarily_unavailable` when the edge's key or the identity provider
 * fails) are one protocol on every route whatever its generation, with the statuses, bodies and headers those RFCs
 * fix, so a generation has nothing to decide for them; answers from the trading platform are shaped by `failure`
 * (envelope.ts), because a gateway object stores and replays them; and a hub's refusals after its upgrade are SignalR
 * frames of the hub protocol (PlatformStream).
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { WebApiErrorCode } from '../../shared/errors.js';
import type { Generation } from '../../shared/catalog/index.js';
import { failure, type ShapeContext, type ShapedResponse } from './envelope.js';

export type RefusalKind =
  | 'Validation'
  | 'PayloadTooLarge'
  | 'Forbidden'
  | 'NotFound'
  | 'TooManyRequests'
  | 'RegistryNotReady'
  | 'Internal';

/** One refusal: what kind, the words for the caller, and headers it carries in every shape. */
export interface Refusal {
  kind: RefusalKind;
  message: string;
  headers?: Record<string, string>;
}

/**
 * Each kind's v1 status and `errorType` (its `errorCode` is the kind), and its v2 envelope code with the HTTP status
 * of a v2 answer; `v2: null` for the kinds answered with the v1 body on every path.
 */
const KINDS: Record<
  RefusalKind,
  { status: ContentfulStatusCode; errorType: string; v2: { code: WebApiErrorCode; status: 200 | 429 } | null }
> = {
  Validation: { status: 400, errorType: 'Validation', v2: { code: 'Validation', status: 200 } },
  PayloadTooLarge: { status: 413, errorType: 'Validation', v2: { code: 'Validation', status: 200 } },
  Forbidden: { status: 403, errorType: 'Forbidden', v2: { code: 'Forbidden', status: 200 } },
  NotFound: { status: 404, errorType: 'NotFound', v2: { code: 'NotFound', status: 200 } },
  TooManyRequests: { status: 429, errorType: 'TooManyRequests', v2: { code: 'Forbidden', status: 429 } },
  RegistryNotReady: { status: 503, errorType: 'Unavailable', v2: null },
  Internal: { status: 500, errorType: 'Internal', v2: null },
};

/** The generation whose shapes a path's refusals take: v2 under /api/v2/, v1 everywhere else. */
export function generationOf(path: string): Generation {
  return path.startsWith('/api/v2/') ? 'v2' : 'v1';
}

/** The refusal shaped for a route of `ctx.generation`: the one place a refusal's status, body and headers are decided. */
export function refusal(ctx: Pick<ShapeContext, 'generation' | 'traceId'>, r: Refusal): ShapedResponse {
  const kind = KINDS[r.kind];
  if (ctx.generation === 'v2' && kind.v2) {
    const shaped = failure(
      { generation: 'v2', family: null, paged: false, traceId: ctx.traceId },
      { code: kind.v2.code, managerCode: null, message: r.message },
    );
    return { status: kind.v2.status, body: shaped.body, headers: { ...shaped.headers, ...r.headers } };
  }
  const body = { errorType: kind.errorType, errorCode: r.kind, errorDescription: r.message };
  return { status: kind.status, body: JSON.stringify(body), headers: { ...r.headers } };
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** What `refuse` uses of a request's context: its path, its trace id and the context's own answer. */
export interface RefusingContext {
  req: { path: string };
  get(key: 'traceId'): string;
  body: Context['body'];
}

/**
 * The refusal answered on the request's own route, its generation read from the path. Headers the route already set
 * on the context (the applied time budget) are kept.
 */
export function refuse(c: RefusingContext, r: Refusal): Response {
  const shaped = refusal({ generation: generationOf(c.req.path), traceId: c.get('traceId') }, r);
  return c.body(shaped.body, shaped.status as ContentfulStatusCode, { 'content-type': JSON_TYPE, ...shaped.headers });
}

/** An edge-side validation refusal (v2 envelope / v1 400). */
export function validation(ctx: Pick<ShapeContext, 'generation' | 'traceId'>, message: string): ShapedResponse {
  return refusal(ctx, { kind: 'Validation', message });
}

/** An unknown or foreign trade platform: one refusal for both so nothing reveals that a foreign one exists. */
export function unknownPlatform(platformId: string): Refusal {
  return { kind: 'NotFound', message: `trade platform ${platformId} not found` };
}

/** `unknownPlatform` shaped for a route of `ctx.generation`. */
export function platformNotFound(
  ctx: Pick<ShapeContext, 'generation' | 'traceId'>,
  platformId: string,
): ShapedResponse {
  return refusal(ctx, unknownPlatform(platformId));
}
