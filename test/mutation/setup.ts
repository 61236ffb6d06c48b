/**
 * Mutation testing's per-test coverage, made right for this suite (setup file of vitest.mutation.config.ts, used by
 * `npm run test:mutation` only; the mutation tester's own setup file runs first).
 *
 * - A file's set-up: code a file's imports evaluate (the catalog's tables, module constants) or its `beforeAll` runs
 *   (a broker filling its cache, a simulator starting) is hit outside any test, which the tester would take for static
 *   code and answer by running every test of every file for each such mutant. Each test file runs in a fresh worker
 *   with its own module graph, so those hits are counted for each test of the file instead: running any of them
 *   repeats the imports and the `beforeAll`. A mutant's run therefore activates it before the file's imports, as the
 *   tester does for static mutants; only what this setup's own imports hit stays static.
 * - workerd: the edge tests run the worker in workerd, a process the tester cannot see into. After each test the
 *   coverage the instrumented worker counted is fetched from every edge still running and counted as this test's
 *   (what the edge counted before the file's first test, as the file's set-up). The active mutant goes the other way,
 *   in the bundle's prelude (test/support/edge.ts).
 */
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import { liveMutationEdges } from '../support/edge.js';
import { COVERAGE_PATH } from './coveragePath.js';

type Counts = Record<string, number>;
interface Coverage {
  static: Counts;
  perTest: Record<string, Counts>;
}
interface Namespace {
  mutantCoverage?: Coverage;
}

const injected = inject as (key: string) => unknown;
const separator = (injected('testNameSeparator') as string | undefined) ?? ' ';
/** Only the initial run measures coverage; a mutant's run must leave it alone. */
const measuring = injected('mode') === 'dry-run';

const ns = () => (globalThis as { __stryker__?: Namespace }).__stryker__;
const coverage = (): Coverage => {
  const n = ns()!;
  n.mutantCoverage ??= { static: {}, perTest: {} };
  n.mutantCoverage.static ??= {};
  n.mutantCoverage.perTest ??= {};
  return n.mutantCoverage;
};

function testId(task: {
  name: string;
  file?: { filepath: string };
  suite?: { name: string; suite?: unknown };
}): string {
  const names = [task.name];
  let suite = task.suite;
  while (suite) {
    names.unshift(suite.name);
    suite = suite.suite as typeof suite;
  }
  return `${task.file?.filepath ?? 'unknown.js'}#${names.join(separator).trim()}`;
}

function add(to: Counts, from: Counts): void {
  for (const [id, n] of Object.entries(from)) to[id] = (to[id] ?? 0) + n;
}

/** What every edge of this process counted since it was last asked (an edge already closed counts nothing more). */
async function takeEdgeCoverage(): Promise<Counts> {
  const taken: Counts = {};
  for (const url of liveMutationEdges()) {
    try {
      const c = (await (await fetch(new URL(COVERAGE_PATH, url))).json()) as Partial<Coverage>;
      add(taken, c.static ?? {});
      for (const counts of Object.values(c.perTest ?? {})) add(taken, counts);
    } catch {
      // the edge closed meanwhile
    }
  }
  return taken;
}

/**
 * Static hits before the test file was imported, and what the file's import and set-up hit (counted for each of its
 * tests). Each test file runs in a fresh worker with its own module graph, so code evaluated while the file's imports
 * load (the catalog's tables, module constants) can only be seen by that file's tests: it is their set-up, not code
 * every test of every file must be rerun for.
 */
let staticAtStart: Counts = {};
/** Test files whose tests share state from one test to the next. */
const WHOLE_FILE = /[\\/]test[\\/]e2e[\\/][^#]*#/;
let setUp: Counts | undefined;

if (injected('mode') === 'mutant') {
  // Before the test file's imports: a mutant in import-time code runs as a runtime one (its hits are set-up above).
  const n = ns() as { activeMutant?: unknown } | undefined;
  if (n) n.activeMutant = injected('activeMutant');
}

if (measuring) {
  // This setup file is evaluated before the test file's own imports.
  staticAtStart = { ...coverage().static };
  beforeAll(() => {
    setUp = undefined;
  });

  beforeEach(async () => {
    if (setUp) return;
    // The file's first test: everything hit since the file's hooks began is its set-up.
    const stat = coverage().static;
    setUp = await takeEdgeCoverage();
    for (const [id, n] of Object.entries(stat)) {
      const during = n - (staticAtStart[id] ?? 0);
      if (during <= 0) continue;
      setUp[id] = (setUp[id] ?? 0) + during;
      if (staticAtStart[id] === undefined) delete stat[id];
      else stat[id] = staticAtStart[id];
    }
  });

  const tests: string[] = [];
  afterEach(async ({ task }) => {
    const id = testId(task);
    tests.push(id);
    const mine = (coverage().perTest[id] ??= {});
    add(mine, await takeEdgeCoverage());
    add(mine, setUp ?? {});
  });

  // An end-to-end file's tests build on each other (the account one test opens, the next trades on), so none of them
  // can run alone: what any of them hit counts for all of them, and a mutant's run repeats the whole file in order.
  afterAll(() => {
    if (!tests.some((id) => WHOLE_FILE.test(id))) return;
    const perTest = coverage().perTest;
    const union: Counts = {};
    for (const id of tests) add(union, perTest[id] ?? {});
    for (const id of tests) perTest[id] = { ...union };
  });
}
