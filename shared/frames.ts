/**
 * Frames on the edge ↔ broker link: one WebSocket per link object (several per platform), many calls multiplexed by
 * id.
 *
 * The edge authenticates the link with the shared secret in the `Authorization: Bearer <secret>` header of the
 * upgrade request. Calls carry a relative time budget (`timeoutMs`, the design map's `deadlineMs`) rather than a
 * wall-clock deadline so that the two sides need no common clock.
 *
 * Calls made under an `Idempotency-Key` carry an opaque `callId`. The broker runs a call id at most once, keeps
 * waiting for the trading server's answer past the call's deadline (bounded), remembers the outcome for a while, pushes
 * it on the link as a `late` frame when it arrives after the deadline, and answers `#outcome` queries for it.
 */
import type { WebApiErrorCode } from './errors.js';
import type { StreamEvent, StreamTopic } from './streams.js';

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
  /**
   * An opaque name of the caller (the edge sends the API client's id), at most 255 characters: the broker shares each
   * platform's manager session fairly between the callers it names (`broker/session/fairUse.ts`). A frame without it
   * is the edge's own call (a replica's refresh), counted as one caller of its own.
   */
  client?: string;
  /**
   * Opaque id of a call made under an `Idempotency-Key` (unique per key binding, never reused). The broker never
   * runs one id twice: a repeated frame is answered from the first one's outcome.
   */
  callId?: string;
  /**
   * Set on a read the edge sends again to this broker because the broker it went to first was lost (killed, hung,
   * unreachable) or is draining: counted by the broker (`broker_calls_moved_total`), handled like any other call.
   */
  moved?: boolean;
}

/**
 * `op` of an outcome query: `{id, platform, op: "#outcome", callId, args: {}, timeoutMs}`. The broker answers
 * `{id, ok: true, data: OutcomeReport}`; while the call is still running it waits for it up to `timeoutMs`.
 */
export const OUTCOME_OP = '#outcome';

/** A result frame without its id: what a call ended with, as stored and reported later. */
export type CallResult = Omit<CallOk, 'id'> | Omit<CallFailed, 'id'>;

/**
 * What the broker knows about a call id:
 * - `settled`: the call ended with `result` (success, refusal, or a failure before it was sent, which has no
 *   `outcome`);
 * - `pending`: still waiting for the trading server;
 * - `lost`: it was sent and its answer can never be known (the manager connection dropped under it, or no answer
 *   came within the broker's late-answer window);
 * - `unknown`: the broker never saw this id or has forgotten it (restart, retention passed): the edge must treat the
 *   outcome as never knowable.
 */
export type OutcomeReport =
  | { state: 'settled'; result: CallResult }
  | { state: 'pending' }
  | { state: 'lost'; reason: string }
  | { state: 'unknown' };

/**
 * Pushed by the broker (no `id`) when a call with a `callId` ends after its answer already went out as a time-out:
 * the late outcome, `settled` or `lost`, on the link that carried the call, if it is still open.
 */
export interface LateFrame {
  late: { callId: string; report: Extract<OutcomeReport, { state: 'settled' | 'lost' }> };
}

export interface PagingResult {
  nextCursor: string | null;
  hasMore: boolean;
}

/**
 * A success frame. The broker writes `id`, `ok`, then `paging` (paged lists), then `data` last: the edge cuts `data`'s
 * JSON text out of the frame without parsing it and splices it into the envelope (a frame of another layout is
 * parsed whole, so the order is an optimisation, never a requirement). A large frame goes as a binary WebSocket frame
 * holding the same JSON as UTF-8, so the edge takes `data` as bytes and answers them without decoding them.
 */
export interface CallOk {
  id: number;
  ok: true;
  /**
   * How far the platform's pumping cache had come when the answer was made (`shared/positions.ts`, `<epoch>-<count>`):
   * for a change, a position that includes the change's own events (the trading server sends them before its
   * answer); absent while the cache has no snapshot. Written after `ok` and before `paging` and `data`.
   */
  pos?: string;
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
  /**
   * `unknown` when a mutating call may have been applied: it passed its deadline (and may still complete on the
   * server) or the connection dropped under it. Absent on a failure of a mutating call: it was not applied.
   */
  outcome?: 'unknown';
  /** Set when the deadline passed, so the edge can tell a time-out from another failure. */
  timedOut?: boolean;
  /** v2 `data` beside the error, when the operation answers one with its failure (see OperationError.data). */
  data?: unknown;
  /** A "not now" refusal: seconds until the call may be answered otherwise (see OperationError.retryAfterSeconds). */
  retryAfterSeconds?: number;
  /** The trading server does not implement what the call needs; nothing was sent (see OperationError.notImplemented). */
  notImplemented?: true;
  /**
   * Set when the broker did not take the call at all (it is draining, `DrainFrame`): nothing was run, so the edge may
   * send it, even a mutating or keyed one, to the platform's next broker. Always with `code: "NoConnect"`.
   */
  notTaken?: true;
}

export type ResultFrame = CallOk | CallFailed;

/** Sent by the broker once when a link opens, before any answer; it carries no id and answers no call. */
export interface HelloFrame {
  hello: { broker: string; version: string };
}

