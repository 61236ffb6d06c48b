/**
 * The call dispatcher in-process: one call frame in, one answer frame out, against a platform whose pumping cache is
 * filled by resync events and whose manager session is a scripted trading server (each request answered, refused or
 * left hanging as the test says). Checked: the answer frames byte for byte (cached JSON spliced in, paging), the
 * refusals (platform not served, operation not served or of the other family), the deadline (clamped, the time-out
 * answer, `outcome: "unknown"` for mutating operations only), failures as the edge sees them, the deadline handed to
 * the handler, calls under an Idempotency-Key: run once, late outcomes pushed, `#outcome` answered, and the bound on
 * failed password checks: past it a check is refused with the family's too-frequent code and never sent, and the
 * bound on one answer: a frame past it is never written, a refusal naming both sizes goes in its place.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OperationError } from '../../shared/errors.js';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';
import { OUTCOME_OP, type CallFrame } from '../../shared/frames.js';
import type { ManagerEvent } from '../../shared/protocol.js';
import { PumpCache } from '../cache/pumpCache.js';
import type { LogFields, Logger, LogLevel } from '../observability/log.js';
import type { BrokerMetrics } from '../observability/metrics.js';
import type { PlatformSet } from '../platforms/platformSet.js';
import type { TradePlatform } from '../platforms/tradePlatform.js';
import type { CallDeadline } from '../session/managerSession.js';
import { ConnectionLostError, DeadlineError, undeclaredRefusal } from '../session/managerErrors.js';
import {
  ANSWER_ENVELOPE_BYTES,
  ANSWER_LOST,
  answerTooLarge,
  CallDispatcher,
  DEFAULT_LATE_ANSWER_MS,
  PLATFORM_NOT_SERVED,
  rowsFrame,
  timeoutMessage,
  BINARY_ANSWER_CHARS,
} from './callDispatcher.js';

const PF4 = 'pf4-platform';
const PF5 = 'pf5-platform';

type Request = { cmd: string; args: unknown; deadline: CallDeadline };

/**
 * A trading server the test scripts: `answer` decides each request's fate; every request is recorded. Its login
 * declared every command and event kind but those in `undeclaredNames`.
 */
class ScriptedSession {
  readonly requests: Request[] = [];
  readonly undeclaredNames = new Set<string>();
  readonly declared = {};
  answer: (cmd: string, args: unknown) => Promise<unknown> = () => new Promise(() => {});
  request(cmd: string, args: unknown, deadline: CallDeadline): Promise<unknown> {
    this.requests.push({ cmd, args, deadline });
    return this.answer(cmd, args);
  }
  undeclared(commands: readonly string[], events: readonly string[]): OperationError | undefined {
    const missing = (names: readonly string[]) => names.filter((n) => this.undeclaredNames.has(n));
    const [c, e] = [missing(commands), missing(events)];
    return c.length || e.length ? undeclaredRefusal('PF4', c, e) : undefined;
  }
}

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const resync = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({ event: 'resync', op, record });

function setup(options: ConstructorParameters<typeof CallDispatcher>[3] = {}, level: LogLevel | 'off' = 'debug') {
  const session = new ScriptedSession();
  const cache = new PumpCache('PF4');
  cache.apply(resync('begin'));
  cache.apply(
    resync('chunk', {
      kind: 'users',
      items: [
        { login: 1, name: 'Ann', group: 'demo' },
        { login: 2, name: 'Bob', group: 'demo' },
        { login: 3, name: 'Cy', group: 'demo' },
      ],
    }),
  );
  cache.apply(resync('chunk', { kind: 'online', items: [{ login: 1 }, { login: 2 }, { login: 3 }] }));
  cache.apply(resync('end'));
  const pf5Cache = new PumpCache('PF5');
  // Hot platforms: a call takes them into use and never waits.
  const use = () => ({ release() {}, ready: null });
  const served = new Map<string, unknown>([
    [PF4, { id: PF4, family: 'PF4', cache, session, use }],
    [PF5, { id: PF5, family: 'PF5', cache: pf5Cache, session, use }],
  ]);
  const platforms = { get: (id: string) => served.get(id) as TradePlatform | undefined } as unknown as PlatformSet;
  const observed: Array<{ op: string; outcome: string; seconds: number }> = [];
  const metrics = {
    observe: (op: string, outcome: string, seconds: number) => {
      observed.push({ op, outcome, seconds });
    },
  } as unknown as BrokerMetrics;
  const logged: Array<{ level: LogLevel; fields: LogFields }> = [];
  const log = Object.assign(
    (l: LogLevel, fields: LogFields) => {
      logged.push({ level: l, fields });
    },
    { minLevel: level },
  ) as Logger;
  const dispatcher = new CallDispatcher(platforms, metrics, log, options);
  const replies: string[] = [];
  /** Per reply, whether it went as a binary frame. */
  const binary: boolean[] = [];
  // Frames written as bytes are read back as the text they carry.
  const reply = (text: string | Buffer, asBinary?: boolean) => {
    replies.push(typeof text === 'string' ? text : text.toString('utf8'));
    binary.push(asBinary === true);
  };
  let nextId = 1;
  const call = (frame: Partial<CallFrame> & { op: string }) => {
    const full = { id: nextId++, platform: PF4, args: {}, timeoutMs: 5000, ...frame };
    dispatcher.dispatch(full, reply);
    return full.id;
  };
  const parsed = () => replies.map((r) => JSON.parse(r) as Record<string, unknown>);
  return {
    session,
    cache,
    dispatcher,
    replies,
    binary,
    reply,
    call,
    parsed,
    observed,
    logged,
    pf4: served.get(PF4) as { readFence?: Promise<void> },
  };
}

