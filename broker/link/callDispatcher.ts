/**
 * Turns one call frame into one answer frame: finds the platform and the handler, runs it under the call's deadline
 * and shapes the outcome (`CallOk` / `CallFailed`). The deadline is enforced here, once, so every handler gets the
 * same time-out semantics: past `timeoutMs` the caller is told the trading server did not answer, and for a mutating
 * operation that the change may still happen (`outcome: "unknown"`).
 */
import { catalog } from '../../shared/catalog/index.js';
import { OperationError } from '../../shared/errors.js';
import type { CallFailed, CallFrame, CallOk } from '../../shared/frames.js';
import { handlers } from '../handlers/registry.js';
import type { HandlerResult } from '../handlers/handler.js';
import { logs, type Logger } from '../observability/log.js';
import type { BrokerMetrics } from '../observability/metrics.js';
import type { PlatformSet } from '../platforms/platformSet.js';
import { ConnectionLostError, DeadlineError } from '../session/managerErrors.js';

/** Operations whose missed deadline leaves the change possibly applied. */
const MUTATING_OPS: ReadonlySet<string> = new Set(catalog.filter((e) => e.mutating).map((e) => e.op));

export const PLATFORM_NOT_SERVED = 'trade platform not served by this broker';

/** Budget bounds: the edge validates 1–300 s; a frame outside them is clamped rather than trusted. */
const MIN_TIMEOUT_MS = 1;
const MAX_TIMEOUT_MS = 300_000;
const DEFAULT_TIMEOUT_MS = 10_000;

export type Reply = (text: string) => void;

function isThenable(value: unknown): value is Promise<HandlerResult> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

export function timeoutMessage(timeoutMs: number): string {
  return `the trading server did not answer within ${Number((timeoutMs / 1000).toFixed(3))}s`;
}

export class CallDispatcher {
  constructor(
    private readonly platforms: PlatformSet,
    private readonly metrics: BrokerMetrics,
    private readonly log: Logger,
  ) {}

  dispatch(frame: CallFrame, reply: Reply): void {
    const started = performance.now();
    const timeoutMs = Number.isFinite(frame.timeoutMs)
      ? Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, frame.timeoutMs))
      : DEFAULT_TIMEOUT_MS;
    const entry = handlers.get(frame.op);
    const platform = this.platforms.get(frame.platform);
    if (!platform) {
      this.fail(frame, reply, new OperationError('NotFound', PLATFORM_NOT_SERVED), started, entry ? frame.op : 'unknown');
      return;
    }
    if (!entry || (entry.family !== null && entry.family !== platform.family)) {
      this.fail(frame, reply, new OperationError('NotFound', `operation ${frame.op} not served`), started, entry ? frame.op : 'unknown');
      return;
    }

    let result: HandlerResult | Promise<HandlerResult>;
    try {
      result = entry.run({ platform, args: frame.args ?? {}, deadline: Date.now() + timeoutMs, traceId: frame.traceId });
    } catch (error) {
      this.fail(frame, reply, error, started, frame.op);
      return;
    }
    if (!isThenable(result)) {
      // The cached path: answered in the same turn, no timer.
      this.succeed(frame, reply, result, started);
      return;
    }

    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      this.timeOut(frame, reply, timeoutMs, started);
    }, timeoutMs);
    result.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.succeed(frame, reply, value, started);
      },
      (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error instanceof DeadlineError) this.timeOut(frame, reply, timeoutMs, started);
        else this.fail(frame, reply, error, started, frame.op);
      },
    );
  }

  private succeed(frame: CallFrame, reply: Reply, result: HandlerResult, started: number): void {
    if (result.json !== undefined) {
      // Same frame as below, with the cached records' JSON spliced in rather than serialized again.
      const paging = result.paging ? `,"paging":${JSON.stringify(result.paging)}` : '';
      reply(`{"id":${JSON.stringify(frame.id)},"ok":true,"data":${result.json}${paging}}`);
    } else {
      const answer: CallOk = result.paging
        ? { id: frame.id, ok: true, data: result.data, paging: result.paging }
        : { id: frame.id, ok: true, data: result.data };
      reply(JSON.stringify(answer));
    }
    this.finish(frame, frame.op, 'ok', started, 'debug');
  }

  private timeOut(frame: CallFrame, reply: Reply, timeoutMs: number, started: number): void {
    const answer: CallFailed = {
      id: frame.id, ok: false, timedOut: true,
      error: { code: 'NoConnect', managerCode: null, message: timeoutMessage(timeoutMs) },
    };
    if (MUTATING_OPS.has(frame.op)) answer.outcome = 'unknown';
    reply(JSON.stringify(answer));
    this.finish(frame, frame.op, 'timeout', started, 'warn');
  }

  private fail(frame: CallFrame, reply: Reply, error: unknown, started: number, op: string): void {
    let failure: OperationError;
    if (error instanceof OperationError) {
      failure = error;
    } else {
      failure = new OperationError('Internal', 'the broker failed to handle the call');
      this.log('error', {
        msg: 'handler failed', op: frame.op, platform: frame.platform, traceId: frame.traceId,
        error: error instanceof Error ? error.stack ?? error.message : String(error),
      });
    }
    const answer: CallFailed = {
      id: frame.id, ok: false,
      error: { code: failure.code, managerCode: failure.managerCode, message: failure.message },
      ...(failure.data !== null && failure.data !== undefined ? { data: failure.data } : {}),
    };
    // A mutating call that failed because the connection dropped under it may still have been applied.
    if (failure instanceof ConnectionLostError && MUTATING_OPS.has(frame.op)) {
      answer.outcome = 'unknown';
    }
    reply(JSON.stringify(answer));
    const level = failure.code === 'Internal' || failure.code === 'NoConnect' ? 'warn' : 'debug';
    this.finish(frame, op, failure.code, started, level, failure.message);
  }

  private finish(frame: CallFrame, op: string, outcome: string, started: number, level: 'debug' | 'warn', error?: string): void {
    const ms = performance.now() - started;
    this.metrics.observe(op, outcome, ms / 1000);
    if (!logs(this.log, level)) return;
    this.log(level, {
      msg: 'call answered', platform: frame.platform, op: frame.op, outcome, ms: Math.round(ms * 1000) / 1000,
      ...(frame.traceId ? { traceId: frame.traceId } : {}), ...(error ? { error } : {}),
    });
  }
}
