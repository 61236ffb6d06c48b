/**
 * Turns one call frame into one answer frame: finds the platform and the handler, runs it under the call's deadline
 * and shapes the outcome (`CallOk` / `CallFailed`). The deadline is enforced here, once, so every handler gets the
 * same time-out semantics: past `timeoutMs` the caller is told the trading server did not answer, and for a mutating
 * operation that the change may still happen (`outcome: "unknown"`).
 *
 * Calls with a `callId` (made under an Idempotency-Key) are run at most once per id and outlive their deadline: the
 * handler may send only before the deadline but waits for the trading server's answer up to `lateAnswerMs` longer.
 * Their outcome is kept (`CallOutcomes`): an answer that comes after the time-out went out is pushed on the link as a
 * `late` frame, and `#outcome` queries read it, waiting while the call still runs. A call whose answer can never come
 * (connection dropped under it, late window passed) is `lost`.
 *
 * Operations that test an account's password pass the bound on failed checks first (`PasswordChecks`): past it the
 * call is refused as the platform's own "too frequent" result, with the seconds to wait, and never sent.
 *
 * Every call takes its platform into use while it runs (`TradePlatform.use`): a cold standby asleep logs in, and the
 * call waits, within its own budget, for the login and the first resync before its handler runs. The dispatcher
 * counts the calls running and the keyed outcomes not yet delivered to an edge (an answer or `late` frame written on
 * an open link, or a report to `#outcome`), and tells a draining broker when both are none (`whenQuiet`).
 *
 * No answer frame passes `answerMaxBytes` (plus `ANSWER_ENVELOPE_BYTES` for the frame around its `data`): the edge
 * closes its link on a message past workerd's 32 MiB, under every call on it. A larger answer is replaced by an error
 * naming both sizes (`Validation` for a read: ask for less; `Internal` with an unknown outcome for a change, which was
 * made), counted as the outcome `answer_too_large`. Handlers read the bound from their context to stay within it.
 */
import { catalog } from '../../shared/catalog/index.js';
import { OperationError } from '../../shared/errors.js';
import { WRONG_PASSWORD_CODE } from '../../shared/resultCodes.js';
import type { Family } from '../../shared/protocol.js';
import {
  OUTCOME_OP,
  type CallFailed,
  type CallFrame,
  type CallOk,
  type CallResult,
  type LateFrame,
  type OutcomeReport,
  type PagingResult,
} from '../../shared/frames.js';
import { handlers } from '../handlers/registry.js';
import { ANSWER_MAX_BYTES, resultJson, type Handler, type HandlerResult } from '../handlers/handler.js';
import { logs, type Logger } from '../observability/log.js';
import type { BrokerMetrics } from '../observability/metrics.js';
import type { PlatformSet } from '../platforms/platformSet.js';
import type { TradePlatform } from '../platforms/tradePlatform.js';
import { AnswerTooLargeError, ConnectionLostError, DeadlineError, tooFrequent } from '../session/managerErrors.js';
import { CallOutcomes, type CallOutcomesOptions } from './callOutcomes.js';
import { PasswordChecks, type AdmittedCheck, type PasswordCheckLimit } from './passwordChecks.js';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';

/** Operations whose missed deadline leaves the change possibly applied. */
const MUTATING_OPS: ReadonlySet<string> = new Set(catalog.filter((e) => e.mutating).map((e) => e.op));

/** Operations answered from the pumping cache: they wait for a read fence standing on their platform. */
const CACHED_OPS: ReadonlySet<string> = new Set(catalog.filter((e) => e.read === 'cached').map((e) => e.op));

export const PLATFORM_NOT_SERVED = 'trade platform not served by this broker';

/** Why a keyed call that waited for a cold standby's login was not sent. */
export const COLD_START_MISSED =
  "the trade platform's standby session did not log in and resync within the call's budget";

