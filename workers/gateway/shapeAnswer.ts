/**
 * A broker answer shaped for the route's generation: the one function both paths of a link object (the broker's
 * answer, the replica's) and the idempotency ledgers shape with, free of Workers types so tests compare them in Node.
 * A success that names its change-stream position carries it in `X-Gateway-Position`.
 */
import type { CallResult, PagingResult } from '../../shared/frames.js';
import {
  failure,
  success,
  successBytes,
  successJson,
  type ShapeContext,
  type ShapedBytes,
  type ShapedResponse,
} from '../envelope/envelope.js';
import { POSITION_HEADER } from '../../shared/positions.js';

/**
 * A success whose `data` is still the broker's JSON text, cut out of the answer frame without parsing it (`BrokerLink`):
 * a page of 1,000 trades goes from the frame into the envelope (`successJson`) without being parsed and serialised
 * again. A replica's answers take the same form.
 */
export interface RawOk {
  ok: true;
  dataJson: string;
  paging?: PagingResult;
  /** The change-stream position the answer reflects (`CallOk.pos`). */
  pos?: string;
}

/**
 * A success whose `data` is still the UTF-8 bytes of the broker's JSON, cut out of a binary answer frame (a large one):
 * it goes into the envelope as bytes (`successBytes`), never decoded to text at the edge.
 */
export interface RawBytesOk {
  ok: true;
  dataBytes: Uint8Array;
  paging?: PagingResult;
  /** The change-stream position the answer reflects (`CallOk.pos`). */
  pos?: string;
}

export function shapeAnswer(ctx: ShapeContext, r: CallResult | RawOk): ShapedResponse;
export function shapeAnswer(ctx: ShapeContext, r: CallResult | RawOk | RawBytesOk): ShapedResponse | ShapedBytes;
export function shapeAnswer(ctx: ShapeContext, r: CallResult | RawOk | RawBytesOk): ShapedResponse | ShapedBytes {
  if (r.ok) {
    const shaped =
      'dataJson' in r
        ? successJson(ctx, r.dataJson, r.paging)
        : 'dataBytes' in r
          ? successBytes(ctx, r.dataBytes, r.paging)
          : success(ctx, r.data, r.paging);
    // How far the cache that answered had come: a caller sends it back to read its own writes (docs/regions.md).
    if (r.pos !== undefined) shaped.headers[POSITION_HEADER] = r.pos;
    return shaped;
  }
  return failure(ctx, {
    ...r.error,
    outcome: r.outcome,
    timedOut: r.timedOut,
    data: r.data,
    retryAfterSeconds: r.retryAfterSeconds,
    notImplemented: r.notImplemented,
  });
}