/** Waits (bounded) until `n` replies went out. */
async function replies(list: string[], n: number): Promise<void> {
  await vi.waitFor(
    () => {
      if (list.length < n) throw new Error(`${list.length} of ${n} replies`);
    },
    { timeout: 5000, interval: 2 },
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe('answering calls', () => {
  it("answers a cached read in the same turn with the record's JSON spliced in, and counts it", () => {
    const t = setup();
    const id = t.call({ op: 'PF4.UserRecordGet', args: { login: 2 }, traceId: 'trace-1' });
    expect(t.replies).toHaveLength(1);
    const answer = JSON.parse(t.replies[0]);
    expect(answer).toMatchObject({ id, ok: true, data: { login: 2, name: 'Bob', group: 'demo' } });
    expect(Object.keys(answer)).toStrictEqual(['id', 'ok', 'data']);
    expect(t.observed).toHaveLength(1);
    expect(t.observed[0]).toMatchObject({ op: 'PF4.UserRecordGet', outcome: 'ok' });
    expect(t.observed[0].seconds).toBeGreaterThanOrEqual(0);
    expect(t.logged).toStrictEqual([
      {
        level: 'debug',
        fields: expect.objectContaining({
          msg: 'call answered',
          platform: PF4,
          op: 'PF4.UserRecordGet',
          outcome: 'ok',
          traceId: 'trace-1',
          ms: expect.any(Number),
        }),
      },
    ]);
    expect(t.logged[0].fields).not.toHaveProperty('error');
  });

  it('sends a success frame of BINARY_ANSWER_CHARS characters or more as a binary frame, smaller ones and failures as text', async () => {
    const t = setup();
    const answerOf = (name: string) => () => Promise.resolve([{ login: 9, name }]);
    t.session.answer = answerOf('');
    t.call({ op: 'PF4.CfgRequestManager' });
    await replies(t.replies, 1);
    // The frame without a name, then with one that makes it BINARY_ANSWER_CHARS long, then one character shorter.
    const pad = BINARY_ANSWER_CHARS - t.replies[0].length;
    t.session.answer = answerOf('n'.repeat(pad));
    t.call({ op: 'PF4.CfgRequestManager' });
    await replies(t.replies, 2);
    t.session.answer = answerOf('n'.repeat(pad - 1));
    t.call({ op: 'PF4.CfgRequestManager' });
    await replies(t.replies, 3);
    t.call({ op: 'PF4.UserRecordGet', args: { login: 99 } });
    await replies(t.replies, 4);
    expect(t.replies.slice(1, 3).map((r) => r.length)).toStrictEqual([BINARY_ANSWER_CHARS, BINARY_ANSWER_CHARS - 1]);
    expect(t.parsed()[1]).toMatchObject({ id: 2, ok: true, data: [{ login: 9, name: 'n'.repeat(pad) }] });
    expect(t.parsed()[3]).toMatchObject({ id: 4, ok: false, error: { code: 'NotFound' } });
    expect(t.binary).toStrictEqual([false, true, false, false]);
  });

  it("writes a cached list as its frame's bytes: binary from BINARY_ANSWER_CHARS bytes, the same JSON as the text", () => {
    const t = setup();
    const small = t.call({ op: 'PF4.OnlineGet', args: { limit: 2 } });
    expect(t.binary).toStrictEqual([false]);
    expect(t.parsed()[0]).toMatchObject({ id: small, ok: true });
    const rows = Array.from({ length: 40 }, (_, i) => ({ login: 1000 + i, group: 'demo', name: 'é'.repeat(300) }));
    t.cache.apply(resync('begin'));
    t.cache.apply(resync('chunk', { kind: 'users', items: rows }));
    t.cache.apply(resync('end'));
    const big = t.call({ op: 'PF4.UsersGet' });
    expect(t.binary).toStrictEqual([false, true]);
    expect(t.parsed()[1]).toMatchObject({ id: big, ok: true });
    expect((t.parsed()[1].data as Array<{ login: number; name: string }>).map((u) => [u.login, u.name])).toStrictEqual(
      rows.map((r) => [r.login, r.name]),
    );
  });

  it('puts the paging before the data of a paged cached list', () => {
    const t = setup();
    const id = t.call({ op: 'PF4.OnlineGet', args: { limit: 2 } });
    expect(t.replies[0]).toMatch(
      new RegExp(`^\\{"id":${id},"ok":true,"paging":\\{"nextCursor":"[^"]+","hasMore":true\\},"data":\\[`),
    );
    const answer = JSON.parse(t.replies[0]);
    expect(answer.data.map((u: { login: number }) => u.login)).toStrictEqual([1, 2]);
    expect(answer.paging.hasMore).toBe(true);
  });

  it('answers a live read with the data the handler made, paging first when it pages', async () => {
    const t = setup();
    t.session.answer = () =>
      Promise.resolve([
        { login: 7, name: 'M7' },
        { login: 5, name: 'M5' },
      ]);
    const id = t.call({ op: 'PF4.CfgRequestManager', args: { limit: 1 } });
    await replies(t.replies, 1);
    const answer = JSON.parse(t.replies[0]);
    expect(Object.keys(answer)).toStrictEqual(['id', 'ok', 'paging', 'data']);
    expect(answer).toMatchObject({ id, ok: true, paging: { hasMore: true, nextCursor: expect.any(String) } });
    expect(answer.data).toHaveLength(1);
    expect(answer.data[0]).toMatchObject({ login: 5, name: 'M5' });

    t.session.answer = () => Promise.resolve('2024-05-06T07:08:09Z');
    const second = t.call({ op: 'ServerTime' });
    await replies(t.replies, 2);
    const time = JSON.parse(t.replies[1]);
    expect(Object.keys(time)).toStrictEqual(['id', 'ok', 'data']);
    expect(time.id).toBe(second);
    expect(time.ok).toBe(true);
  });

  it('refuses a platform it does not serve, naming the operation only when it exists', () => {
    const t = setup();
    t.call({ op: 'PF4.UserRecordGet', platform: 'elsewhere', args: { login: 1 } });
    t.call({ op: 'PF9.Nothing', platform: 'elsewhere' });
    expect(t.parsed()).toStrictEqual([
      { id: 1, ok: false, error: { code: 'NotFound', managerCode: null, message: PLATFORM_NOT_SERVED } },
      { id: 2, ok: false, error: { code: 'NotFound', managerCode: null, message: PLATFORM_NOT_SERVED } },
    ]);
    expect(t.observed.map((o) => [o.op, o.outcome])).toStrictEqual([
      ['PF4.UserRecordGet', 'NotFound'],
      ['unknown', 'NotFound'],
    ]);
    // A refusal is the caller's business: logged at debug, with the message.
    expect(t.logged.map((l) => l.level)).toStrictEqual(['debug', 'debug']);
    expect(t.logged[0].fields).toMatchObject({
      msg: 'call answered',
      op: 'PF4.UserRecordGet',
      outcome: 'NotFound',
      error: PLATFORM_NOT_SERVED,
    });
    expect(t.logged[0].fields).not.toHaveProperty('traceId');
  });

  it('refuses an operation it has no handler for, and one of the other family', () => {
    const t = setup();
    t.call({ op: 'PF4.NoSuchThing' });
    t.call({ op: 'PF5.UserGet', args: { login: 1 } });
    t.call({ op: 'PF4.UserRecordGet', platform: PF5, args: { login: 1 } });
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        error: { code: 'NotFound', managerCode: null, message: 'operation PF4.NoSuchThing not served' },
      },
      { id: 2, ok: false, error: { code: 'NotFound', managerCode: null, message: 'operation PF5.UserGet not served' } },
      {
        id: 3,
        ok: false,
        error: { code: 'NotFound', managerCode: null, message: 'operation PF4.UserRecordGet not served' },
      },
    ]);
    expect(t.observed.map((o) => o.op)).toStrictEqual(['unknown', 'PF5.UserGet', 'PF4.UserRecordGet']);
    expect(t.session.requests).toHaveLength(0);
  });

  it('answers a family-agnostic operation on either family', async () => {
    const t = setup();
    t.session.answer = () => Promise.resolve({ time: '2024-01-01T00:00:00Z' });
    t.call({ op: 'Ping', platform: PF5 });
    await replies(t.replies, 1);
    expect(JSON.parse(t.replies[0])).toMatchObject({
      id: 1,
      ok: true,
      data: { ok: true, serverTime: '2024-01-01T00:00:00Z' },
    });
  });

  it('answers a not-found the handler throws in the same turn as a refusal', () => {
    const t = setup();
    t.call({ op: 'PF4.UserRecordGet', args: { login: 99 } });
    expect(t.parsed()).toStrictEqual([
      { id: 1, ok: false, error: { code: 'NotFound', managerCode: 3, message: 'login 99 not found' } },
    ]);
    expect(t.observed[0]).toMatchObject({ op: 'PF4.UserRecordGet', outcome: 'NotFound' });
  });

  it('hands the handler the deadline: one instant, or for a keyed call the send and answer bounds, and the caller', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const t = setup({ lateAnswerMs: 777 });
    t.call({ op: 'ServerTime', timeoutMs: 2500, client: 'back-office' });
    t.call({ op: 'PF4.UserRecordNew', timeoutMs: 2500, callId: 'k1', args: { body: { name: 'X', group: 'demo' } } });
    t.call({ op: 'ServerTime', timeoutMs: 2500, client: 'c'.repeat(300) });
    expect(t.session.requests.map((r) => r.deadline)).toStrictEqual([
      { sendBy: 1_002_500, answerBy: 1_002_500, caller: 'back-office' },
      { sendBy: 1_002_500, answerBy: 1_003_277, caller: '' },
      { sendBy: 1_002_500, answerBy: 1_002_500, caller: 'c'.repeat(255) },
    ]);
    const d = setup();
    d.call({ op: 'PF4.UserRecordNew', timeoutMs: 1000, callId: 'k2', args: { body: { name: 'X', group: 'demo' } } });
    expect(d.session.requests[0].deadline).toStrictEqual({
      sendBy: 1_001_000,
      answerBy: 1_001_000 + DEFAULT_LATE_ANSWER_MS,
      caller: '',
    });
  });
});

