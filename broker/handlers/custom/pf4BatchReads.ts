/**
 * PF4 batch reads: the snapshots of every account and every open trade, and the starts and reads of the users and
 * trades sync sessions, each answer bounded by what the edge can carry.
 *
 * The edge takes at most 32 MiB in one message on its broker link and in one value passed between its objects
 * (workerd's bounds: a larger message closes the link under every call on it), and a link object holds an answer in
 * up to three copies on its way (the message, the envelope, the value handed on) within an isolate's 128 MB. So an
 * answer's rows are counted as they are serialized (once each, as cached lists are), against the broker's bound on one
 * answer (`answerMaxBytes` of the call, `ANSWER_MAX_BYTES` by default, BROKER_ANSWER_MAX_BYTES):
 * - a snapshot whose rows do not fit is refused, naming how many do (nothing on the server changed);
 * - a sync read must lose nothing: the server has already handed over, and dropped, what it answered, so the rows
 *   that do not fit are held back here, per manager session and sync kind, and answered first by the next read on
 *   that session (the server is asked again only once they are gone), in key order: once one row is held back, every
 *   later one is too. A start drops them, as the server drops its previous snapshot.
 *   Starts and reads of one kind run one after another per session, so held-back rows are never overtaken.
 * - a lost snapshot is refused, never answered as a drained one: the server keeps a sync snapshot in the manager
 *   connection that started it and answers [] on any other, so a read on a session that has logged in again since
 *   the start (a reconnect, whatever caused it), or on one that never answered a start (another broker after a
 *   failover, a restarted one), is refused `NotFound` telling the caller to start again, its held rows dropped.
 */
import { trades, users } from '../../../shared/catalog/v2/pf4/index.js';
import { OperationError } from '../../../shared/errors.js';
import { stringifyJson } from '../../../shared/losslessJson.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { ANSWER_MAX_BYTES, type HandlerContext, type HandlerResult } from '../handler.js';
import { bind, type Binding } from './bind.js';

/** A text outside Latin-1 makes the whole answer a two-byte string in the edge's values. */
// eslint-disable-next-line no-control-regex -- the range starts at U+0000: every character outside Latin-1
const WIDE = /[^\u0000-\u00ff]/;

/**
 * The rows of one answer as JSON texts, with the size the answer takes at the edge: its UTF-8 bytes on the link, and
 * in a value between objects one byte per UTF-16 unit, two once any character is beyond Latin-1.
 */
class SizedRows {
  readonly parts: string[] = [];
  private utf8 = 2;
  private units = 2;
  private wide = false;

  constructor(private readonly maxBytes: number) {}

  get count(): number {
    return this.parts.length;
  }

  /** Adds the row when the answer still fits with it; false (nothing added) when it would not. */
  add(json: string): boolean {
    const comma = this.parts.length ? 1 : 0;
    const utf8 = this.utf8 + comma + Buffer.byteLength(json, 'utf8');
    const units = this.units + comma + json.length;
    const wide = this.wide || WIDE.test(json);
    if (Math.max(utf8, wide ? 2 * units : units) > this.maxBytes) return false;
    this.parts.push(json);
    this.utf8 = utf8;
    this.units = units;
    this.wide = wide;
    return true;
  }

  result(): HandlerResult {
    return { rows: this.parts };
  }
}

type Kind = 'users' | 'trades';

const KINDS = {
  users: {
    start: 'UsersSyncStart',
    read: 'UsersSyncRead',
    snapshot: 'UsersSnapshot',
    record: 'PF4User',
    rows: 'accounts',
  },
  trades: {
    start: 'TradesSyncStart',
    read: 'TradesSyncRead',
    snapshot: 'TradesSnapshot',
    record: 'PF4Trade',
    rows: 'trades',
  },
} as const;

/** What a manager session's sync of one kind holds here: rows held back, the login its snapshot lives in, the queue. */
interface SyncState {
  /** JSON texts of rows the server handed over that no answer has carried yet, in key order. */
  held: string[];
  /**
   * The session's login count when the server answered the last start: the snapshot lives in that connection, and
   * another login means it is gone. Undefined until a start is answered (and while one runs, or after one failed).
   */
  started: number | undefined;
  /** The start or read running on this session and kind; the next one waits for it. */
  queue: Promise<unknown>;
}

type Session = HandlerContext['platform']['session'];

const loginOf = (session: Session) => (session as { logins?: number }).logins ?? 0;

/** The refusal of a read whose snapshot is not on the session: the caller must start again. */
function lostSnapshot(kind: Kind, started: number | undefined): OperationError {
  const { start, rows } = KINDS[kind];
  const why =
    started === undefined
      ? `this broker's manager session has answered no ${start} (never started here, or started on another broker)`
      : `the broker's manager session has reconnected since ${start}, and the trading server drops a sync snapshot with its connection`;
  return new OperationError('NotFound', `the ${rows} sync snapshot is lost: ${why}; start again with ${start}`);
}

/**
 * Rows a sync read asks of the server in one command: 5,000 accounts or trades are a few MiB, well within what the
 * manager session reads of one answer.
 */