/** Budget bounds: the edge validates 1–300 s; a frame outside them is clamped rather than trusted. */
const MIN_TIMEOUT_MS = 1;
const MAX_TIMEOUT_MS = 300_000;
const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Writes one frame on the link, a string or its UTF-8 bytes; false when the link was no longer open (nothing was
 * written). `binary` sends it as a binary WebSocket frame (the same JSON as UTF-8): the edge then takes a large
 * answer's `data` as bytes, without decoding it to text and encoding it again for its response.
 */
export type Reply = (frame: string | Buffer, binary?: boolean) => boolean | void;

/** Success frames of at least this many characters (or bytes) go as binary frames (`Reply`); smaller ones as text. */
export const BINARY_ANSWER_CHARS = 16 * 1024;

/**
 * A success frame with `data` already JSON text (cached records' JSON, spliced in rather than serialized again); `data`
 * comes last, so the edge can take it without parsing it (shared/frames.ts).
 */
export function okFrameText(id: number, dataJson: string, paging?: PagingResult, pos?: string): string {
  const head =
    (pos !== undefined ? `"pos":${JSON.stringify(pos)},` : '') + (paging ? `"paging":${JSON.stringify(paging)},` : '');
  return `{"id":${JSON.stringify(id)},"ok":true,${head}"data":${dataJson}}`;
}

/** How much longer than its deadline a call under an Idempotency-Key waits for the trading server's answer. */
export const DEFAULT_LATE_ANSWER_MS = 120_000;

export interface DispatcherOptions {
  lateAnswerMs?: number;
  outcomes?: CallOutcomesOptions;
  /** The bound on failed password checks per account (default DEFAULT_PASSWORD_CHECK_LIMIT). */
  passwordChecks?: PasswordCheckLimit;
  /** What one answer's `data` may take, in bytes (default ANSWER_MAX_BYTES). */
  answerMaxBytes?: number;
}

/** What an answer frame may take beyond its `data`: its id, `ok`, paging meta. */
export const ANSWER_ENVELOPE_BYTES = 4096;

/**
 * How a caller of `op` asks for less, by what its operations take: a page (`limit`), a time range, fewer values; or
 * nothing, when the operation has no way to be asked for in parts.
 */
function askForLess(op: string): string {
  const entries = catalog.filter((e) => e.op === op);
  const inputs = new Set(
    entries.flatMap((e) => [...Object.keys(e.query?.shape ?? {}), ...Object.keys(e.params?.shape ?? {})]),
  );
  if (entries.some((e) => e.paged) || inputs.has('limit')) return 'ask for a smaller page (limit)';
  if (['fromTime', 'toTime', 'from', 'to'].some((name) => inputs.has(name))) return 'ask for a shorter time range';
  if (['logins', 'orders', 'tickets'].some((name) => inputs.has(name))) return 'ask for fewer values';
  return 'this operation cannot be asked for in parts';
}

const ASK_FOR_LESS = new Map<string, string>();

/** The refusal of an answer past the bound, in place of its frame, with what `op`'s caller can do instead. */
export function answerTooLarge(bytes: number, maxBytes: number, op = ''): string {
  let hint = ASK_FOR_LESS.get(op);
  if (hint === undefined) ASK_FOR_LESS.set(op, (hint = askForLess(op)));
  return `the answer of ${bytes} bytes is larger than the ${maxBytes} bytes one answer may carry; ${hint}`;
}

/** Why a change's outcome is lost when its answer passed the bound. */
export const ANSWER_LOST = 'the change was made, but its answer was larger than one answer may carry';

/** The UTF-8 size of `text` when it may pass `bound`; 0 when it cannot (three bytes per UTF-16 unit at most). */
function bytesPast(text: string | Buffer, bound: number): number {
  if (typeof text !== 'string') return text.length > bound ? text.length : 0;
  if (text.length * 3 <= bound) return 0;
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes > bound ? bytes : 0;
}

