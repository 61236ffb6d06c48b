/**
 * `npm test`'s test run. One layout: a test of one file sits beside it, named after it (`users.ts` → `users.test.ts`,
 * an aspect as `brokerLink.frames.test.ts`), in every folder (product, launcher, bench, scripts), and is type-checked
 * with its folder (workers/ with the worker's types); the tests of running processes are under test/: `test/edge`
 * (the worker in workerd), `test/e2e` (the whole stack), with their shared set-up in `test/support` and
 * `test/e2e/support.ts`.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{test,shared,broker,sim,workers,scripts,bench,launcher}/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end files start real processes; two at a time suit a 2-core machine.
    maxWorkers: 2,
  },
});
