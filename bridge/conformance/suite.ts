/**
 * The conformance suite's runner: it logs one pumping session in (the suite's own, with `versions: [1]`), reads its
 * snapshot into a cache, then runs every rule in order, each within its own time bound, and answers the per-rule
 * results. A rule that throws fails with the error's message; a rule past its bound fails as not done in time, and
 * the connections it opened are ended, so a server that never answers fails rules instead of hanging the suite.
 *
 * Invariants: rule ids are stable (other code and broken-server tests name them); the results list every rule of the
 * family in RULES order (the other family's rules are left out once the family is known); no result's detail holds
 * the password or the wrong one the suite sends, whole, JSON-escaped or in part (`show` redacts them before it cuts a
 * text, and every detail is redacted whole before it leaves the runner).
 */
import type { Family, LoginResult } from '../../shared/protocol.js';
import { holdSecrets, ProbeConnection, redact, show, type Answer } from './connection.js';
import {
  failed,
  RuleSkipped,
  skipped,
  SuiteContext,
  type ConformanceOptions,
  type MainSession,
  type Outcome,
  type Rule,
  type RuleResultKind,
} from './context.js';
import { Cache, readSnapshot } from './snapshot.js';
import { RULES } from './rules/index.js';

export type { ConformanceOptions, Timeouts } from './context.js';
export { DEFAULT_TIMEOUTS } from './context.js';

export interface RuleResult {
  id: string;
  name: string;
  result: RuleResultKind;
  detail: string;
}

export interface ConformanceReport {
  family: Family | undefined;
  results: RuleResult[];
  passed: number;
  failed: number;
  skipped: number;
}

/** Logs the suite's own session in and reads its snapshot; on failure sets `mainError`. */
async function startMain(ctx: SuiteContext): Promise<void> {
  const t = ctx.timeouts;
  let connection: ProbeConnection;
  try {
    connection = await ProbeConnection.open(ctx.options.server, ctx.observer, t.answerMs);
  } catch (error) {
    ctx.mainError = (error as Error).message;
    return;
  }
  try {
    const loginId = connection.send('login', ctx.loginArgs({ pump: true, versions: [1] }));
    // A Ping right behind the login: it is answered while (or after) the snapshot streams.
    const pingSentAt = performance.now();
    const ping = connection.request('Ping', undefined, t.snapshotMs + t.pingMs);
    await connection.waitFor(
      () => connection.frames.some((f) => (f.value as { id?: unknown } | undefined)?.id === loginId),
      t.answerMs,
      'answer to the login',
    );
    const frame = connection.frames.find((f) => (f.value as { id?: unknown } | undefined)?.id === loginId)!;
    const value = frame.value as { result?: unknown; error?: unknown };
    const loginAnswer: Answer =
      'error' in value
        ? {
            kind: 'error',
            id: loginId,
            code: (value.error as { code?: unknown })?.code,
            message: (value.error as { message?: unknown })?.message,
            error: value.error,
            frame,
          }
        : { kind: 'result', id: loginId, value: value.result, frame };
    ctx.mainLoginAnswer = loginAnswer;
    if (loginAnswer.kind === 'error') throw new Error(`the login was refused: ${show(loginAnswer.error)}`);
    const login = loginAnswer.value as LoginResult;
    const capabilities = (login as Partial<LoginResult>)?.capabilities;
    if (
      !login ||
      typeof login !== 'object' ||
      (login.family !== 'PF4' && login.family !== 'PF5') ||
      !Array.isArray(capabilities?.commands) ||
      !Array.isArray(capabilities?.events)
    ) {
      throw new Error(`the login answered ${show(login, 200)}, without a family and capabilities`);
    }
    const pingDuringSnapshot: MainSession['pingDuringSnapshot'] = { sentAt: pingSentAt };
    ping.then(
      (answer) => {
        pingDuringSnapshot.answer = answer;
      },
      (error: Error) => {
        pingDuringSnapshot.error = error.message;
      },
    );
    const family = ctx.options.family ?? login.family;
    const snapshot = await readSnapshot(connection, frame.seq, family, capabilities.events, t.snapshotMs);
    const cache = new Cache(connection, family, snapshot);
    ctx.main = { connection, login, loginAnswer, pingDuringSnapshot, snapshot, cache };
  } catch (error) {
    ctx.mainError = (error as Error).message;
    connection.terminate();
  }
}

async function runRule(ctx: SuiteContext, rule: Rule): Promise<Outcome> {
  const bound = rule.timeoutMs(ctx.timeouts);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Outcome>((resolve) => {
    timer = setTimeout(
      () => resolve(failed(`not done within its bound of ${bound} ms (the server did not answer in time)`)),
      bound,
    );
  });
  try {
    return await Promise.race([
      new Promise<Outcome>((resolve) => resolve(rule.run(ctx))).catch((error: Error) =>
        error instanceof RuleSkipped ? skipped(error.message) : failed(error.message),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
    for (const connection of ctx.takeRuleConnections()) connection.terminate();
  }
}

/** The rules a run of `family` lists (all of them while the family is unknown). */
export function rulesFor(family: Family | undefined): Rule[] {
  return RULES.filter((rule) => !family || !rule.families || rule.families.includes(family));
}

/** Runs the whole suite against `options.server` and answers every rule's result. */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const ctx = new SuiteContext(options);
  // Held for the whole run: `show` redacts them before it cuts a text, and every detail is redacted again whole.
  const release = holdSecrets(ctx.secrets);
  const results: RuleResult[] = [];
  try {
    await startMain(ctx);
    for (const rule of rulesFor(ctx.family)) {
      const outcome = await runRule(ctx, rule);
      results.push({
        id: rule.id,
        name: rule.name,
        result: outcome.result,
        detail: redact(outcome.detail, ctx.secrets),
      });
    }
  } finally {
    ctx.main?.connection.terminate();
    release();
  }
  const count = (kind: RuleResultKind) => results.filter((r) => r.result === kind).length;
  return { family: ctx.family, results, passed: count('passed'), failed: count('failed'), skipped: count('skipped') };
}
