/**
 * Response shapes of both generations, built in one place so the edge's own refusals (decided by route in
 * refusal.ts) and the platform gateway object (for broker answers it may have to store and replay byte for byte)
 * answer identically.
 *
 * v2: always HTTP 200 with `{data, error, meta}`; `error` is present and null on success; `meta.paging` only on paged
 * lists. v1 (and the registry's live Ping): the bare data on success, otherwise an HTTP error status with the general
 * v1 error body, or `PF5Error` (with a `requestId`) for PF5 platform failures; 503 and 504 carry `Retry-After`. A
 * "not now" refusal that says when to retry (`retryAfterSeconds`) is v1 429 and carries that `Retry-After` in both
 * generations. A refusal because the trading server does not implement what the call needs (`notImplemented`) is v1
 * 501.
 */
import type { WebApiErrorCode } from '../../shared/errors.js';
import type { PagingResult } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import type { Generation } from '../../shared/catalog/index.js';
import { managerCodeName } from '../../shared/resultCodes.js';
import { stringifyJson } from '../../shared/losslessJson.js';

/** What the edge answers: the status, the serialised body and the headers it sets besides content type and tracing. */
export interface ShapedResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * A success answered as UTF-8 bytes (`successBytes`): a large broker answer whose `data` came as bytes. Only link
 * objects answer it; an idempotency ledger, which stores what it answers, never has one.
 */
export interface ShapedBytes {
  status: 200;
  body: Uint8Array;
  headers: Record<string, string>;
}

/** One failure, from the broker or from the edge itself. */
export interface Failure {
  code: WebApiErrorCode;
  /** Raw platform result code, named in the envelope by the platform's family. */
  managerCode: number | null;
  message: string;
  /** A mutating call passed its deadline: it may still complete. Answered as `X-Request-Outcome: unknown`. */
  outcome?: 'unknown';
  /** The deadline passed (v1 answers 504 rather than 503). */
  timedOut?: boolean;
  /** v2 `data` answered beside the error (null for almost every failure). */
  data?: unknown;
  /** A "not now" refusal: seconds until the call may be answered otherwise (v1 429, `Retry-After` in both generations). */
  retryAfterSeconds?: number;
  /** The trading server does not implement a command or event kind the call needs (v1 501; nothing was sent). */
  notImplemented?: boolean;
}

/** How to shape an answer: the route's generation, the platform's family (names manager codes) and the trace. */
export interface ShapeContext {
  generation: Generation;
  family: Family | null;
  paged: boolean;
  traceId: string;
}

export const OUTCOME_HEADER = 'X-Request-Outcome';

/** The success answer; 64-bit ids beyond 2^53 − 1 (bigints) are written as their exact digits. */
export function success(ctx: ShapeContext, data: unknown, paging?: PagingResult): ShapedResponse {
  if (ctx.generation !== 'v2') return { status: 200, body: stringifyJson(data ?? null), headers: {} };
  const meta: { activityId: string; paging?: PagingResult } = { activityId: ctx.traceId };
  if (ctx.paged) meta.paging = { nextCursor: paging?.nextCursor ?? null, hasMore: paging?.hasMore ?? false };
  return { status: 200, body: stringifyJson({ data: data ?? null, error: null, meta }), headers: {} };
}

/**
 * `success` for data that is already JSON text, such as a broker answer's `data` taken from its frame unparsed: the
 * same bytes as `success(ctx, JSON.parse(dataJson), paging)` for JSON.stringify output, without parsing a long page
 * and serialising it again at the edge (a large share of a long page's edge CPU: docs/perf/2026-11-23-edge-request-time.md).
 */
export function successJson(ctx: ShapeContext, dataJson: string, paging?: PagingResult): ShapedResponse {
  const data = dataJson.trim() === '' ? 'null' : dataJson;
  if (ctx.generation !== 'v2') return { status: 200, body: data, headers: {} };
  const meta: { activityId: string; paging?: PagingResult } = { activityId: ctx.traceId };
  if (ctx.paged) meta.paging = { nextCursor: paging?.nextCursor ?? null, hasMore: paging?.hasMore ?? false };
  return { status: 200, body: `{"data":${data},"error":null,"meta":${JSON.stringify(meta)}}`, headers: {} };
}

const utf8 = new TextEncoder();
const DATA_HEAD = utf8.encode('{"data":');

/**
 * `successJson` for data that is the UTF-8 bytes of JSON text (a large broker answer's `data`, cut out of its binary
 * frame): the same bytes as `successJson` gives for their text, with the envelope's parts written around them in one
 * array, so a long page is neither decoded nor encoded again at the edge.
 */
export function successBytes(ctx: ShapeContext, data: Uint8Array, paging?: PagingResult): ShapedResponse | ShapedBytes {
  if (isBlank(data)) return successJson(ctx, '', paging);
  if (ctx.generation !== 'v2') return { status: 200, body: data, headers: {} };
  const meta: { activityId: string; paging?: PagingResult } = { activityId: ctx.traceId };
  if (ctx.paged) meta.paging = { nextCursor: paging?.nextCursor ?? null, hasMore: paging?.hasMore ?? false };
  const tail = utf8.encode(`,"error":null,"meta":${JSON.stringify(meta)}}`);
  const body = new Uint8Array(DATA_HEAD.length + data.length + tail.length);
  body.set(DATA_HEAD);
  body.set(data, DATA_HEAD.length);
  body.set(tail, DATA_HEAD.length + data.length);
  return { status: 200, body, headers: {} };
}

