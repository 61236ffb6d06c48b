/**
 * The tests mutation testing runs (`npm run test:mutation`, stryker.config.json): every test that exercises the core in
 * this process or in workerd (the edge tests, bridged by test/mutation/setup.ts). Tests that reach the core only
 * through child processes (the end-to-end stacks, the CLIs) are left out: the mutation tester can neither activate a
 * mutant nor see coverage in another Node process, so they would cost minutes per mutant and decide nothing. The
 * exception is the v1 and v2 end-to-end files for the broker's handlers, run with the broker in this process.
 */
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { terminalTextForTests } from './launcher/workerAssets.js';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { ImportFailures } from './test/mutation/importFailures.js';

/**
 * A mutant's run stops at its first failed test, so the quickest files go first: in-process tests, then the edge
 * files (each starts workerd), then the end-to-end files (each starts a stack); within a kind, the shortest by the
 * last run's duration. (vitest's default runs the longest first.)
 */
class QuickestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const kind = (f: TestSpecification) =>
      /[\\/]test[\\/]e2e[\\/]/.test(f.moduleId) ? 2 : /[\\/]test[\\/]edge[\\/]/.test(f.moduleId) ? 1 : 0;
    const duration = (f: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`)?.duration ??
      Number.MAX_SAFE_INTEGER;
    return [...files].sort((a, b) => kind(a) - kind(b) || duration(a) - duration(b));
  }
}

/** test/mutation/mutation.ts narrows the tests to those that can reach the folder under test (comma-separated globs). */
const only = process.env.MUTATION_TESTS?.split(',').filter(Boolean);

export default defineConfig({
  plugins: [terminalTextForTests],
  test: {
    include: only ?? ['{test,shared,broker,sim,workers}/**/*.test.ts'],
    exclude: [
      '**/node_modules/**',
      // The end-to-end files run only where a folder names them (test/mutation/mutation.ts starts the broker in this
      // process for them); the rest kill processes or need them.
      ...(only?.some((glob) => glob.startsWith('test/e2e/')) ? ['test/e2e/*.test.ts'] : ['test/e2e/**']),
      'broker/main.test.ts',
      'sim/main.test.ts',
      'test/edge/deploy.test.ts',
      'test/edge/registry.cli.test.ts',
      'test/edge/docs.test.ts',
    ],
    setupFiles: ['test/mutation/setup.ts'],
    sequence: { sequencer: QuickestFirst },
    reporters: ['default', new ImportFailures()],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
