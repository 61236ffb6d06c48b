/**
 * `npm test`'s test run. One layout: a test of one file sits beside it, named after it (`users.ts` → `users.test.ts`,
 * an aspect as `brokerLink.frames.test.ts`), in every folder (product, launcher, bench, scripts), and is type-checked
 * with its folder (workers/ with the worker's types); the tests of running processes are under test/: `test/edge`
 * (the worker in workerd), `test/e2e` (the whole stack), with their shared set-up in `test/support` and
 * `test/e2e/support.ts`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { terminalTextForTests } from './launcher/workerAssets.js';

const root = import.meta.dirname;
const UNIT_FOLDERS = [
  'shared',
  'bridge',
  'broker',
  'sim',
  'workers',
  'scripts',
  'bench',
  'launcher',
  'examples/bridge-minimal',
];

/** The test files under `folder`, relative to the root. */
function testFiles(folder: string): string[] {
  if (!existsSync(join(root, folder))) return [];
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts') && !file.split(/[\\/]/).includes('node_modules'))
    .map((file) => relative(root, join(root, folder, file)).replaceAll('\\', '/'));
}

/**
 * A test that replaces a module, a global, a timer or a method for its file (`vi.mock`, `vi.stubGlobal`, fake
 * timers, spies) runs in a process of its own: the other unit tests share their processes and modules (importing the
 * catalog once per process instead of once per file), and must leave nothing changed behind them.
 */
const REPLACES = /\bvi\s*\.\s*(mock|doMock|unmock|hoisted|stubGlobal|stubEnv|useFakeTimers|spyOn|resetModules)\b/;
const unitFiles = UNIT_FOLDERS.flatMap(testFiles);
const ownProcess = unitFiles.filter((file) => REPLACES.test(readFileSync(join(root, file), 'utf8')));
const shared = unitFiles.filter((file) => !ownProcess.includes(file));

/**
 * The files under test/ (seconds each: they start processes) before every other file (mostly milliseconds), each
 * part in vitest's own order (longest first by the last run's times, by size without them): the two workers then end
 * together on short files instead of one of them running a long file alone at the end.
 */
class ProcessTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const startsProcesses = (file: TestSpecification) =>
      relative(root, file.moduleId).replaceAll('\\', '/').startsWith('test/');
    return [...sorted.filter(startsProcesses), ...sorted.filter((file) => !startsProcesses(file))];
  }
}

export default defineConfig({
  // The web terminal's files as text, as the worker imports them (workers/terminal).
  plugins: [terminalTextForTests],
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end files start real processes; two at a time suit a 2-core machine.
    maxWorkers: 2,
    sequence: { sequencer: ProcessTestsFirst },
    projects: [
      // The files that start processes share their workers' modules too (importing Miniflare, esbuild and the
      // launcher once per worker, not once per file), each leaving the environment as it found it.
      {
        extends: true,
        test: {
          name: 'processes',
          include: ['test/**/*.test.ts'],
          isolate: false,
          setupFiles: ['test/support/ownEnvironment.ts'],
        },
      },
      { extends: true, test: { name: 'units', include: shared, isolate: false } },
      { extends: true, test: { name: 'units apart', include: ownProcess } },
    ],
  },
});