/** Whether JSON text's bytes are empty or JSON whitespace only (what `successJson` answers as `null`). */
function isBlank(data: Uint8Array): boolean {
  for (const b of data) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return false;
  return true;
}

export function failure(ctx: ShapeContext, f: Failure): ShapedResponse {
  const headers: Record<string, string> = f.outcome === 'unknown' ? { [OUTCOME_HEADER]: 'unknown' } : {};
  const managerCode = ctx.family ? managerCodeName(ctx.family, f.managerCode) : f.managerCode;
  if (f.retryAfterSeconds !== undefined) headers['Retry-After'] = String(f.retryAfterSeconds);
  if (ctx.generation === 'v2') {
    const body = {
      data: f.data ?? null,
      error: { code: f.code, managerCode, message: f.message },
      meta: { activityId: ctx.traceId },
    };
    return { status: 200, body: stringifyJson(body), headers };
  }
  const status = v1Status(f);
  const retryAfter = RETRY_AFTER_SECONDS[status];
  if (retryAfter !== undefined && headers['Retry-After'] === undefined) headers['Retry-After'] = String(retryAfter);
  return { status, body: JSON.stringify(v1ErrorBody(ctx, f, managerCode)), headers };
}

/**
 * `Retry-After` on the v1 answers that say "not now" rather than "not this": an unreachable broker or trading server
 * (503) is usually back within a reconnect or two of the broker's backoff, so a few seconds; a call past its deadline
 * (504) may be retried at once with a longer budget, but a second is enough to not hammer a server that is slow right
 * now (and a mutating call with an unknown outcome should be checked before it is repeated, whatever the header says).
 */
export const RETRY_AFTER_SECONDS: Readonly<Record<number, number>> = { 503: 5, 504: 1 };

/**
 * How an answer ended, in one word for the access log: `ok`, the v2 error code (read from the end of the envelope,
 * where `error` and `meta` are, so a long page is not parsed), or a name for the HTTP status of other answers.
 */
export function outcomeOf(status: number, body: string, generation: Generation | null): string {
  if (generation === 'v2' && status === 200) {
    const at = body.lastIndexOf('"error":');
    if (at < 0) return 'ok';
    const code = /^"error":(?:null|\{"code":"([A-Za-z0-9]+)")/.exec(body.slice(at, at + 64));
    return code?.[1] ?? 'ok';
  }
  return statusOutcome(status);
}

/** A word for an HTTP status, for answers without an envelope (v1, the token endpoint, refusals before routing). */
export function statusOutcome(status: number): string {
  if (status < 400) return 'ok';
  return STATUS_OUTCOMES[status] ?? `HTTP${status}`;
}

const STATUS_OUTCOMES: Record<number, string> = {
  400: 'Validation',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  413: 'Validation',
  429: 'RateLimited',
  500: 'Internal',
  501: 'NotImplemented',
  503: 'NoConnect',
  504: 'Timeout',
};

/**
 * v1 statuses. The spec fixes 200 and the 404s; the rest is our choice: a platform rejection is the caller's request
 * being refused, so 400 (not 422, which no v1 client expects); a missed deadline is a gateway time-out (504); a link
 * that cannot be established is an unavailable upstream (503); a refusal that says when to retry (a bound the gateway
 * keeps, such as failed password checks of one account) is too many requests (429); a call needing a command or event
 * kind the trading server's login did not declare is not implemented there (501).
 */
export function v1Status(f: Failure): number {
  if (f.timedOut) return 504;
  if (f.retryAfterSeconds !== undefined) return 429;
  if (f.notImplemented) return 501;
  switch (f.code) {
    case 'Validation':
      return 400;
    case 'NotFound':
      return 404;
    case 'Forbidden':
      return 403;
    case 'PF4Error':
    case 'PF5Error':
      return 400;
    case 'NoConnect':
      return 503;
    case 'Ok':
      return 200;
    default:
      return 500;
  }
}

function v1ErrorBody(ctx: ShapeContext, f: Failure, managerCode: string | number | null) {
  if (managerCode !== null && ctx.family === 'PF5') {
    return {
      errorDescription: f.message,
      errorCode: managerCode,
      errorType: 'PF5API',
      requestId: traceToUuid(ctx.traceId),
    };
  }
  if (managerCode !== null && ctx.family === 'PF4') {
    return { errorType: 'PF4API', errorCode: managerCode, errorDescription: f.message };
  }
  return { errorType: f.timedOut ? 'Timeout' : f.code, errorCode: f.code, errorDescription: f.message };
}

/** The trace id as a uuid, so a v1 PF5 `requestId` correlates with the logs the same way `activityId` does. */
export function traceToUuid(traceId: string): string {
  const t = traceId.padEnd(32, '0');
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20, 32)}`;
}