export const LINK_PATH = '/link';

/**
 * `op` of a stream subscription: `{id, platform, op: "#subscribe", args: {topics}, timeoutMs}`, answered
 * `{id, ok: true, data: {sub}}` (the subscription's number on this link, the frame's id) and followed by
 * `{sub, event}` frames (no `id`): first the platform's current `status`, then every change of the named topics in
 * the order the trading server sent them. Ticks may be conflated per symbol when the link is congested; nothing else
 * is. With `args.batch: true` the events of one turn of the broker (what one read from the trading server carried)
 * come as one `{sub, events: [...]}` frame instead, in the same order, at most `MAX_STREAM_BATCH` events a frame: the
 * subscriber handles one message per burst rather than one per event. `{id, platform, op: "#unsubscribe", args:
 * {sub}, timeoutMs}` ends one (answered `{id, ok: true, data: true}`); closing the link ends them all.
 */
export const SUBSCRIBE_OP = '#subscribe';
export const UNSUBSCRIBE_OP = '#unsubscribe';

export interface SubscribeArgs {
  topics: StreamTopic[];
  batch?: boolean;
  /**
   * Also send the current records of the record topics asked for (`users`, `trades`, `positions`, `orders`, `deals`), as
   * `Added` events in `{sub, snapshot: {events, last}}` frames, each time the platform's stream is whole (at once when
   * it is, and again after every loss of the manager session): what a subscriber that must miss no change compares
   * with what it knew. The events that follow a snapshot are the changes after it.
   */
  snapshot?: boolean;
}

/** The record topics a snapshot carries. */
export const SNAPSHOT_TOPICS: readonly StreamTopic[] = ['users', 'trades', 'positions', 'orders', 'deals'];

/** Part of a subscription's snapshot (`SubscribeArgs.snapshot`): at most `MAX_STREAM_BATCH` records a frame. */
export interface StreamSnapshotFrame {
  sub: number;
  snapshot: { events: StreamEvent[]; last: boolean };
}

/** The most events one batched frame carries; a longer burst goes out in several frames, in order. */
export const MAX_STREAM_BATCH = 256;

/** One event of a subscription, pushed by the broker. */
export interface StreamFrame {
  sub: number;
  event: StreamEvent;
}

/** The events of one turn of a batched subscription, pushed by the broker. */
export interface StreamBatchFrame {
  sub: number;
  events: StreamEvent[];
}

/**
 * `op` of a heartbeat: `{id, platform, op: "#ping", args: {}, timeoutMs}`, answered by the link server at once (never
 * queued behind calls) with `{id, ok: true, data: PingReport}`. A link object whose platform names more than one broker
 * pings the broker it uses every `LINK_PING_EVERY_MS`; no answer within `LINK_PING_TIMEOUT_MS` means the broker is hung
 * or gone, and the link moves to the next broker (docs/architecture.md, "Brokers in pairs").
 */
export const PING_OP = '#ping';

/** A heartbeat's answer: whether the broker takes calls, and the state of the platform named in the ping. */
export interface PingReport {
  broker: string;
  /** The broker is draining (`DrainFrame`): it takes no new calls or subscriptions. */
  draining: boolean;
  /**
   * The platform's manager session on this broker: `up` (logged in, and its cache resynced since), `down` (logging in
   * or resyncing, or the trading server unreachable), `cold` (a cold standby logged out: it logs in on the first call,
   * subscription or replication it is sent) or `absent` (not served here).
   */
  platform: 'up' | 'down' | 'cold' | 'absent';
}

/** Heartbeat timing of a link object towards its broker: a hung broker is left within ping interval plus timeout. */
export const LINK_PING_EVERY_MS = 400;
export const LINK_PING_TIMEOUT_MS = 1200;
/** How long a broker earlier in a platform's list must answer every probe before it takes the calls back. */
export const FAILBACK_HOLD_DOWN_MS = 10_000;

/**
 * Pushed by the broker (no `id`) on every link when it starts draining (SIGTERM): it takes no new calls (answering
 * any that still arrive `notTaken`) and no new subscriptions, finishes the calls it runs within their deadlines, keeps
 * answering `#outcome` queries for the keyed calls it ran until each outcome was delivered, then exits. A link object
 * moves its new calls to the platform's next broker at once; a stream object resubscribes there.
 */
export interface DrainFrame {
  drain: { broker: string };
}

/**
 * `op` of a failover notice: `{id, platform, op: "#failover", args: FailoverArgs, timeoutMs}`, sent by a link or
 * stream object to the broker it has just moved to, answered `{id, ok: true, data: true}`. Only counted
 * (`broker_failovers_total{reason,kind}`, an unknown reason or kind as `other`): the broker serves the platform the same
 * either way.
 */
export const FAILOVER_OP = '#failover';

export type FailoverReason = 'lost' | 'hung' | 'unreachable' | 'draining' | 'preferred';

export interface FailoverArgs {
  /** Why the object left its previous broker (`preferred`: it returned to a broker earlier in the list). */
  reason: FailoverReason;
  /** `link` (a link object) or `stream` (a stream object). */
  kind: 'link' | 'stream';
}