describe('read fences', () => {
  it('holds cached reads of a platform while its read fence stands, and answers them once it falls; live calls go on', async () => {
    const t = setup();
    let fall!: () => void;
    t.pf4.readFence = new Promise<void>((resolve) => {
      fall = resolve;
    });
    t.session.answer = () => Promise.resolve('2026-12-01T00:00:00Z');
    t.call({ op: 'PF4.UserRecordGet', args: { login: 2 } });
    t.call({ op: 'ServerTime' });
    await replies(t.replies, 1);
    expect(t.parsed()).toMatchObject([{ id: 2, ok: true, data: '2026-12-01T00:00:00Z' }]);
    t.cache.apply({ event: 'users', op: 'update', record: { login: 2, name: 'Bob after', group: 'demo' } });
    fall();
    await replies(t.replies, 2);
    // Answered after the fence, from the cache as it is then.
    expect(t.parsed()[1]).toMatchObject({ id: 1, ok: true, data: { login: 2, name: 'Bob after' } });
  });

  it('answers a cached read whose budget ends before the fence falls as a time-out', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    t.pf4.readFence = new Promise<void>(() => {});
    t.call({ op: 'PF4.UserRecordGet', args: { login: 2 }, timeoutMs: 1000 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        timedOut: true,
        error: { code: 'NoConnect', managerCode: null, message: 'the trading server did not answer within 1s' },
      },
    ]);
  });
});

describe('deadlines', () => {
  it('times out a live call with a NoConnect time-out, outcome unknown only for a mutating operation', () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    t.call({ op: 'ServerTime', timeoutMs: 1500, traceId: 'tr' });
    t.call({ op: 'PF4.UserRecordNew', timeoutMs: 1500, args: { body: { name: 'X', group: 'demo' } } });
    vi.advanceTimersByTime(1499);
    expect(t.replies).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        timedOut: true,
        error: { code: 'NoConnect', managerCode: null, message: 'the trading server did not answer within 1.5s' },
      },
      {
        id: 2,
        ok: false,
        timedOut: true,
        error: { code: 'NoConnect', managerCode: null, message: 'the trading server did not answer within 1.5s' },
        outcome: 'unknown',
      },
    ]);
    expect(t.observed.map((o) => o.outcome)).toStrictEqual(['timeout', 'timeout']);
    expect(t.logged.map((l) => [l.level, l.fields.outcome])).toStrictEqual([
      ['warn', 'timeout'],
      ['warn', 'timeout'],
    ]);
    expect(t.logged[0].fields.traceId).toBe('tr');
  });

  it('ignores an answer that comes after the time-out of a call without a call id', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    const late = deferred<unknown>();
    t.session.answer = () => late.promise;
    t.call({ op: 'ServerTime', timeoutMs: 100 });
    vi.advanceTimersByTime(100);
    late.resolve('2024-01-01T00:00:00Z');
    await vi.advanceTimersByTimeAsync(10);
    expect(t.replies).toHaveLength(1);
    expect(JSON.parse(t.replies[0])).toMatchObject({ timedOut: true });
    // And an answer in time stops the timer: nothing more goes out when it would have fired.
    const inTime = deferred<unknown>();
    t.session.answer = () => inTime.promise;
    t.call({ op: 'ServerTime', timeoutMs: 100 });
    inTime.resolve('2024-01-01T00:00:00Z');
    await vi.advanceTimersByTimeAsync(200);
    expect(t.replies).toHaveLength(2);
    expect(JSON.parse(t.replies[1])).toMatchObject({ id: 2, ok: true });
  });

  it('ignores a failure that comes after the time-out of a call without a call id', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    const late = deferred<unknown>();
    t.session.answer = () => late.promise;
    t.call({ op: 'PF4.UserRecordNew', timeoutMs: 100, args: { body: { name: 'X', group: 'demo' } } });
    vi.advanceTimersByTime(100);
    late.reject(new ConnectionLostError('dropped'));
    await vi.advanceTimersByTimeAsync(10);
    expect(t.replies).toHaveLength(1);
  });

  it('clamps the budget to 1 ms – 300 s, and takes 10 s when it is not a finite number', () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    t.call({ op: 'ServerTime', timeoutMs: 0.0001 });
    t.call({ op: 'ServerTime', timeoutMs: 1e9 });
    t.call({ op: 'ServerTime', timeoutMs: Number.NaN });
    vi.advanceTimersByTime(1);
    expect(t.parsed().map((a) => (a.error as { message: string }).message)).toStrictEqual([
      'the trading server did not answer within 0.001s',
    ]);
    vi.advanceTimersByTime(9_999);
    expect(t.parsed().map((a) => a.id)).toStrictEqual([1, 3]);
    expect((t.parsed()[1].error as { message: string }).message).toBe('the trading server did not answer within 10s');
    vi.advanceTimersByTime(300_000 - 10_001);
    expect(t.replies).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(t.parsed()[2]).toMatchObject({ id: 2, error: { message: 'the trading server did not answer within 300s' } });
    expect(t.session.requests.map((r) => (r.deadline as { sendBy: number }).sendBy)).toStrictEqual([
      1, 300_000, 10_000,
    ]);
  });

  it('words the time-out in seconds, to the millisecond', () => {
    expect(timeoutMessage(1234)).toBe('the trading server did not answer within 1.234s');
    expect(timeoutMessage(1234.4)).toBe('the trading server did not answer within 1.234s');
    expect(timeoutMessage(20_000)).toBe('the trading server did not answer within 20s');
  });

  it('answers a deadline the handler met before sending as the time-out it is', async () => {
    const t = setup();
    t.session.answer = () => Promise.reject(new DeadlineError());
    t.call({ op: 'PF4.UserRecordNew', timeoutMs: 800, args: { body: { name: 'X', group: 'demo' } } });
    await replies(t.replies, 1);
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        timedOut: true,
        error: { code: 'NoConnect', managerCode: null, message: 'the trading server did not answer within 0.8s' },
        outcome: 'unknown',
      },
    ]);
  });
});

