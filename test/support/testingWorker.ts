/**
 * Starts one of the edge's testing workers (`workers/testing/*.ts`: real gateway objects beside stand-ins, on a clock
 * the test moves) in workerd, and stops it. Under mutation testing the bundle carries this run's active mutant and
 * its coverage is asked after each test, as for the edge itself (test/support/edge.ts).
 */
import { build } from 'esbuild';
import { Miniflare, type WorkerOptions } from 'miniflare';
import { join, resolve } from 'node:path';
import { COMPATIBILITY_DATE } from '../../launcher/edge.js';
import { mutationPrelude, watchMutationCoverage } from './edge.js';

export interface TestingWorker {
  mf: Miniflare;
  /** A Durable Object of the worker (the first worker unless `worker` names another) by name, typed by the test. */
  object<T>(binding: string, name: string, worker?: string): Promise<T>;
  close(): Promise<void>;
}

/**
 * Bundles `workers/testing/<file>` and runs it as each of `workers` (same code, their own bindings and objects); the
 * first is the one whose coverage is watched. Nothing listens beyond 127.0.0.1.
 */
export async function startTestingWorker(
  file: string, workers: Array<{ name: string } & Pick<WorkerOptions, 'bindings' | 'durableObjects'>>,
): Promise<TestingWorker> {
  const entry = join(resolve(import.meta.dirname, '../..'), 'workers/testing', file);
  const bundle = await build({
    entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022', write: false, logLevel: 'silent', external: ['cloudflare:*'],
  });
  const contents = mutationPrelude() + bundle.outputFiles[0].text;
  const mf = new Miniflare({
    host: '127.0.0.1',
    workers: workers.map((w) => ({
      ...w, modules: [{ type: 'ESModule' as const, path: 'worker.js', contents }], compatibilityDate: COMPATIBILITY_DATE,
    })),
  });
  const unwatch = watchMutationCoverage(await mf.ready);
  return {
    mf,
    async object<T>(binding: string, name: string, worker?: string) {
      const ns = await mf.getDurableObjectNamespace(binding, worker);
      return ns.get(ns.idFromName(name)) as unknown as T;
    },
    async close() {
      unwatch();
      await mf.dispose();
    },
  };
}
