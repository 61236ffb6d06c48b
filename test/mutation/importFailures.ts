/**
 * A vitest reporter for mutation testing only (vitest.mutation.config.ts): a test file whose imports fail has no
 * tests, and the mutation tester counts only failed tests, so a mutant that breaks the catalog's tables at import
 * (every test file that imports them fails to load) would be counted as survived. Such a file is given one failed
 * test of its own, "loads its imports", carrying the import's error: the suite did notice the mutant.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';

interface FileTask {
  type: string;
  filepath: string;
  tasks: Array<{ type: string; tasks?: unknown[] }>;
  result?: { state?: string; errors?: unknown[] };
}

const hasTests = (tasks: Array<{ type: string; tasks?: unknown[] }>): boolean =>
  tasks.some((t) => t.type === 'test' || (t.type === 'suite' && hasTests((t.tasks ?? []) as typeof tasks)));

export class ImportFailures implements Reporter {
  private vitest?: Vitest;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>): void {
    for (const file of (this.vitest?.state.getFiles() ?? []) as unknown as FileTask[]) {
      if (file.result?.state !== 'fail' || hasTests(file.tasks)) continue;
      file.tasks.push({
        type: 'test', name: 'loads its imports', mode: 'run', file, suite: undefined, tasks: undefined,
        result: { state: 'fail', errors: file.result.errors ?? [{ message: 'the test file failed to load' }], duration: 0 },
      } as unknown as FileTask['tasks'][number]);
    }
  }
}
