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