/** The success frame of a call's result: text, or (a list of cached rows) its UTF-8 bytes. */
export function successFrame(id: number, result: HandlerResult, pos?: string): string | Buffer {
  if (result.rows !== undefined) {
    // `okFrameText` with the rows' texts written into it one by one (`rowsFrame`).
    const [head, tail] = okFrameText(id, '[\u0000]', result.paging, pos).split('\u0000');
    return rowsFrame(head, result.rows, tail);
  }
  // Cached records' JSON spliced in.
  if (result.json !== undefined) return okFrameText(id, result.json, result.paging, pos);
  const positioned = pos !== undefined ? { pos } : {};
  return stringifyJson(
    result.paging
      ? ({ id, ok: true, ...positioned, paging: result.paging, data: result.data } satisfies CallOk)
      : ({ id, ok: true, ...positioned, data: result.data } satisfies CallOk),
  );
}

/**
 * A frame's UTF-8 bytes: `head`, the texts separated by commas, `tail`, written into one buffer. The same bytes as
 * the joined string, without ever making it: a string of a page's size is a large V8 object, made and then flattened
 * and measured again on its way to the socket, which cost several times its encoding (docs/perf/2026-11-28-pages.md).
 */
export function rowsFrame(head: string, texts: readonly string[], tail: string): Buffer {
  let bytes = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, texts.length - 1);
  for (const text of texts) bytes += Buffer.byteLength(text);
  const out = Buffer.allocUnsafe(bytes);
  let at = out.write(head, 0);
  for (let i = 0; i < texts.length; i++) {
    if (i > 0) out[at++] = 0x2c;
    at += out.write(texts[i], at);
  }
  at += out.write(tail, at);
  if (at !== bytes) throw new Error(`rowsFrame wrote ${at} of ${bytes} bytes`);
  return out;
}

function isThenable(value: unknown): value is Promise<HandlerResult> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

export function timeoutMessage(timeoutMs: number): string {
  return `the trading server did not answer within ${Number((timeoutMs / 1000).toFixed(3))}s`;
}

export class CallDispatcher {
  readonly outcomes: CallOutcomes;
  readonly passwordChecks: PasswordChecks;
  private readonly lateAnswerMs: number;
  private readonly answerMaxBytes: number;
  /** Calls whose handler (or cold start) has not ended, keyed ones waiting for a late answer included. */
  private runningCalls = 0;
  private quietWaiters: Array<() => void> = [];

  constructor(
    private readonly platforms: PlatformSet,
    private readonly metrics: BrokerMetrics,
    private readonly log: Logger,
    options: DispatcherOptions = {},
  ) {
    this.outcomes = new CallOutcomes(options.outcomes);
    this.passwordChecks = new PasswordChecks(options.passwordChecks);
    this.lateAnswerMs = options.lateAnswerMs ?? DEFAULT_LATE_ANSWER_MS;
    this.answerMaxBytes = options.answerMaxBytes ?? ANSWER_MAX_BYTES;
  }

  get running(): number {
    return this.runningCalls;
  }

  /** No call runs and every ended keyed outcome was delivered. */
  get quiet(): boolean {
    return this.runningCalls === 0 && this.outcomes.undelivered === 0;
  }

  /** Resolves once `quiet` (at once if it is). */
  whenQuiet(): Promise<void> {
    if (this.quiet) return Promise.resolve();
    return new Promise((resolve) => this.quietWaiters.push(resolve));
  }