export const SYNC_ROWS_PER_COMMAND = 5_000;

/** Bindings answering within `maxBytes` per answer (tests pass a small bound); else within the call's bound. */
export function batchReadBindings(maxBytes?: number): Binding[] {
  const boundOf = (ctx: HandlerContext<unknown>) => maxBytes ?? ctx.answerMaxBytes ?? ANSWER_MAX_BYTES;
  const states = new WeakMap<Session, Map<Kind, SyncState>>();
  const stateOf = (session: Session, kind: Kind): SyncState => {
    let byKind = states.get(session);
    if (!byKind) states.set(session, (byKind = new Map<Kind, SyncState>()));
    let state = byKind.get(kind);
    if (!state) byKind.set(kind, (state = { held: [], started: undefined, queue: Promise.resolve() }));
    return state;
  };
  /** Runs `work` after the session's earlier starts and reads of `kind`, whatever they ended with. */
  const inTurn = <T>(state: SyncState, work: () => Promise<T>): Promise<T> => {
    const run = state.queue.then(work, work);
    state.queue = run.catch(() => undefined);
    return run;
  };

  const start = (kind: Kind) => (ctx: HandlerContext<{ timestamp?: number }>) => {
    const { session } = ctx.platform;
    const state = stateOf(session, kind);
    return inTurn(state, async () => {
      state.held = [];
      state.started = undefined;
      const data = await session.request(KINDS[kind].start, { timestamp: ctx.args.timestamp ?? 0 }, ctx.deadline);
      // Answered on the connection of the session's current login (a reconnect first would have counted one).
      state.started = loginOf(session);
      return { data };
    });
  };

  const read = (kind: Kind) => {
    const shape = shapeRecord(KINDS[kind].record);
    return (ctx: HandlerContext<{ limit: number }>) => {
      const { session } = ctx.platform;
      const state = stateOf(session, kind);
      return inTurn(state, async () => {
        const { limit } = ctx.args;
        if (state.started !== loginOf(session)) {
          state.held = [];
          throw lostSnapshot(kind, state.started);
        }
        const answer = new SizedRows(boundOf(ctx));
        let taken = 0;
        while (taken < state.held.length && answer.count < limit && answer.add(state.held[taken])) taken++;
        // The server is asked only once nothing is held back: held rows come before whatever it still reserves.
        // Nothing is taken from the held rows until the read succeeds: a failed one leaves them for the next.
        if (taken < state.held.length || answer.count === limit) {
          state.held = state.held.slice(taken);
          return answer.result();
        }
        // Asked SYNC_ROWS_PER_COMMAND at a time, so that no answer of the server passes what the session reads
        // (`answerFrameBound`): until the limit, the server has no more, or the answer is full.
        const held: string[] = [];
        let wanted = limit - answer.count;
        let asked = 0;
        while (wanted > 0 && held.length === 0) {
          const ask = Math.min(wanted, SYNC_ROWS_PER_COMMAND);
          let rows: unknown[];
          try {
            rows = listOf(await session.request(KINDS[kind].read, { limit: ask }, ctx.deadline));
          } catch (error) {
            // What earlier commands of this read took from the server is answered, not lost with the error.
            if (asked === 0) throw error;
            break;
          }
          asked++;
          // The session logged in again before sending (it was down): a new connection answers [] for a lost snapshot.
          if (state.started !== loginOf(session)) {
            state.held = [];
            throw lostSnapshot(kind, state.started);
          }
          for (const row of rows) {
            const json = stringifyJson(shape(row));
            if (held.length > 0 || !answer.add(json)) held.push(json);
          }
          wanted -= rows.length;
          if (rows.length < ask) break;
        }
        state.held = held;
        return answer.result();
      });
    };
  };

  const snapshot = (kind: Kind) => {
    const shape = shapeRecord(KINDS[kind].record);
    return async (ctx: HandlerContext<{ limit: number }>): Promise<HandlerResult> => {
      const { limit } = ctx.args;
      const rows = listOf(await ctx.platform.session.request(KINDS[kind].snapshot, { limit }, ctx.deadline)).slice(
        0,
        limit,
      );
      const bound = boundOf(ctx);
      const answer = new SizedRows(bound);
      for (const row of rows) {
        if (answer.add(stringifyJson(shape(row)))) continue;
        throw new OperationError(
          'Validation',
          `limit: the ${rows.length} ${KINDS[kind].rows} asked for take more than the ` +
            `${bound} bytes one answer may carry; the first ${answer.count} fit: ask for at most ${answer.count}`,
        );
      }
      return answer.result();
    };
  };

  return [
    bind(users.UsersSyncStart, start('users')),
    bind(users.UsersSyncRead, read('users')),
    bind(users.UsersSnapshot, snapshot('users')),
    bind(trades.TradesSyncStart, start('trades')),
    bind(trades.TradesSyncRead, read('trades')),
    bind(trades.TradesSnapshot, snapshot('trades')),
  ];
}

const listOf = (rows: unknown): unknown[] => (Array.isArray(rows) ? rows : []);

export const pf4BatchReadsBindings = batchReadBindings();