describe('failures', () => {
  it('passes a refusal of the trading server on with its code, manager code and data', async () => {
    const t = setup();
    t.session.answer = () => Promise.reject(new OperationError('PF4Error', 'bad group', 3, { field: 'group' }));
    t.call({ op: 'PF4.UserRecordNew', args: { body: { name: 'X', group: 'nope' } } });
    t.session.answer = () => Promise.reject(new OperationError('PF4Error', 'bad login', 3));
    t.call({ op: 'PF4.UserRecordNew', args: { body: { name: 'Y', group: 'demo' } } });
    await replies(t.replies, 2);
    expect(t.parsed()).toStrictEqual([
      { id: 1, ok: false, error: { code: 'PF4Error', managerCode: 3, message: 'bad group' }, data: { field: 'group' } },
      { id: 2, ok: false, error: { code: 'PF4Error', managerCode: 3, message: 'bad login' } },
    ]);
    expect(t.logged.map((l) => l.level)).toStrictEqual(['debug', 'debug']);
    expect(t.logged[0].fields).toMatchObject({ outcome: 'PF4Error', error: 'bad group' });
  });

  it('refuses an operation needing what the trading server did not declare, marked not implemented, sending nothing', async () => {
    const t = setup();
    t.session.undeclaredNames.add('TradeTransaction').add('online');
    t.call({ op: 'PF4.TradeTransaction', args: { body: { type: 'OrderClose', order: 5 } }, callId: 'key-1' });
    t.call({ op: 'PF4.OnlineGet', args: {} });
    await replies(t.replies, 2);
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        notImplemented: true,
        error: {
          code: 'PF4Error',
          managerCode: null,
          message: 'the trading server does not implement TradeTransaction (not among the commands its login declared)',
        },
      },
      {
        id: 2,
        ok: false,
        notImplemented: true,
        error: {
          code: 'PF4Error',
          managerCode: null,
          message:
            'the trading server does not implement the online event (not among the event kinds its login declared)',
        },
      },
    ]);
    expect(t.session.requests).toStrictEqual([]);
    expect(t.observed.map((o) => o.outcome)).toStrictEqual(['PF4Error', 'PF4Error']);
  });

  it('answers an unexpected handler failure as Internal without its details, logs it, and leaves a change unknown', async () => {
    const t = setup();
    t.session.answer = () => Promise.reject(new TypeError('secret internals'));
    t.call({ op: 'PF4.UserRecordNew', traceId: 'tr-9', args: { body: { name: 'X', group: 'demo' } } });
    t.call({ op: 'ServerTime' });
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a handler may fail with a non-Error
    t.session.answer = () => Promise.reject('a string');
    t.call({ op: 'ServerTime' });
    await replies(t.replies, 3);
    const internal = { code: 'Internal', managerCode: null, message: 'the broker failed to handle the call' };
    expect(t.parsed()).toStrictEqual([
      { id: 1, ok: false, error: internal, outcome: 'unknown' },
      { id: 2, ok: false, error: internal },
      { id: 3, ok: false, error: internal },
    ]);
    const errors = t.logged.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(3);
    expect(errors[0].fields).toMatchObject({
      msg: 'handler failed',
      op: 'PF4.UserRecordNew',
      platform: PF4,
      traceId: 'tr-9',
    });
    expect(String(errors[0].fields.error)).toContain('TypeError: secret internals');
    expect(errors[2].fields.error).toBe('a string');
    expect(t.logged.filter((l) => l.fields.msg === 'call answered').map((l) => l.level)).toStrictEqual([
      'warn',
      'warn',
      'warn',
    ]);
  });

  it('says a change the connection dropped under may have happened, and a read it dropped under just failed', async () => {
    const t = setup();
    t.session.answer = () => Promise.reject(new ConnectionLostError('connection lost'));
    t.call({ op: 'PF4.UserRecordNew', args: { body: { name: 'X', group: 'demo' } } });
    t.call({ op: 'ServerTime' });
    await replies(t.replies, 2);
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message: 'connection lost' },
        outcome: 'unknown',
      },
      { id: 2, ok: false, error: { code: 'NoConnect', managerCode: null, message: 'connection lost' } },
    ]);
    expect(t.logged.filter((l) => l.fields.msg === 'call answered').map((l) => l.level)).toStrictEqual([
      'warn',
      'warn',
    ]);
  });

  it("writes no call log below the logger's level, and still counts the call", () => {
    const t = setup({}, 'info');
    t.call({ op: 'PF4.UserRecordGet', args: { login: 1 } });
    expect(t.replies).toHaveLength(1);
    expect(t.logged).toStrictEqual([]);
    expect(t.observed).toHaveLength(1);
  });
});