  private checkQuiet(): void {
    if (this.quietWaiters.length === 0 || !this.quiet) return;
    const waiters = this.quietWaiters;
    this.quietWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Notes that `reply` wrote the ended outcome of `callId` on an open link. */
  private deliveredIf(written: boolean | void, callId: string | undefined): void {
    if (callId === undefined || written === false) return;
    this.outcomes.delivered(callId);
    this.checkQuiet();
  }

  dispatch(frame: CallFrame, reply: Reply): void {
    const started = performance.now();
    const timeoutMs = Number.isFinite(frame.timeoutMs)
      ? Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, frame.timeoutMs))
      : DEFAULT_TIMEOUT_MS;
    if (frame.op === OUTCOME_OP) {
      this.answerOutcome(frame, reply, timeoutMs);
      return;
    }
    const callId = frame.callId;
    if (callId !== undefined && !this.outcomes.begin(callId, frame.platform)) {
      // Never run one call id twice: a repeated frame gets the first one's outcome.
      this.answerRepeat(frame, callId, reply, timeoutMs, started);
      return;
    }
    const entry = handlers.get(frame.op);
    const platform = this.platforms.get(frame.platform);
    if (!platform) {
      this.fail(
        frame,
        reply,
        new OperationError('NotFound', PLATFORM_NOT_SERVED),
        started,
        entry ? frame.op : 'unknown',
      );
      return;
    }
    if (!entry || (entry.family !== null && entry.family !== platform.family)) {
      this.fail(
        frame,
        reply,
        new OperationError('NotFound', `operation ${frame.op} not served`),
        started,
        entry ? frame.op : 'unknown',
      );
      return;
    }

    const args = frame.args ?? {};
    let check: AdmittedCheck | undefined;
    if (entry.passwordCheck) {
      const login = String(args[entry.passwordCheck.login]);
      const admission = this.passwordChecks.admit(platform.id, login);
      if (!admission.ok) {
        this.fail(
          frame,
          reply,
          this.tooManyFailedChecks(platform.family, login, admission.retryAfterSeconds),
          started,
          frame.op,
        );
        return;
      }
      check = admission;
    }

