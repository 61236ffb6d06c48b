/**
 * Snapshot rules ("The snapshot", docs/manager-protocol.md), read from the suite's own session: begin, chunks, end
 * in that order with begin naming the server and family of the login; chunk kinds only among the declared event
 * kinds and in the family's documented order; `end.counts` equal to the items received; every item keyed, no key
 * twice; and the snapshot (with the events since) equal to live reads of the same records.
 */
import { show } from '../connection.js';
import { failed, passed, skipped, type Rule } from '../context.js';
import { comparableKinds, compareAll } from '../liveReads.js';
import { joined } from './expect.js';

export const snapshotRules: Rule[] = [
  {
    id: 'snapshot.order',
    name: "the snapshot is resync begin (the login's server and family), chunks, then end, before any change event",
    timeoutMs: () => 1000,
    run(ctx) {
      const main = ctx.requireMain();
      const problems = [...main.snapshot.orderProblems];
      const begin = main.snapshot.begin;
      if (!begin) problems.push('no resync begin');
      else if (begin.server !== main.login.server || begin.family !== main.login.family) {
        problems.push(
          `begin: expected {server: ${show(main.login.server)}, family: ${show(main.login.family)}}, got ${show(begin, 100)}`,
        );
      }
      if (problems.length) return failed(joined(problems));
      const during = main.snapshot.eventsDuring
        ? `; ${main.snapshot.eventsDuring} change events came between begin and end`
        : '';
      return passed(`begin, ${main.snapshot.chunkKinds.length} chunks, end${during}`);
    },
  },
  {
    id: 'snapshot.kinds',
    name: 'chunk kinds are declared event kinds, in the documented order',
    timeoutMs: () => 1000,
    run(ctx) {
      const main = ctx.requireMain();
      const problems = main.snapshot.kindProblems;
      return problems.length
        ? failed(joined(problems))
        : passed([...main.snapshot.items.keys()].join(', ') || 'no chunks');
    },
  },
  {
    id: 'snapshot.counts',
    name: 'end.counts equals the items received of each kind',
    timeoutMs: () => 1000,
    run(ctx) {
      const main = ctx.requireMain();
      const problems = main.snapshot.countProblems;
      if (problems.length) return failed(joined(problems));
      return passed([...main.snapshot.items].map(([kind, items]) => `${kind} ${items.length}`).join(', ') || 'empty');
    },
  },
  {
    id: 'snapshot.keys',
    name: "every snapshot item is an object with its kind's key field, no key twice",
    timeoutMs: () => 1000,
    run(ctx) {
      const main = ctx.requireMain();
      const problems = main.snapshot.keyProblems;
      return problems.length
        ? failed(joined(problems))
        : passed(`${[...main.snapshot.items.values()].reduce((n, items) => n + items.length, 0)} items keyed`);
    },
  },
  {
    id: 'snapshot.matches-live',
    name: 'the snapshot plus the events since equals live reads of the same records',
    timeoutMs: (t) => 40 * t.answerMs,
    async run(ctx) {
      const main = ctx.requireMain();
      const family = ctx.requireFamily();
      if (comparableKinds(family, ctx.declared).length === 0)
        return skipped('no live read of any snapshot kind declared');
      const { problems, compared, left } = await compareAll(main.connection, main.cache, ctx.declared, ctx.timeouts);
      if (problems.length) return failed(joined(problems, 6));
      return passed(`${compared.join(', ')}${left.length ? `; not compared: ${left.join(', ')}` : ''}`);
    },
  },
];