describe('calls under an Idempotency-Key', () => {
  const body = { body: { name: 'X', group: 'demo' } };

  it('runs a call id once: a repeat gets the first answer under its own id', async () => {
    const t = setup();
    t.session.answer = () => Promise.resolve({ login: 500, name: 'X', group: 'demo' });
    t.call({ op: 'PF4.UserRecordNew', callId: 'c1', args: body });
    await replies(t.replies, 1);
    t.call({ op: 'PF4.UserRecordNew', callId: 'c1', args: body });
    await replies(t.replies, 2);
    const [first, again] = t.parsed();
    expect(first).toMatchObject({ id: 1, ok: true, data: { login: 500 } });
    expect(again).toStrictEqual({ ...first, id: 2 });
    expect(t.session.requests).toHaveLength(1);
    expect(t.observed.map((o) => o.outcome)).toStrictEqual(['ok', 'repeat']);
    expect(t.logged.map((l) => l.level)).toStrictEqual(['debug', 'debug']);
  });

  it("keeps a cached answer's data as the outcome of its call id", async () => {
    const t = setup();
    t.call({ op: 'PF4.UserRecordGet', callId: 'r1', args: { login: 3 } });
    t.call({ op: OUTCOME_OP, callId: 'r1', timeoutMs: 10 });
    await replies(t.replies, 2);
    expect(t.parsed()[1]).toStrictEqual({
      id: 2,
      ok: true,
      data: { state: 'settled', result: { ok: true, data: JSON.parse(t.replies[0]).data } },
    });
    t.call({ op: 'PF4.OnlineGet', callId: 'r2', args: { limit: 1 } });
    t.call({ op: OUTCOME_OP, callId: 'r2', timeoutMs: 10 });
    await replies(t.replies, 4);
    const page = JSON.parse(t.replies[2]);
    expect(t.parsed()[3]).toStrictEqual({
      id: 4,
      ok: true,
      data: { state: 'settled', result: { ok: true, data: page.data, paging: page.paging } },
    });
  });

  it("answers a repeat while the first runs as a time-out when it does not end within the repeat's budget", async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    t.call({ op: 'PF4.UserRecordNew', callId: 'c2', args: body, timeoutMs: 5000 });
    t.call({ op: 'PF4.UserRecordNew', callId: 'c2', args: body, timeoutMs: 200 });
    await vi.advanceTimersByTimeAsync(200);
    expect(t.parsed()).toStrictEqual([
      {
        id: 2,
        ok: false,
        timedOut: true,
        error: { code: 'NoConnect', managerCode: null, message: 'the trading server did not answer within 0.2s' },
        outcome: 'unknown',
      },
    ]);
    expect(t.session.requests).toHaveLength(1);
  });

  it('pushes the answer that comes after the time-out as a late frame and keeps it for #outcome', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    const late = deferred<unknown>();
    t.session.answer = () => late.promise;
    t.call({ op: 'PF4.UserRecordNew', callId: 'c3', args: body, timeoutMs: 100, traceId: 'tl' });
    await vi.advanceTimersByTimeAsync(100);
    expect(t.parsed()[0]).toMatchObject({ id: 1, timedOut: true, outcome: 'unknown' });
    late.resolve({ login: 600, name: 'X', group: 'demo' });
    await vi.advanceTimersByTimeAsync(1);
    expect(t.replies).toHaveLength(2);
    const pushed = t.parsed()[1] as {
      late: { callId: string; report: { state: string; result: { ok: boolean; data: { login: number } } } };
    };
    expect(Object.keys(pushed)).toStrictEqual(['late']);
    expect(pushed.late.callId).toBe('c3');
    expect(pushed.late.report.state).toBe('settled');
    expect(pushed.late.report.result).toMatchObject({ ok: true, data: { login: 600 } });
    expect(t.logged.find((l) => l.fields.msg === 'late outcome')).toStrictEqual({
      level: 'info',
      fields: {
        msg: 'late outcome',
        platform: PF4,
        op: 'PF4.UserRecordNew',
        state: 'settled',
        traceId: 'tl',
      },
    });
    t.call({ op: OUTCOME_OP, callId: 'c3', timeoutMs: 10 });
    await vi.advanceTimersByTimeAsync(0);
    expect(t.parsed()[2]).toStrictEqual({ id: 2, ok: true, data: pushed.late.report });
  });

  it('pushes a failure that comes after the time-out: a refusal settled, a dropped connection lost', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    const refused = deferred<unknown>();
    const dropped = deferred<unknown>();
    const broken = deferred<unknown>();
    const expired = deferred<unknown>();
    const fates = [refused, dropped, broken, expired];
    t.session.answer = () => fates.shift()!.promise;
    for (const callId of ['f1', 'f2', 'f3', 'f4'])
      t.call({ op: 'PF4.UserRecordNew', callId, args: body, timeoutMs: 100 });
    await vi.advanceTimersByTimeAsync(100);
    expect(t.replies).toHaveLength(4);
    refused.reject(new OperationError('PF4Error', 'bad group', 3));
    dropped.reject(new ConnectionLostError('connection lost'));
    broken.reject(new Error('bug'));
    expired.reject(new DeadlineError('late window passed', true));
    await vi.advanceTimersByTimeAsync(1);
    const lates = t.parsed().slice(4) as Array<{ late: { callId: string; report: unknown } }>;
    expect(lates).toStrictEqual([
      {
        late: {
          callId: 'f1',
          report: {
            state: 'settled',
            result: { ok: false, error: { code: 'PF4Error', managerCode: 3, message: 'bad group' } },
          },
        },
      },
      {
        late: {
          callId: 'f2',
          report: { state: 'lost', reason: 'the manager connection dropped before the trading server answered' },
        },
      },
      { late: { callId: 'f3', report: { state: 'lost', reason: 'the broker failed while handling the call' } } },
      {
        late: {
          callId: 'f4',
          report: { state: 'lost', reason: "the trading server did not answer within the broker's late-answer window" },
        },
      },
    ]);
    const late = t.logged.filter((l) => l.fields.msg === 'late outcome');
    expect(late.map((l) => l.fields.state)).toStrictEqual(['settled', 'lost', 'lost', 'lost']);
    expect(late[0].fields).not.toHaveProperty('traceId');
  });

  it('answers a deadline met before sending as not applied, and one met after sending as unknown', async () => {
    const t = setup();
    t.session.answer = () => Promise.reject(new DeadlineError());
    t.call({ op: 'PF4.UserRecordNew', callId: 'd1', args: body });
    await replies(t.replies, 1);
    t.session.answer = () => Promise.reject(new DeadlineError('deadline passed', true));
    t.call({ op: 'PF4.UserRecordNew', callId: 'd2', args: body });
    await replies(t.replies, 2);
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        timedOut: true,
        error: {
          code: 'NoConnect',
          managerCode: null,
          message: 'the call was not sent: its deadline passed before the manager session was ready',
        },
      },
      {
        id: 2,
        ok: false,
        timedOut: true,
        error: { code: 'NoConnect', managerCode: null, message: 'deadline passed' },
        outcome: 'unknown',
      },
    ]);
    t.call({ op: OUTCOME_OP, callId: 'd1', timeoutMs: 10 });
    t.call({ op: OUTCOME_OP, callId: 'd2', timeoutMs: 10 });
    await replies(t.replies, 4);
    expect(t.parsed()[2]).toStrictEqual({
      id: 3,
      ok: true,
      data: {
        state: 'settled',
        result: { ok: false, timedOut: true, error: (t.parsed()[0] as { error: unknown }).error },
      },
    });
    expect(t.parsed()[3]).toStrictEqual({
      id: 4,
      ok: true,
      data: { state: 'lost', reason: "the trading server did not answer within the broker's late-answer window" },
    });
  });

  it('answers a repeat of a lost call with its reason, and of a call id another platform used as already used', async () => {
    const t = setup();
    t.session.answer = () => Promise.reject(new ConnectionLostError('connection lost'));
    t.call({ op: 'PF4.UserRecordNew', callId: 'l1', args: body });
    await replies(t.replies, 1);
    t.call({ op: 'PF4.UserRecordNew', callId: 'l1', args: body });
    t.call({ op: 'ServerTime', callId: 'l1', platform: PF5 });
    await replies(t.replies, 3);
    expect(t.parsed().slice(1)).toStrictEqual([
      {
        id: 2,
        ok: false,
        error: {
          code: 'NoConnect',
          managerCode: null,
          message: 'the manager connection dropped before the trading server answered',
        },
        outcome: 'unknown',
      },
      {
        id: 3,
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message: 'call id already used' },
        outcome: 'unknown',
      },
    ]);
    expect(t.session.requests).toHaveLength(1);
    expect(t.observed.slice(1).map((o) => o.outcome)).toStrictEqual(['repeat', 'repeat']);
    expect(t.logged.filter((l) => l.fields.outcome === 'repeat').map((l) => l.level)).toStrictEqual(['warn', 'warn']);
  });

  it("keeps a refused platform's call id as settled, so a repeat is refused the same way without running", async () => {
    const t = setup();
    t.call({ op: 'PF4.UserRecordNew', callId: 'n1', platform: 'elsewhere', args: body });
    t.call({ op: 'PF4.UserRecordNew', callId: 'n1', platform: 'elsewhere', args: body });
    await replies(t.replies, 2);
    expect(t.parsed()).toStrictEqual([
      { id: 1, ok: false, error: { code: 'NotFound', managerCode: null, message: PLATFORM_NOT_SERVED } },
      { id: 2, ok: false, error: { code: 'NotFound', managerCode: null, message: PLATFORM_NOT_SERVED } },
    ]);
  });

  it('answers #outcome: malformed without a call id, waiting while the call runs, unknown for an id never seen', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup();
    t.call({ op: OUTCOME_OP });
    expect(t.parsed()).toStrictEqual([
      {
        id: 1,
        ok: false,
        error: { code: 'Internal', managerCode: null, message: 'malformed call frame: #outcome needs a callId' },
      },
    ]);
    t.call({ op: OUTCOME_OP, callId: 'never' });
    await vi.advanceTimersByTimeAsync(0);
    expect(t.parsed()[1]).toStrictEqual({ id: 2, ok: true, data: { state: 'unknown' } });
    const running = deferred<unknown>();
    t.session.answer = () => running.promise;
    t.call({ op: 'PF4.UserRecordNew', callId: 'w1', args: body, timeoutMs: 60_000 });
    t.call({ op: OUTCOME_OP, callId: 'w1', timeoutMs: 1000 });
    await vi.advanceTimersByTimeAsync(999);
    expect(t.replies).toHaveLength(2);
    running.resolve({ login: 700, name: 'X', group: 'demo' });
    await vi.advanceTimersByTimeAsync(0);
    // The call's own answer, then the query's, both from the same outcome.
    expect(t.parsed()[2]).toMatchObject({ id: 3, ok: true, data: { login: 700 } });
    expect(t.parsed()[3]).toMatchObject({
      id: 4,
      ok: true,
      data: { state: 'settled', result: { ok: true, data: { login: 700 } } },
    });
    // No metrics or call log for #outcome queries.
    expect(t.observed.map((o) => o.op)).toStrictEqual(['PF4.UserRecordNew']);
  });
});

