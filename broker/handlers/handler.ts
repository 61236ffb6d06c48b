/**
 * What an operation handler is: a function of the call (platform, typed args, deadline) that answers data, and
 * paging meta for paged lists. Cached reads answer synchronously once the cache is ready, so the link can reply
 * without a timer or an extra turn of the event loop; live operations return a promise.
 */
import { OperationError } from '../../shared/errors.js';
import type { PagingResult } from '../../shared/frames.js';
import type { TradePlatform } from '../platforms/tradePlatform.js';
import type { CallDeadline } from '../session/managerSession.js';

/**
 * What one answer's `data` may take by default: half workerd's 32 MiB bound on one message of the edge's broker link
 * and on one value passed between its objects (a larger message closes the link under every call on it), since a
 * link object holds an answer in up to three copies on its way within an isolate's 128 MB. `BROKER_ANSWER_MAX_BYTES`.
 */
export const ANSWER_MAX_BYTES = 16 * 1024 * 1024;

export interface HandlerContext<A = Record<string, unknown>> {
  platform: TradePlatform;
  /** Validated, already-converted inputs from the edge: path params and query merged, the body under `body`. */
  args: A;
  /**
   * Absolute deadline (Date.now() based) of the call, handed on to `session.request`. Split for calls under an
   * Idempotency-Key: commands are sent only before `sendBy`, answers awaited until `answerBy`.
   */
  deadline: CallDeadline;
  traceId?: string;
  /** What one answer may take (`ANSWER_MAX_BYTES` unless the broker was told otherwise); larger ones are refused. */
  answerMaxBytes?: number;
}

export interface HandlerResult {
  data?: unknown;
  /** `data` already serialized (cached records keep their JSON); the link splices it into the answer as is. */
  json?: string;
  /**
   * `data` as a JSON array of these texts (cached rows keep their JSON): the link writes them into the answer's
   * frame one by one, so a large list never becomes one string (a 0.5 MB string costs more than its bytes).
   */
  rows?: readonly string[];
  paging?: PagingResult;
}

/** `data` of a result as JSON text, when the handler answered it serialized (`json` or `rows`). */
export function resultJson(result: HandlerResult): string | undefined {
  return result.rows !== undefined ? `[${result.rows.join(',')}]` : result.json;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- unparameterised: the registry's handlers, each of its own entry's arguments
export type Handler<A = any> = (ctx: HandlerContext<A>) => HandlerResult | Promise<HandlerResult>;

/** What a cached read waiting for the first snapshot answers when its platform is closed (removed or changed) first. */
export const CACHE_CLOSED = 'the trade platform was closed before its cache held a snapshot';

/**
 * Runs `read` against the cache now when it holds a snapshot, else once the first resync lands. The link's deadline
 * bounds the wait: if the snapshot never comes the caller gets a time-out, not a false not-found; if the platform is
 * closed first (which wakes its waiting readers), a `NoConnect` error rather than an answer from the empty cache.
 */
export function fromCache(
  ctx: HandlerContext<unknown>,
  read: () => HandlerResult,
): HandlerResult | Promise<HandlerResult> {
  const cache = ctx.platform.cache;
  if (cache.ready) return read();
  return cache.whenReady().then(() => {
    if (!cache.ready) throw new OperationError('NoConnect', CACHE_CLOSED);
    return read();
  });
}
