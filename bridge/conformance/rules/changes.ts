/**
 * The machinery of the `--writes` rules: a change is a command sent on the suite's own pumping session, and its
 * events are checked against the protocol's ordering promise ("Ordering", docs/manager-protocol.md): a Ping sent
 * after the change's answer is answered only after every event of the change. An expected event that never comes is
 * lost; one that comes after that Ping's answer is out of order; an event whose record disagrees with the answer
 * (the record the change produced) is wrong. The cache of the session follows all of it, for the final comparison
 * with live reads.
 *
 * A write rule is skipped without `--writes`, and skipped when a command it needs or an event kind it expects was
 * not declared. Records the changes create are kept in the suite's state for the rules after them.
 */
import type { ChangeKind, Family } from '../../../shared/protocol.js';
import { show, type ManagerEventSeq, type ProbeConnection } from '../connection.js';
import {
  passed,
  RuleFailed,
  RuleSkipped,
  skipped,
  type MainSession,
  type Outcome,
  type Rule,
  type SuiteContext,
  type Timeouts,
} from '../context.js';
import { KEY_FIELDS, VOLATILE_FIELDS } from '../families.js';
import { deepEqual } from '../liveReads.js';
import { keyOf, type Row } from '../snapshot.js';
import { codeText, joined } from './expect.js';
import { valueText } from '../../../shared/valueText.js';

export interface Expected {
  kind: ChangeKind;
  /** The ops that satisfy it (`add` or `update` for a put). */
  ops: readonly string[];
  /** The record's key; undefined for a record found by `accept` alone (a new news topic's key is the server's). */
  key?: unknown;
  /** Only an event whose record this accepts satisfies it. */
  accept?: (record: Row) => boolean;
  /** The record the event must carry, field by field (volatile fields aside). */
  record?: Row;
  /** A further check of the event's record: undefined when it holds, else what is wrong. */
  check?: (record: Row) => string | undefined;
}

export const put = (kind: ChangeKind, key: unknown, record?: Row): Expected => ({
  kind,
  ops: ['add', 'update'],
  key,
  record,
});
export const added = (kind: ChangeKind, key: unknown, record?: Row): Expected => ({ kind, ops: ['add'], key, record });
export const updated = (kind: ChangeKind, key: unknown, record?: Row): Expected => ({
  kind,
  ops: ['update'],
  key,
  record,
});
export const deleted = (kind: ChangeKind, key: unknown): Expected => ({ kind, ops: ['delete'], key });

function describe(e: Expected): string {
  return `a ${e.kind} ${e.ops.join('/')} event${e.key === undefined ? '' : ` of ${valueText(e.key)}`}`;
}

/**
 * One field of one record changed and changed back, so that the server is left as found. Writing a record with its
 * own values proves nothing: an event carrying the record as it was before the change would equal the answer. So
 * `set(to)` is sent, and its update event must carry `to` and equal the answer; then `set(from)` is sent, even when
 * the first event was wrong, and its event is checked the same way.
 */
export interface RoundTrip {
  kind: ChangeKind;
  key: unknown;
  field: string;
  /** The value the record holds (the cache's). */
  from: unknown;
  /** The value it is changed to, then back from. */
  to: unknown;
  /** Sends the command that sets the field to `value`; answers the record its event must carry (the answer's). */
  set(value: unknown): Promise<Row>;
}

/** null and absent alike: a field restored to "none" may come back either way. */
const sameValue = (a: unknown, b: unknown) => (a ?? null) === (b ?? null) || deepEqual(a, b);

