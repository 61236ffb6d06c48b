import { resultJson } from '../../../broker/handlers/handler.js';
/**
 * What the custom handler tests share: a scripted manager session that records every command it is sent and answers
 * (or fails) as the test scripts, a real pumping cache loaded from records by one resync, a platform made of the two,
 * and exact checks of an operation failure. Nothing here opens a socket, starts a process or waits on a timer.
 */
import { expect } from 'vitest';
import type { Operation } from '../../../shared/catalog/index.js';
import { OperationError, type WebApiErrorCode } from '../../../shared/errors.js';
import type { EventKind, Family, ManagerEvent } from '../../../shared/protocol.js';
import { PumpCache } from '../../../broker/cache/pumpCache.js';
import type { TradePlatform } from '../../../broker/platforms/tradePlatform.js';
import type { FailureContext } from '../../../broker/session/managerErrors.js';
import type { CallDeadline } from '../../../broker/session/managerSession.js';
import type { HandlerContext, HandlerResult } from '../../../broker/handlers/handler.js';
import type { Binding } from '../../../broker/handlers/custom/bind.js';

/** The deadline every test call carries: handlers must hand it on to the session as they got it. */
export const DEADLINE: CallDeadline = { sendBy: 1_700_000_000_111, answerBy: 1_700_000_000_222 };

/** One command as the handler sent it. `context` is the fourth argument, undefined when the handler passed none. */
export interface SentRequest {
  command: string;
  args: Record<string, unknown> | undefined;
  deadline: CallDeadline;
  context: FailureContext | undefined;
}

type Scripted = { command: string; answer: unknown } | { command: string; error: unknown };

/** A manager session answering a script, step by step; a command out of script fails the call loudly. */
export class ScriptedSession {
  readonly sent: SentRequest[] = [];
  readonly reconnects: string[] = [];
  private readonly script: Scripted[] = [];

  /** The next request must be `command`; it resolves with `answer` (a promise is awaited). */
  answers(command: string, answer: unknown): this {
    this.script.push({ command, answer });
    return this;
  }

  /** The next request must be `command`; it rejects with `error`. */
  fails(command: string, error: unknown): this {
    this.script.push({ command, error });
    return this;
  }

  /** Scripted steps not asked for yet. */
  get unused(): number {
    return this.script.length;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- the session's request: an unscripted or failing call rejects, as the real one does
  async request(
    command: string,
    args: Record<string, unknown> | undefined,
    deadline: CallDeadline,
    context?: FailureContext,
  ): Promise<unknown> {
    this.sent.push({ command, args, deadline, context });
    const next = this.script.shift();
    if (!next) throw new Error(`unscripted request ${command}`);
    if (next.command !== command) throw new Error(`request ${command} where ${next.command} was scripted`);
    if ('error' in next) throw next.error;
    return next.answer;
  }

  reconnect(reason: string): void {
    this.reconnects.push(reason);
  }
}

/** A sent command as tests expect it. */
export function sent(
  command: string,
  args: Record<string, unknown> | undefined,
  context?: FailureContext,
): SentRequest {
  return { command, args, deadline: DEADLINE, context };
}

/** Records of a snapshot by resync kind (`margin`, not `margins`), in the order the server would send them. */
export type Snapshot = Partial<Record<Exclude<EventKind, 'resync'>, unknown[]>>;

const resyncEvent = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({
  event: 'resync',
  op,
  record,
});

/** Applies one complete resync of `snapshot` to the cache. */
export function resync(cache: PumpCache, snapshot: Snapshot): void {
  cache.apply(resyncEvent('begin'));
  for (const [kind, items] of Object.entries(snapshot)) cache.apply(resyncEvent('chunk', { kind, items }));
  cache.apply(resyncEvent('end'));
}

/** A ready cache of `family` holding `snapshot`. Its clock is fixed: nothing reads the wall clock. */
export function cacheOf(family: Family, snapshot: Snapshot = {}): PumpCache {
  const cache = new PumpCache(family, { clock: () => 0 });
  resync(cache, snapshot);
  return cache;
}

/** One change-stream event applied to the cache. */
export function change(
  cache: PumpCache,
  event: Exclude<EventKind, 'resync'>,
  op: 'add' | 'update' | 'delete',
  record: unknown,
): void {
  cache.apply({ event, op, record });
}

/** A platform as handlers see it: its family, its manager session and its cache. */
export function platformOf(
  family: Family,
  parts: { session?: ScriptedSession; cache?: PumpCache } = {},
): TradePlatform {
  return {
    family,
    session: parts.session ?? new ScriptedSession(),
    cache: parts.cache ?? new PumpCache(family, { clock: () => 0 }),
  } as unknown as TradePlatform;
}

/** The handler a list of bindings binds to `entry`; exactly one must. */
export function handlerOf(bindings: readonly Binding[], entry: Operation): Binding[1] {
  const found = bindings.filter(([op]) => op === entry.op);
  if (found.length !== 1) throw new Error(`${entry.op} is bound ${found.length} times in this list`);
  return found[0][1];
}

/** Calls the handler `bindings` bind to `entry` with `args` on `platform`, under DEADLINE. */
export function call(
  bindings: readonly Binding[],
  entry: Operation,
  platform: TradePlatform,
  args: Record<string, unknown> = {},
): HandlerResult | Promise<HandlerResult> {
  const ctx: HandlerContext = { platform, args, deadline: DEADLINE };
  return asJson(handlerOf(bindings, entry)(ctx));
}

/**
 * A result whose rows are answered as texts (`rows`) as the one JSON text they make (`json`), so tests compare
 * answers as text whichever way a handler gives them; the frame written from `rows` is tested in
 * broker/link/callDispatcher.test.ts.
 */
export function asJson(result: HandlerResult | Promise<HandlerResult>): HandlerResult | Promise<HandlerResult> {
  const convert = (r: HandlerResult): HandlerResult => {
    if (r.rows === undefined) return r;
    const { rows: _rows, ...rest } = r;
    return { ...rest, json: resultJson(r) };
  };
  return result instanceof Promise ? result.then(convert) : convert(result);
}

/** What a call threw or rejected with; fails when it succeeded. */
export async function failureOf(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

export interface ExpectedFailure {
  code: WebApiErrorCode;
  message: string;
  /** Default null. */
  managerCode?: number | null;
  /** Default null. */
  data?: unknown;
}

/** Checks that the call failed with exactly this OperationError (class, code, full message, manager code, data). */
export async function expectOperationError(run: () => unknown, expected: ExpectedFailure): Promise<OperationError> {
  const error = await failureOf(run);
  expect(error).toBeInstanceOf(OperationError);
  const e = error as OperationError;
  expect({ name: e.name, code: e.code, message: e.message, managerCode: e.managerCode, data: e.data }).toEqual({
    name: 'OperationError',
    managerCode: null,
    data: null,
    ...expected,
  });
  return e;
}

/** Checks that the call failed with a plain Error (not an OperationError) of exactly this message. */
export async function expectPlainError(run: () => unknown, message: string): Promise<void> {
  const error = await failureOf(run);
  expect(error).toBeInstanceOf(Error);
  expect(error).not.toBeInstanceOf(OperationError);
  expect((error as Error).message).toBe(message);
}

/** The rows of a `json` or `rows` answer, read as plain JSON. */
export function rowsOf(result: HandlerResult): Array<Record<string, unknown>> {
  expect(result.data).toBeUndefined();
  const json = resultJson(result);
  expect(typeof json).toBe('string');
  return JSON.parse(json!) as Array<Record<string, unknown>>;
}