describe('the bound on one answer', () => {
  const BOUND = 1024;
  /** Managers whose list answer takes about `rows` × 130 bytes. */
  const managers = (rows: number) =>
    Array.from({ length: rows }, (_, i) => ({ login: i + 1, name: `M${'x'.repeat(100)}${i}` }));
  /** The answer frame a dispatcher without a small bound writes for `frame`, and its UTF-8 bytes. */
  async function unbounded(answer: () => Promise<unknown>, frame: Partial<CallFrame> & { op: string }) {
    const t = setup();
    t.session.answer = answer;
    t.call(frame);
    await replies(t.replies, 1);
    return { text: t.replies[0], bytes: Buffer.byteLength(t.replies[0], 'utf8') };
  }

  it('refuses a read whose answer frame passes the bound (plus the envelope), naming both sizes, and counts it', async () => {
    const big = () => Promise.resolve(managers(60));
    const whole = await unbounded(big, { op: 'PF4.CfgRequestManager' });
    expect(whole.bytes).toBeGreaterThan(BOUND + ANSWER_ENVELOPE_BYTES);
    const t = setup({ answerMaxBytes: BOUND });
    t.session.answer = big;
    t.call({ op: 'PF4.CfgRequestManager', traceId: 'big' });
    await replies(t.replies, 1);
    const message = answerTooLarge(whole.bytes, BOUND, 'PF4.CfgRequestManager');
    expect(message).toBe(
      `the answer of ${whole.bytes} bytes is larger than the 1024 bytes one answer may carry; ask for a smaller page (limit)`,
    );
    expect(t.parsed()[0]).toStrictEqual({
      id: 1,
      ok: false,
      error: { code: 'Validation', managerCode: null, message },
    });
    expect(t.observed.map((o) => o.outcome)).toStrictEqual(['answer_too_large']);
    expect(t.logged).toStrictEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({
          msg: 'call answered',
          op: 'PF4.CfgRequestManager',
          outcome: 'answer_too_large',
          error: message,
          traceId: 'big',
        }),
      },
    ]);
    // Asking for less is answered: one page within the bound, the envelope's paging included.
    t.call({ op: 'PF4.CfgRequestManager', args: { limit: 2 } });
    await replies(t.replies, 2);
    expect(t.parsed()[1]).toMatchObject({ id: 2, ok: true, paging: { hasMore: true } });
    expect((t.parsed()[1].data as Array<{ login: number }>).map((m) => m.login)).toStrictEqual([1, 2]);
    expect(t.observed.map((o) => o.outcome)).toStrictEqual(['answer_too_large', 'ok']);
  });

  it('tells the caller how to ask for less, by what the operation takes', () => {
    const hint = (op: string) => answerTooLarge(1, 0, op).split('; ')[1];
    expect(hint('PF4.CfgRequestManager')).toBe('ask for a smaller page (limit)');
    expect(hint('PF4.TradesUserHistory')).toBe('ask for a shorter time range');
    expect(hint('PF4.UserRecordsRequest')).toBe('ask for fewer values');
    expect(hint('PF4.ManagerCommon')).toBe('this operation cannot be asked for in parts');
  });

  it('answers a frame of exactly the bound plus the envelope, and counts cached answers in UTF-8 bytes', async () => {
    const rows = () => Promise.resolve(managers(60));
    const whole = await unbounded(rows, { op: 'PF4.CfgRequestManager' });
    const exact = setup({ answerMaxBytes: whole.bytes - ANSWER_ENVELOPE_BYTES });
    exact.session.answer = rows;
    exact.call({ op: 'PF4.CfgRequestManager' });
    await replies(exact.replies, 1);
    expect(exact.replies[0]).toBe(whole.text);
    const one = setup({ answerMaxBytes: whole.bytes - ANSWER_ENVELOPE_BYTES - 1 });
    one.session.answer = rows;
    one.call({ op: 'PF4.CfgRequestManager' });
    await replies(one.replies, 1);
    expect(one.parsed()[0]).toMatchObject({
      ok: false,
      error: {
        code: 'Validation',
        message: answerTooLarge(whole.bytes, whole.bytes - ANSWER_ENVELOPE_BYTES - 1, 'PF4.CfgRequestManager'),
      },
    });
    // A cached record (spliced JSON) past the bound in UTF-8 bytes, though not in characters.
    const t = setup({ answerMaxBytes: 1600 });
    t.cache.apply(resync('begin'));
    t.cache.apply(
      resync('chunk', { kind: 'users', items: [{ login: 9, name: '\u4e00'.repeat(3000), group: 'demo' }] }),
    );
    t.cache.apply(resync('end'));
    t.call({ op: 'PF4.UserRecordGet', args: { login: 9 } });
    expect(t.parsed()[0]).toMatchObject({ id: 1, ok: false, error: { code: 'Validation' } });
    expect((t.parsed()[0].error as { message: string }).message).toMatch(
      /^the answer of 9\d{3} bytes is larger than the 1600 bytes/,
    );
  });

  it("refuses a change's answer past the bound as Internal with its outcome unknown, and keeps that for its call id", async () => {
    const t = setup({ answerMaxBytes: BOUND });
    t.session.answer = () => Promise.resolve({ login: 700, name: 'N'.repeat(6000), group: 'demo' });
    t.call({ op: 'PF4.UserRecordNew', callId: 'big-1', args: { body: { name: 'N', group: 'demo' } } });
    await replies(t.replies, 1);
    const [refused] = t.parsed();
    expect(refused).toMatchObject({
      id: 1,
      ok: false,
      outcome: 'unknown',
      error: { code: 'Internal', managerCode: null },
    });
    expect((refused.error as { message: string }).message).toMatch(
      /^the answer of \d+ bytes is larger than the 1024 bytes one answer may carry/,
    );
    t.call({ op: OUTCOME_OP, callId: 'big-1', timeoutMs: 10 });
    await replies(t.replies, 2);
    expect(t.parsed()[1]).toStrictEqual({ id: 2, ok: true, data: { state: 'lost', reason: ANSWER_LOST } });
    expect(ANSWER_LOST).toBe('the change was made, but its answer was larger than one answer may carry');
  });

  it('pushes the refusal, not the answer, of a keyed read whose answer past the bound comes after its time-out', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup({ answerMaxBytes: BOUND });
    const late = deferred<unknown>();
    t.session.answer = () => late.promise;
    t.call({ op: 'PF4.CfgRequestManager', callId: 'big-2', timeoutMs: 100 });
    await vi.advanceTimersByTimeAsync(100);
    expect(t.parsed()[0]).toMatchObject({ id: 1, timedOut: true });
    late.resolve(managers(60));
    await vi.advanceTimersByTimeAsync(1);
    expect(t.replies).toHaveLength(2);
    const pushed = t.parsed()[1] as {
      late: {
        callId: string;
        report: { state: string; result: { ok: boolean; error: { code: string; message: string } } };
      };
    };
    expect(pushed.late.callId).toBe('big-2');
    expect(pushed.late.report).toMatchObject({
      state: 'settled',
      result: { ok: false, error: { code: 'Validation', managerCode: null } },
    });
    expect(pushed.late.report.result.error.message).toMatch(
      /^the answer of \d+ bytes is larger than the 1024 bytes one answer may carry/,
    );
    t.call({ op: OUTCOME_OP, callId: 'big-2', timeoutMs: 10 });
    await vi.advanceTimersByTimeAsync(0);
    expect(t.parsed()[2]).toStrictEqual({ id: 2, ok: true, data: pushed.late.report });
  });

  it('hands the bound to the handler, which answers within it (the batch reads)', async () => {
    const t = setup({ answerMaxBytes: BOUND });
    t.session.answer = () =>
      Promise.resolve(Array.from({ length: 40 }, (_, i) => ({ login: i + 1, name: `Name ${i + 1}`, group: 'demo' })));
    t.call({ op: 'PF4.UsersSnapshot', args: { limit: 40 } });
    await replies(t.replies, 1);
    const [refused] = t.parsed() as Array<{ error: { code: string; message: string } }>;
    expect(refused.error.code).toBe('Validation');
    expect(refused.error.message).toMatch(
      /^limit: the 40 accounts asked for take more than the 1024 bytes one answer may carry; the first (\d+) fit/,
    );
  });
});

