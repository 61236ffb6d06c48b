/**
 * The reconnect rule ("Reconnect"): a session that logs in, takes its snapshot and is dropped, then connects and
 * logs in again, gets a whole new snapshot (begin, chunks, end, counts right), and the cache built from it converges
 * with the suite's own session's: after a Ping on both, every kind but ticks holds the same records (volatile
 * fields aside). Both caches keep moving with the events, so the comparison is repeated until they agree, a bounded
 * number of times.
 *
 * It runs after the `--writes` changes (rules/index.ts), which leave the server changed since the suite's own
 * snapshot: a server that serves an old snapshot again then fails it even when nothing else moves. Without
 * `--writes`, only what moves on its own shows such a server.
 */
import type { ChangeKind } from '../../../shared/protocol.js';
import { failed, passed, type Rule, type SuiteContext } from '../context.js';
import { SNAPSHOT_KINDS, UNCOMPARED_KINDS } from '../families.js';
import { differences, fence } from '../liveReads.js';
import { Cache, readSnapshot } from '../snapshot.js';
import { joined } from './expect.js';

const ATTEMPTS = 6;

async function freshSession(ctx: SuiteContext) {
  const { connection, login, answerSeq } = await ctx.openLoggedIn(true);
  const family = ctx.requireFamily();
  const snapshot = await readSnapshot(
    connection,
    answerSeq,
    family,
    login.capabilities.events,
    ctx.timeouts.snapshotMs,
  );
  const problems = [...snapshot.orderProblems, ...snapshot.countProblems];
  return { connection, snapshot, problems, cache: new Cache(connection, family, snapshot) };
}

export const reconnectRules: Rule[] = [
  {
    id: 'reconnect.fresh-snapshot',
    name: "a session dropped and logged in again gets a whole new snapshot that agrees with a live session's cache",
    timeoutMs: (t) => 2 * t.snapshotMs + 20 * t.answerMs,
    async run(ctx) {
      const main = ctx.requireMain();
      const family = ctx.requireFamily();
      const first = await freshSession(ctx);
      if (first.problems.length) return failed(`the first session's snapshot: ${joined(first.problems)}`);
      first.connection.terminate();
      const second = await freshSession(ctx);
      if (second.problems.length) return failed(`the snapshot after the reconnect: ${joined(second.problems)}`);
      const kinds = SNAPSHOT_KINDS[family].filter((kind) => !UNCOMPARED_KINDS.includes(kind));
      let last: string[] = [];
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        await Promise.all([
          fence(main.connection, ctx.timeouts.answerMs),
          fence(second.connection, ctx.timeouts.answerMs),
        ]);
        main.cache.catchUp();
        second.cache.catchUp();
        last = kinds.flatMap((kind: ChangeKind) =>
          differences(family, kind, second.cache.table(kind), [...main.cache.table(kind).values()], 3),
        );
        if (last.length === 0) {
          const total = [...second.snapshot.items.values()].reduce((n, items) => n + items.length, 0);
          return passed(
            `a new snapshot of ${total} items after the reconnect, agreeing with the live session on ${kinds.join(', ')}`,
          );
        }
        if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, ctx.timeouts.retryMs * attempt));
      }
      // "on the server" here is the live session's cache; "in the cache" the reconnected session's.
      return failed(
        `after ${ATTEMPTS} fenced comparisons the reconnected session's cache still differs from the live session's: ${joined(last, 5)}`,
      );
    },
  },
];
