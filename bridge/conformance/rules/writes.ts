/**
 * The `--writes` rules in two parts with the reconnect rule between them (rules/index.ts): first every family's
 * changes, which leave the server changed (an account created, edited and funded), so that a reconnect served an old
 * snapshot is seen; then the clean-up (a PF4 account deleted), and the rules of every family: the cache the suite's
 * session built from its snapshot and every event since equals live reads afterwards (nothing lost, nothing stale,
 * nothing reordered), and a declared restart command is answered, ends the sessions, and lets a new session log in
 * to a whole new snapshot once the server is back. The restart runs last among the rules that need a session: it
 * ends the suite's own.
 */
import { show } from '../connection.js';
import { failed, passed, skipped, type Rule } from '../context.js';
import { comparableKinds, compareAll } from '../liveReads.js';
import { readSnapshot } from '../snapshot.js';
import { joined } from './expect.js';
import { pf4CleanupRules, pf4WriteRules } from './writesPf4.js';
import { pf5WriteRules } from './writesPf5.js';

const cacheRule: Rule = {
  id: 'writes.cache-matches-live',
  name: 'after the changes, the cache from snapshot plus events equals live reads',
  timeoutMs: (t) => 40 * t.answerMs,
  async run(ctx) {
    if (!ctx.options.writes) return skipped('needs --writes: it follows the changes');
    const main = ctx.requireMain();
    const family = ctx.requireFamily();
    if (comparableKinds(family, ctx.declared).length === 0)
      return skipped('no live read of any snapshot kind declared');
    const { problems, compared } = await compareAll(main.connection, main.cache, ctx.declared, ctx.timeouts);
    return problems.length ? failed(joined(problems, 6)) : passed(compared.join(', '));
  },
};

const RESTART = 'SrvRestart';

const restartRule: Rule = {
  id: 'writes.restart',
  name: 'SrvRestart is answered, ends the session, and a new login gets a whole snapshot when the server is back',
  timeoutMs: (t) => t.snapshotMs + 10 * t.answerMs,
  async run(ctx) {
    if (!ctx.options.writes) return skipped('needs --writes: it restarts the server');
    const main = ctx.requireMain();
    if (!ctx.declared.includes(RESTART)) return skipped(`${RESTART} not declared`);
    const family = ctx.requireFamily();
    const answer = await main.connection.request(RESTART, {}, ctx.timeouts.answerMs);
    if (answer.kind === 'error') return failed(`${RESTART}: expected a result, got error ${show(answer.error)}`);
    const code = await main.connection.waitForClose(ctx.timeouts.answerMs).catch(() => undefined);
    if (code === undefined)
      return failed(
        `${RESTART} answered ${show(answer.value)}, but the session was still open ${ctx.timeouts.answerMs} ms later`,
      );
    const deadline = performance.now() + 5 * ctx.timeouts.answerMs;
    let lastError = '';
    while (performance.now() < deadline) {
      try {
        const { connection, login, answerSeq } = await ctx.openLoggedIn(true);
        const snapshot = await readSnapshot(
          connection,
          answerSeq,
          family,
          login.capabilities.events,
          ctx.timeouts.snapshotMs,
        );
        const problems = [...snapshot.orderProblems, ...snapshot.countProblems];
        if (problems.length) return failed(`the snapshot after the restart: ${joined(problems)}`);
        const total = [...snapshot.items.values()].reduce((n, items) => n + items.length, 0);
        return passed(
          `answered ${show(answer.value)}, closed with ${code}; a new session took a snapshot of ${total} items`,
        );
      } catch (error) {
        lastError = (error as Error).message;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    return failed(`no new session after the restart within ${5 * ctx.timeouts.answerMs} ms: ${lastError}`);
  },
};

/** The changes, before the reconnect rule. */
export const changeRules: Rule[] = [...pf4WriteRules, ...pf5WriteRules];

/** After the reconnect rule: the clean-up, the cache against live reads, the restart. */
export const afterChangeRules: Rule[] = [...pf4CleanupRules, cacheRule, restartRule];