/** Runs a round trip (above); answers the detail of both legs, or fails naming each leg that went wrong. */
export async function changedAndRestored(change: Change, trip: RoundTrip): Promise<string> {
  const leg = async (value: unknown): Promise<{ ok: boolean; detail: string }> => {
    const record = await trip.set(value);
    const expected: Expected = {
      ...updated(trip.kind, trip.key, record),
      check: (r) =>
        sameValue(r[trip.field], value)
          ? undefined
          : `${trip.kind} ${String(trip.key)}: the event's ${trip.field} is ${show(r[trip.field], 60)}, expected ${show(value, 60)}`,
    };
    try {
      return { ok: true, detail: await change.expectEvents([expected]) };
    } catch (error) {
      if (error instanceof RuleFailed) return { ok: false, detail: error.message };
      throw error;
    }
  };
  // A refusal of the change fails the rule at once: nothing was changed.
  const there = await leg(trip.to);
  const back = await leg(trip.from).catch((error: Error) => {
    if (!(error instanceof RuleFailed)) throw error;
    return { ok: false, detail: `${error.message} (the server is left with ${trip.field} ${show(trip.to, 60)})` };
  });
  const detail = `${trip.field} ${show(trip.from, 60)} → ${show(trip.to, 60)}: ${there.detail}; back to ${show(trip.from, 60)}: ${back.detail}`;
  if (!there.ok || !back.ok) throw new RuleFailed(detail);
  return detail;
}

/** A level one point off `value` (up, or down from 1000), so it stays a valid percent level. */
export const bumped = (value: number): number => (value < 1000 ? value + 1 : value - 1);

/** A short text other than `value`. */
export function otherText(value: unknown): string {
  return value === PROBE_TEXT ? `${PROBE_TEXT} again` : PROBE_TEXT;
}

const PROBE_TEXT = 'Conformance probe';

/** What one write rule works with. */
export class Change {
  private mark: number;
  readonly family: Family;
  readonly connection: ProbeConnection;

  constructor(
    readonly ctx: SuiteContext,
    readonly main: MainSession,
  ) {
    this.family = main.login.family;
    this.connection = main.connection;
    this.mark = main.connection.lastSeq;
  }

  get timeouts(): Timeouts {
    return this.ctx.timeouts;
  }

  /** The cache, caught up with every event received so far. */
  cache(kind: string): Map<string, Row> {
    this.main.cache.catchUp();
    return this.main.cache.table(kind);
  }

  /** Sends `cmd` and answers its result; a refusal fails the rule. */
  async call<T = unknown>(cmd: string, args: Record<string, unknown>): Promise<T> {
    const answer = await this.attempt(cmd, args);
    if (answer.error)
      throw new RuleFailed(
        `${cmd} ${show(args, 120)}: expected a result, got error ${codeText(this.family, answer.error.code)} ${show(answer.error.message, 100)}`,
      );
    return answer.result as T;
  }

  /** Sends `cmd`; answers the result or the error without failing. */
  async attempt(
    cmd: string,
    args: Record<string, unknown>,
  ): Promise<{ result?: unknown; error?: { code: unknown; message: unknown } }> {
    const answer = await this.connection.request(cmd, args, this.timeouts.answerMs);
    return answer.kind === 'result'
      ? { result: answer.value }
      : { error: { code: answer.code, message: answer.message } };
  }

  /**
   * Sends a Ping, then checks that every expected event came after the change began and before the Ping's answer,
   * each matching its record; waits `lateEventMs` more to tell an event out of order from one lost.
   */
  async expectEvents(expected: readonly Expected[]): Promise<string> {
    const ping = await this.connection.request('Ping', undefined, this.timeouts.answerMs);
    const pingSeq = ping.frame.seq;
    const missing = () => expected.filter((e) => !this.find(e, this.mark, pingSeq));
    const problems: string[] = [];
    const absent = missing();
    if (absent.length) {
      await this.connection
        .waitFor(() => absent.every((e) => this.find(e, pingSeq, Infinity)), this.timeouts.lateEventMs, 'late events')
        .catch(() => {});
      for (const e of absent) {
        const late = this.find(e, pingSeq, Infinity);
        problems.push(
          late
            ? `expected ${describe(e)} before the answer to a Ping sent after the change; it came after it (out of order)`
            : `expected ${describe(e)}; it never came (lost)`,
        );
      }
    }
    for (const e of expected) {
      const event = this.find(e, this.mark, Infinity);
      if (!event) continue;
      const wrong = this.recordProblem(e, event.record as Row);
      if (wrong) problems.push(wrong);
    }
    this.mark = this.connection.lastSeq;
    if (problems.length) throw new RuleFailed(joined(problems));
    return expected.map(describe).join(', ');
  }

