/**
 * A broker answer shaped for the route's generation: the one function both paths of a link object (the broker's
 * answer, the replica's) and the idempotency ledgers shape with, free of Workers types so tests compare them in Node.
 */
import type { CallResult, PagingResult } from '../../shared/frames.js';
import { failure, success, successJson, type ShapeContext, type ShapedResponse } from '../envelope/envelope.js';

/**
 * A success whose `data` is still the broker's JSON text, cut out of the answer frame without parsing it (`BrokerLink`):
 * a page of 1,000 trades goes from the frame into the envelope (`successJson`) without being parsed and serialised
 * again. A replica's answers take the same form.
 */
export interface RawOk { ok: true; dataJson: string; paging?: PagingResult }

export function shapeAnswer(ctx: ShapeContext, r: CallResult | RawOk): ShapedResponse {
  if (r.ok) return 'dataJson' in r ? successJson(ctx, r.dataJson, r.paging) : success(ctx, r.data, r.paging);
  return failure(ctx, { ...r.error, outcome: r.outcome, timedOut: r.timedOut, data: r.data, retryAfterSeconds: r.retryAfterSeconds });
}