    const sendBy = Date.now() + timeoutMs;
    const lease = platform.use();
    this.runningCalls++;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      lease.release();
      this.runningCalls--;
      this.checkQuiet();
    };
    // A cached read after calls moved here waits for the broker to catch up with the trading server (a read fence).
    const ready = lease.ready ?? (CACHED_OPS.has(frame.op) ? platform.readFence : undefined);
    if (!ready) {
      this.run(frame, reply, entry.run, platform, args, check, sendBy, timeoutMs, started, end);
      return;
    }
    // A cold standby logging in: the call waits for its first resync within its own budget, then runs. Past the
    // budget nothing was sent: a read is a time-out, a write one that was not applied.
    let waiting: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
      waiting = undefined;
      check?.settle(false);
      if (callId === undefined && !MUTATING_OPS.has(frame.op)) this.timeOut(frame, reply, timeoutMs, started);
      else this.fail(frame, reply, new DeadlineError(COLD_START_MISSED), started, frame.op);
      end();
    }, timeoutMs);
    void ready.then(() => {
      if (waiting === undefined) return;
      clearTimeout(waiting);
      waiting = undefined;
      this.run(frame, reply, entry.run, platform, args, check, sendBy, timeoutMs, started, end);
    });
  }

  /** Runs the handler of a call under its deadline and answers it; `end` once the handler has ended, late or not. */
  private run(
    frame: CallFrame,
    reply: Reply,
    handler: Handler,
    platform: TradePlatform,
    args: Record<string, unknown>,
    check: AdmittedCheck | undefined,
    sendBy: number,
    timeoutMs: number,
    started: number,
    end: () => void,
  ): void {
    const callId = frame.callId;
    let result: HandlerResult | Promise<HandlerResult>;
    try {
      result = handler({
        platform,
        args,
        traceId: frame.traceId,
        answerMaxBytes: this.answerMaxBytes,
        deadline: {
          sendBy,
          answerBy: callId === undefined ? sendBy : sendBy + this.lateAnswerMs,
          caller: callerOf(frame),
        },
      });
    } catch (error) {
      check?.settle(wrongPassword(platform.family, error));
      this.fail(frame, reply, error, started, frame.op);
      end();
      return;
    }
    if (!isThenable(result)) {
      // The cached path: answered in the same turn, no timer.
      check?.settle(false);
      this.succeed(frame, reply, result, started, platform);
      end();
      return;
    }

    let settled = false;
    // What is left of the budget: a cold start may have spent some of it.
    const timer = setTimeout(
      () => {
        if (settled) return;
        settled = true;
        this.timeOut(frame, reply, timeoutMs, started);
      },
      Math.max(0, sendBy - Date.now()),
    );
    result.then(
      (value) => {
        clearTimeout(timer);
        check?.settle(false);
        if (!settled) {
          settled = true;
          this.succeed(frame, reply, value, started, platform);
        } else if (callId !== undefined) {
          this.lateOutcome(frame, callId, reply, successResult(value));
        }
        end();
      },
      (error) => {
        clearTimeout(timer);
        check?.settle(wrongPassword(platform.family, error));
        if (!settled) {
          settled = true;
          // A keyed call's handler meets a deadline this early only before sending: `fail` says it was not applied.
          if (error instanceof DeadlineError && callId === undefined) this.timeOut(frame, reply, timeoutMs, started);
          else this.fail(frame, reply, error, started, frame.op);
        } else if (callId !== undefined) {
          this.lateOutcome(frame, callId, reply, this.failure(frame, error));
        }
        end();
      },
    );
  }

  /** The refusal of a password check past the bound: the family's "too frequent" result, with the seconds to wait. */
  private tooManyFailedChecks(family: Family, login: string, retryAfterSeconds: number): OperationError {
    const { failures, windowMs } = this.passwordChecks.limit;
    return tooFrequent(
      family,
      `too many failed password checks of login ${login}: at most ${failures} per ${windowMs / 1000} s; retry after ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }

  /** A keyed call ended after its time-out answer went out: keep the outcome and push it on the link. */
  private lateOutcome(frame: CallFrame, callId: string, reply: Reply, result: CallResult): void {
    const frameOf = (report: LateFrame['late']['report']) =>
      stringifyJson({ late: { callId, report } } satisfies LateFrame);
    let text = result.ok ? frameOf({ state: 'settled', result }) : undefined;
    const bytes = text === undefined ? 0 : bytesPast(text, this.answerMaxBytes + ANSWER_ENVELOPE_BYTES);
    if (bytes) {
      // An answer that could not be carried is neither kept nor pushed: its refusal is, in its place.
      result = this.tooLarge(frame, bytes);
      text = undefined;
    }
    const report = this.record(callId, result, bytes ? ANSWER_LOST : undefined)!;
    text ??= frameOf(report);
    this.deliveredIf(reply(text), callId);
    this.log('info', {
      msg: 'late outcome',
      platform: frame.platform,
      op: frame.op,
      state: report.state,
      ...(frame.traceId ? { traceId: frame.traceId } : {}),
    });
  }

  /**
   * Keeps a keyed call's outcome: a failure that leaves the outcome unknown is `lost` (for `lostReason`, else a
   * reason told by the failure), anything else `settled`.
   */
  private record(
    callId: string | undefined,
    result: CallResult,
    lostReason?: string,
  ): Extract<OutcomeReport, { state: 'settled' | 'lost' }> | null {
    if (callId === undefined) return null;
    if (!result.ok && result.outcome === 'unknown') {
      const reason =
        lostReason ??
        (result.timedOut
          ? "the trading server did not answer within the broker's late-answer window"
          : result.error.code === 'Internal'
            ? 'the broker failed while handling the call'
            : 'the manager connection dropped before the trading server answered');
      this.outcomes.lose(callId, reason);
      return { state: 'lost', reason };
    }
    this.outcomes.settle(callId, result);
    return { state: 'settled', result };
  }

  /** `#outcome`: what became of a call id on this platform, waiting up to the query's budget while it runs. */
  private answerOutcome(frame: CallFrame, reply: Reply, timeoutMs: number): void {
    const answer = (data: OutcomeReport) => {
      const written = reply(stringifyJson({ id: frame.id, ok: true, data } satisfies CallOk));
      if (data.state === 'settled' || data.state === 'lost') this.deliveredIf(written, frame.callId);
    };
    if (typeof frame.callId !== 'string') {
      reply(
        JSON.stringify({
          id: frame.id,
          ok: false,
          error: { code: 'Internal', managerCode: null, message: 'malformed call frame: #outcome needs a callId' },
        } satisfies CallFailed),
      );
      return;
    }
    const report = this.outcomes.query(frame.callId, frame.platform, timeoutMs);
    if (isThenable(report)) void (report as Promise<OutcomeReport>).then(answer);
    else answer(report as OutcomeReport);
  }

  /** A call frame whose id already ran: answered from that run's outcome, never run again. */
  private answerRepeat(frame: CallFrame, callId: string, reply: Reply, timeoutMs: number, started: number): void {
    const answer = (report: OutcomeReport) => {
      if (report.state === 'settled') {
        this.deliveredIf(reply(stringifyJson({ ...report.result, id: frame.id })), callId);
        this.finish(frame, frame.op, 'repeat', started, 'debug');
      } else if (report.state === 'pending') {
        this.timeOut(frame, reply, timeoutMs, started);
      } else {
        const message = report.state === 'lost' ? report.reason : 'call id already used';
        const written = reply(
          JSON.stringify({
            id: frame.id,
            ok: false,
            error: { code: 'NoConnect', managerCode: null, message },
            outcome: 'unknown',
          } satisfies CallFailed),
        );
        if (report.state === 'lost') this.deliveredIf(written, callId);
        this.finish(frame, frame.op, 'repeat', started, 'warn');
      }
    };
    const report = this.outcomes.query(callId, frame.platform, timeoutMs);
    if (isThenable(report)) void (report as Promise<OutcomeReport>).then(answer);
    else answer(report as OutcomeReport);
  }

  /**
   * Answers a call's success, with the position its platform's cache has come to now (`CallOk.pos`): for a change,
   * past the events the trading server sent before its answer.
   */
  private succeed(
    frame: CallFrame,
    reply: Reply,
    result: HandlerResult,
    started: number,
    platform?: TradePlatform,
  ): void {
    const text = successFrame(frame.id, result, platform?.feed?.positionText());
    const bytes = bytesPast(text, this.answerMaxBytes + ANSWER_ENVELOPE_BYTES);
    if (bytes) {
      const failed = this.tooLarge(frame, bytes);
      this.record(frame.callId, failed, ANSWER_LOST);
      this.deliveredIf(reply(stringifyJson({ id: frame.id, ...failed })), frame.callId);
      this.finish(frame, frame.op, 'answer_too_large', started, 'warn', failed.error.message);
      return;
    }
    if (frame.callId !== undefined) this.record(frame.callId, successResult(result));
    this.deliveredIf(reply(text, text.length >= BINARY_ANSWER_CHARS), frame.callId);
    this.finish(frame, frame.op, 'ok', started, 'debug');
  }

  /**
   * What is answered in place of an answer of `bytes` past the bound: a read is refused (asking for less gets an
   * answer); a change was made, so its outcome is unknown to the caller, as when its answer is lost.
   */
  private tooLarge(frame: CallFrame, bytes: number): Omit<CallFailed, 'id'> {
    const message = answerTooLarge(bytes, this.answerMaxBytes, frame.op);
    return MUTATING_OPS.has(frame.op)
      ? { ok: false, error: { code: 'Internal', managerCode: null, message }, outcome: 'unknown' }
      : { ok: false, error: { code: 'Validation', managerCode: null, message } };
  }

  private timeOut(frame: CallFrame, reply: Reply, timeoutMs: number, started: number): void {
    const answer: CallFailed = {
      id: frame.id,
      ok: false,
      timedOut: true,
      error: { code: 'NoConnect', managerCode: null, message: timeoutMessage(timeoutMs) },
    };
    if (MUTATING_OPS.has(frame.op)) answer.outcome = 'unknown';
    reply(JSON.stringify(answer));
    this.finish(frame, frame.op, 'timeout', started, 'warn');
  }

  private fail(frame: CallFrame, reply: Reply, error: unknown, started: number, op: string): void {
    const failed = this.failure(frame, error);
    this.record(frame.callId, failed);
    this.deliveredIf(reply(stringifyJson({ id: frame.id, ...failed })), frame.callId);
    const level = failed.error.code === 'Internal' || failed.error.code === 'NoConnect' ? 'warn' : 'debug';
    this.finish(frame, op, failed.error.code, started, level, failed.error.message);
  }

  /** A handler's failure as an answer frame (without its id). */
  private failure(frame: CallFrame, error: unknown): Omit<CallFailed, 'id'> {
    let failure: OperationError;
    if (error instanceof AnswerTooLargeError) {
      // The trading server's answer was left unread: refused as an answer past the bound is.
      return this.tooLarge(frame, error.bytes);
    } else if (error instanceof OperationError) {
      failure = error;
    } else {
      failure = new OperationError('Internal', 'the broker failed to handle the call');
      this.log('error', {
        msg: 'handler failed',
        op: frame.op,
        platform: frame.platform,
        traceId: frame.traceId,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
    const answer: Omit<CallFailed, 'id'> = {
      ok: false,
      error: { code: failure.code, managerCode: failure.managerCode, message: failure.message },
      ...(failure.data !== null && failure.data !== undefined ? { data: failure.data } : {}),
      ...(failure.retryAfterSeconds !== null ? { retryAfterSeconds: failure.retryAfterSeconds } : {}),
      ...(failure.notImplemented ? { notImplemented: true as const } : {}),
    };
    if (MUTATING_OPS.has(frame.op)) {
      if (failure instanceof DeadlineError && failure.sent) {
        // Only keyed calls get here: their late-answer window passed with the command on the wire.
        answer.timedOut = true;
        answer.outcome = 'unknown';
      } else if (failure instanceof DeadlineError) {
        answer.timedOut = true;
        answer.error.message = 'the call was not sent: its deadline passed before the manager session was ready';
      } else if (failure instanceof ConnectionLostError || !(error instanceof OperationError)) {
        // The connection dropped under it, or the handler failed unexpectedly: the change may have been applied.
        answer.outcome = 'unknown';
      }
    }
    return answer;
  }

  private finish(
    frame: CallFrame,
    op: string,
    outcome: string,
    started: number,
    level: 'debug' | 'warn',
    error?: string,
  ): void {
    const ms = performance.now() - started;
    this.metrics.observe(op, outcome, ms / 1000);
    if (!logs(this.log, level)) return;
    this.log(level, {
      msg: 'call answered',
      platform: frame.platform,
      op: frame.op,
      outcome,
      ms: Math.round(ms * 1000) / 1000,
      ...(frame.traceId ? { traceId: frame.traceId } : {}),
      ...(error ? { error } : {}),
    });
  }
}

/** Who a call is for, as the manager session shares itself (`FairUse`): the frame's client, bounded; none is ''. */
function callerOf(frame: CallFrame): string {
  return typeof frame.client === 'string' ? frame.client.slice(0, 255) : '';
}

/** The trading server answered that the login or the password of a check is wrong. */
function wrongPassword(family: Family, error: unknown): boolean {
  return error instanceof OperationError && error.managerCode === WRONG_PASSWORD_CODE[family];
}

function successResult(result: HandlerResult): CallResult {
  const json = resultJson(result);
  const data = json !== undefined ? parseJson(json) : result.data;
  return result.paging ? { ok: true, data, paging: result.paging } : { ok: true, data };
}