  private find(e: Expected, afterSeq: number, untilSeq: number): ManagerEventSeq | undefined {
    const field = KEY_FIELDS[this.family][e.kind];
    return this.connection.eventsAfter(afterSeq, untilSeq).find((event) => {
      if (
        event.event !== e.kind ||
        !e.ops.includes(event.op) ||
        typeof event.record !== 'object' ||
        event.record === null
      )
        return false;
      const record = event.record as Row;
      if (e.key !== undefined && (!field || keyOf(record[field]) !== keyOf(e.key))) return false;
      return e.accept ? e.accept(record) : true;
    });
  }

  private recordProblem(e: Expected, record: Row): string | undefined {
    const volatile = new Set(VOLATILE_FIELDS[this.family][e.kind] ?? []);
    for (const [field, value] of Object.entries(e.record ?? {})) {
      if (volatile.has(field) || deepEqual(value, record[field])) continue;
      return `${describe(e)}: the event's ${field} is ${show(record[field], 60)}, the answer's ${show(value, 60)}`;
    }
    return e.check?.(record);
  }
}

export interface WriteStep {
  id: string;
  name: string;
  family: Family;
  /** Commands that must be declared. */
  commands: readonly string[];
  /** Event kinds that must be declared. */
  events: readonly ChangeKind[];
  /** Runs the change(s) and checks them; answers the detail of a pass. */
  run(change: Change): Promise<string>;
  /** Its bound, default 8 answers. */
  answers?: number;
}

/** A write step as a rule: skipped without --writes or without what it needs declared. */
export function writeRule(step: WriteStep): Rule {
  return {
    id: step.id,
    name: step.name,
    families: [step.family],
    timeoutMs: (t) => (step.answers ?? 8) * t.answerMs + t.lateEventMs,
    async run(ctx): Promise<Outcome> {
      const skip = (why: string) => {
        ctx.state.set(skippedKey(step.id), why);
        return skipped(why);
      };
      if (!ctx.options.writes) return skip('needs --writes: it changes data');
      const main = ctx.requireMain();
      const commands = step.commands.filter((cmd) => !ctx.declared.includes(cmd));
      if (commands.length) return skip(`not declared: ${commands.join(', ')}`);
      const events = step.events.filter((kind) => !main.login.capabilities.events.includes(kind));
      if (events.length) return skip(`event kinds not declared: ${events.join(', ')}`);
      return passed(await step.run(new Change(ctx, main)));
    },
  };
}

/** A record an earlier write rule made, or a failure naming that rule. */
export function needs<T>(change: Change, key: string, rule: string): T {
  const value = change.ctx.state.get(key);
  const skippedBecause = change.ctx.state.get(skippedKey(rule));
  if (value === undefined && typeof skippedBecause === 'string')
    throw new RuleSkipped(`builds on ${rule}, skipped (${skippedBecause})`);
  if (value === undefined) throw new RuleFailed(`needs what ${rule} makes, which it did not`);
  return value as T;
}

/** Where a skipped write rule leaves why, for the rules that build on it (`needs`). */
const skippedKey = (rule: string) => `skipped:${rule}`;

/** A price rounded to `digits` decimals. */
export function priced(value: number, digits: unknown): number {
  const d = typeof digits === 'number' && digits >= 0 && digits <= 10 ? digits : 5;
  return Number(value.toFixed(d));
}
