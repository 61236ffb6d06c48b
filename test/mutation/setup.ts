/**
 * Mutation testing's bridge to workerd (setup file of vitest.mutation.config.ts, used by `npm run test:mutation`
 * only). The edge tests run the worker in workerd, a process the mutation tester cannot see into: after each test the
 * coverage the instrumented worker counted is fetched from every edge still running and counted as this test's, so the
 * tester knows which tests reach which mutants of workers/; hits during a file's `beforeAll` land on its first test,
 * whose run repeats the `beforeAll` anyway. The active mutant goes the other way, in the bundle's prelude
 * (test/support/edge.ts).
 */
import { afterEach, inject } from 'vitest';
import { liveMutationEdges } from '../support/edge.js';
import { COVERAGE_PATH } from './coveragePath.js';

type Counts = Record<string, number>;
interface Namespace { mutantCoverage?: { static: Counts; perTest: Record<string, Counts> } }

const separator = (inject as (key: string) => unknown)('testNameSeparator') as string | undefined ?? ' ';

function testId(task: { name: string; file?: { filepath: string }; suite?: { name: string; suite?: unknown } }): string {
  const names = [task.name];
  let suite = task.suite as { name: string; suite?: unknown } | undefined;
  while (suite) {
    names.unshift(suite.name);
    suite = suite.suite as typeof suite;
  }
  return `${task.file?.filepath ?? 'unknown.js'}#${names.join(separator).trim()}`;
}

afterEach(async ({ task }) => {
  const ns = (globalThis as { __stryker__?: Namespace }).__stryker__;
  if (!ns || (globalThis as { __stryker__?: { activeMutant?: unknown } }).__stryker__?.activeMutant !== undefined) return;
  for (const url of liveMutationEdges()) {
    let taken: { static?: Counts; perTest?: Record<string, Counts> };
    try {
      taken = await (await fetch(new URL(COVERAGE_PATH, url))).json() as typeof taken;
    } catch {
      continue; // the test closed its edge
    }
    const coverage = (ns.mutantCoverage ??= { static: {}, perTest: {} });
    const mine = (coverage.perTest[testId(task as never)] ??= {});
    for (const counts of [taken.static ?? {}, ...Object.values(taken.perTest ?? {})]) {
      for (const [id, n] of Object.entries(counts)) mine[id] = (mine[id] ?? 0) + n;
    }
  }
});