describe('password checks', () => {
  const wrongPf4 = () =>
    Promise.reject(new OperationError('PF4Error', 'invalid login or password', PF4_RESULT.InvalidData));
  const checkPf4 = (t: ReturnType<typeof setup>, login: number) =>
    t.call({ op: 'PF4.UserPasswordCheck', args: { login, body: 'guess' } });
  const tooFrequentPf4 = (id: number, login: number, retryAfterSeconds: number) => ({
    id,
    ok: false,
    retryAfterSeconds,
    error: {
      code: 'PF4Error',
      managerCode: PF4_RESULT.TooFrequent,
      message: `too many failed password checks of login ${login}: at most 2 per 60 s; retry after ${retryAfterSeconds} s`,
    },
  });

  it("refuses a login's check past the bound of failures without sending it, and still checks another login", async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup({ passwordChecks: { failures: 2, windowMs: 60_000 } });
    t.session.answer = wrongPf4;
    checkPf4(t, 7);
    checkPf4(t, 7);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.parsed()).toStrictEqual(
      [1, 2].map((id) => ({
        id,
        ok: false,
        data: false,
        error: { code: 'PF4Error', managerCode: PF4_RESULT.InvalidData, message: 'invalid login or password' },
      })),
    );
    await vi.advanceTimersByTimeAsync(20_000);
    const third = checkPf4(t, 7);
    expect(t.parsed()[2]).toStrictEqual(tooFrequentPf4(third, 7, 40));
    expect(t.session.requests).toHaveLength(2);
    expect(t.observed.at(-1)).toMatchObject({ op: 'PF4.UserPasswordCheck', outcome: 'PF4Error' });

    t.session.answer = () => Promise.resolve(true);
    checkPf4(t, 8);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.parsed()[3]).toStrictEqual({ id: 4, ok: true, data: true });
    expect(t.session.requests.map((r) => r.args)).toStrictEqual([
      { login: 7, password: 'guess' },
      { login: 7, password: 'guess' },
      { login: 8, password: 'guess' },
    ]);
    // Once the failures leave the window, the login is checked again.
    await vi.advanceTimersByTimeAsync(40_000);
    checkPf4(t, 7);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.parsed()[4]).toStrictEqual({ id: 5, ok: true, data: true });
  });

  it('refuses a PF5 check with ErrFrequent, counting UsrInvalidPassword answers', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup({ passwordChecks: { failures: 2, windowMs: 60_000 } });
    t.session.answer = () =>
      Promise.reject(new OperationError('PF5Error', 'invalid login or password', PF5_RESULT.UsrInvalidPassword));
    const check = () =>
      t.call({ op: 'PF5.UserPasswordCheck', platform: PF5, args: { login: 500010, type: 'Main', body: 'guess' } });
    check();
    check();
    await vi.advanceTimersByTimeAsync(0);
    const third = check();
    expect(t.parsed()[2]).toStrictEqual({
      id: third,
      ok: false,
      retryAfterSeconds: 60,
      error: {
        code: 'PF5Error',
        managerCode: PF5_RESULT.ErrFrequent,
        message: 'too many failed password checks of login 500010: at most 2 per 60 s; retry after 60 s',
      },
    });
    expect(t.session.requests).toHaveLength(2);
  });

  it('holds a place for each check in flight, so concurrent guesses do not pass the bound', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup({ passwordChecks: { failures: 2, windowMs: 60_000 } });
    const answers = [deferred<unknown>(), deferred<unknown>()];
    t.session.answer = () => answers[t.session.requests.length - 1].promise;
    checkPf4(t, 7);
    checkPf4(t, 7);
    const third = checkPf4(t, 7);
    expect(t.parsed()).toStrictEqual([tooFrequentPf4(third, 7, 1)]);
    expect(t.session.requests).toHaveLength(2);
    answers[0].resolve(true);
    answers[1].resolve(true);
    await vi.advanceTimersByTimeAsync(0);
    t.session.answer = () => Promise.resolve(true);
    checkPf4(t, 7);
    await vi.advanceTimersByTimeAsync(0);
    expect(t.session.requests).toHaveLength(3);
  });

  it('counts neither a time-out nor a failure other than a wrong password', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup({ passwordChecks: { failures: 1, windowMs: 60_000 } });
    t.session.answer = () => Promise.reject(new OperationError('NoConnect', 'the manager connection is down'));
    checkPf4(t, 7);
    await vi.advanceTimersByTimeAsync(0);
    t.session.answer = () => Promise.reject(new OperationError('PF4Error', 'no rights', PF4_RESULT.NotEnoughRights));
    checkPf4(t, 7);
    await vi.advanceTimersByTimeAsync(0);
    t.session.answer = () => new Promise(() => {});
    checkPf4(t, 7);
    await vi.advanceTimersByTimeAsync(5000);
    expect(t.parsed()[2]).toMatchObject({ id: 3, ok: false, timedOut: true });
    // The hung check still holds its place; a check that answers in time frees its own.
    expect(checkPf4(t, 7)).toBe(4);
    expect(t.parsed()[3]).toMatchObject({ id: 4, error: { managerCode: PF4_RESULT.TooFrequent } });
  });

  it('bounds nothing else: other operations on the same login are never refused', async () => {
    vi.useFakeTimers({ now: 0 });
    const t = setup({ passwordChecks: { failures: 1, windowMs: 60_000 } });
    t.session.answer = wrongPf4;
    checkPf4(t, 2);
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 3; i++) t.call({ op: 'PF4.UserRecordGet', args: { login: 2 } });
    expect(
      t
        .parsed()
        .slice(1)
        .map((r) => r.ok),
    ).toStrictEqual([true, true, true]);
  });
});

describe('rowsFrame', () => {
  it('writes the same UTF-8 bytes as the joined text, for none, one and many texts, wide characters and all', () => {
    const head = '{"id":7,"ok":true,"paging":{"hasMore":false},"data":[';
    for (const texts of [
      [],
      ['{"a":1}'],
      ['{"name":"Zoë"}', '{"name":"東京"}', '{"emoji":"😀","id":9007199254740993}'],
      Array.from({ length: 1000 }, (_, i) => `{"order":${i},"comment":"${'x'.repeat(i % 500)}"}`),
    ]) {
      const frame = rowsFrame(head, texts, ']}');
      expect(frame.equals(Buffer.from(`${head}${texts.join(',')}]}`, 'utf8'))).toBe(true);
      expect(JSON.parse(frame.toString('utf8')).data).toHaveLength(texts.length);
    }
  });
});
