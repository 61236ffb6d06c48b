/**
 * Frames on the edge ↔ broker link: one WebSocket per platform gateway object, many calls multiplexed by id.
 *
 * The edge authenticates the link with the shared secret in the `Authorization: Bearer <secret>` header of the
 * upgrade request. Calls carry a relative time budget (`timeoutMs`, the design map's `deadlineMs`) rather than a
 * wall-clock deadline so that the two sides need no common clock.
 */
import type { WebApiErrorCode } from './errors.js';

export interface CallFrame {
  id: number;
  /** Trade platform uuid. */
  platform: string;
  /** Handler name from the catalog entry (`entry.op`), e.g. `PF4.UserRecordGet`. */
  op: string;
  /** Validated inputs: path, query and body merged as the catalog entry describes (`body` under `body`). */
  args: Record<string, unknown>;
  /** Milliseconds the broker may spend before answering with a time-out. */
  timeoutMs: number;
  /** W3C trace id, for the broker's logs. */
  traceId?: string;
}

export interface PagingResult {
  nextCursor: string | null;
  hasMore: boolean;
}

export interface CallOk {
  id: number;
  ok: true;
  data: unknown;
  /** Present on paged lists only. */
  paging?: PagingResult;
}

export interface CallError {
  code: WebApiErrorCode;
  /** Raw platform result code when the failure came from the trading server. */
  managerCode: number | null;
  message: string;
}

export interface CallFailed {
  id: number;
  ok: false;
  error: CallError;
  /** `unknown` when a mutating call passed its deadline: it may still complete on the server. */
  outcome?: 'unknown';
  /** Set when the deadline passed, so the edge can tell a time-out from another failure. */
  timedOut?: boolean;
  /** v2 `data` beside the error, when the operation answers one with its failure (see OperationError.data). */
  data?: unknown;
}

export type ResultFrame = CallOk | CallFailed;

/** Sent by the broker once when a link opens, before any answer; it carries no id and answers no call. */
export interface HelloFrame {
  hello: { broker: string; version: string };
}

export const LINK_PATH = '/link';
