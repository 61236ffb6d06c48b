/**
 * A vitest reporter for mutation testing only (vitest.mutation.config.ts). The mutation tester counts only failed
 * tests, so a mutant that a file notices before any test runs would be counted as survived:
 * - a file whose imports fail has no tests (a mutant that breaks the catalog's tables at import);
 * - a file whose `beforeAll` fails runs none of its tests (a mutant that keeps the worker from starting in workerd,
 *   or a stack from coming up), which vitest leaves without a result of their own.
 * Such a file is given one failed test of its own ("loads its imports", or "runs its set-up" when it has tests),
 * carrying the file's errors: the suite did notice the mutant.
 */
import type { Reporter, TestModule, Vitest } from 'vitest/node';

interface FileTask {
  type: string;
  filepath: string;
  tasks: Array<{ type: string; tasks?: unknown[] }>;
  result?: { state?: string; errors?: unknown[] };
}

type Task = { type: string; tasks?: unknown[]; result?: { state?: string; errors?: unknown[] } };
const hasTests = (tasks: Task[]): boolean =>
  tasks.some((t) => t.type === 'test' || (t.type === 'suite' && hasTests((t.tasks ?? []) as Task[])));
const failedTest = (tasks: Task[]): boolean =>
  tasks.some(
    (t) =>
      (t.type === 'test' && t.result?.state === 'fail') ||
      (t.type === 'suite' && failedTest((t.tasks ?? []) as Task[])),
  );
/** The errors of the file and of its suites (a failed hook's error is its suite's). */
const errorsOf = (task: Task): unknown[] => [
  ...(task.result?.errors ?? []),
  ...((task.tasks ?? []) as Task[]).filter((t) => t.type === 'suite').flatMap(errorsOf),
];

export class ImportFailures implements Reporter {
  private vitest?: Vitest;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(_modules: ReadonlyArray<TestModule>): void {
    for (const file of (this.vitest?.state.getFiles() ?? []) as unknown as FileTask[]) {
      if (file.result?.state !== 'fail' || failedTest(file.tasks)) continue;
      const loaded = hasTests(file.tasks);
      const errors = errorsOf(file);
      file.tasks.push({
        type: 'test',
        name: loaded ? 'runs its set-up' : 'loads its imports',
        mode: 'run',
        file,
        suite: undefined,
        tasks: undefined,
        result: {
          state: 'fail',
          errors:
            errors.length > 0
              ? errors
              : [{ message: loaded ? "the test file's set-up failed" : 'the test file failed to load' }],
          duration: 0,
        },
      } as unknown as FileTask['tasks'][number]);
    }
  }
}
