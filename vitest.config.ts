/**
 * `npm test`'s test run. One layout: a test of one file sits beside it, named after it (`users.ts` → `users.test.ts`,
 * an aspect as `brokerLink.frames.test.ts`), in every folder (product, launcher, bench, scripts), and is type-checked
 * with its folder (workers/ with the worker's types); the tests of running processes are under test/: `test/edge`
 * (the worker in workerd), `test/e2e` (the whole stack), with their shared set-up in `test/support` and
 * `test/e2e/support.ts`.
 */
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { terminalTextForTests } from './launcher/workerAssets.js';

/**
 * The files under test/ (seconds each: they start processes) before every other file (mostly milliseconds), each
 * part in vitest's own order (longest first by the last run's times, by size without them): the two workers then end
 * together on short files instead of one of them running a long file alone at the end.
 */
class ProcessTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const startsProcesses = (file: TestSpecification) => file.moduleId.startsWith(`${file.project.config.root}/test/`);
    return [...sorted.filter(startsProcesses), ...sorted.filter((file) => !startsProcesses(file))];
  }
}

export default defineConfig({
  // The web terminal's files as text, as the worker imports them (workers/terminal).
  plugins: [terminalTextForTests],
  test: {
    include: ['{test,shared,broker,sim,workers,scripts,bench,launcher}/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end files start real processes; two at a time suit a 2-core machine.
    maxWorkers: 2,
    sequence: { sequencer: ProcessTestsFirst },
  },
});
