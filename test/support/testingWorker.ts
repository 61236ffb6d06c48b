/**
 * Starts one of the edge's testing workers (`test/support/workers/*.ts`: real gateway objects beside stand-ins, on a clock
 * the test moves) in workerd, and stops it. Under mutation testing the bundle carries this run's active mutant and
 * its coverage is asked after each test, as for the edge itself (test/support/edge.ts).
 */
import { build } from 'esbuild';
import { Miniflare, type WorkerOptions } from 'miniflare';
import { join } from 'node:path';
import { COMPATIBILITY_DATE } from '../../launcher/edge.js';
import { mutationPrelude, watchMutationCoverage } from './edge.js';

export interface TestingWorker {
  mf: Miniflare;
  /** A Durable Object of the worker (the first worker unless `worker` names another) by name, typed by the test. */
  object<T>(binding: string, name: string, worker?: string): Promise<T>;
  close(): Promise<void>;
}

/**
 * Bundles `test/support/workers/<file>` and runs it as each of `workers` (same code, their own bindings and objects); the
 * first is the one whose coverage is watched. Nothing listens beyond 127.0.0.1.
 */
export async function startTestingWorker(
  file: string,
  workers: Array<{ name: string } & Pick<WorkerOptions, 'bindings' | 'durableObjects'>>,
): Promise<TestingWorker> {
  const entry = join(import.meta.dirname, 'workers', file);
  const bundle = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    external: ['cloudflare:*'],
  });
  const contents = mutationPrelude() + bundle.outputFiles[0].text;
  // The objects are reached through a worker of its own holding every testing worker's object bindings
  // (`<worker>:<binding>`), over asynchronous fetches: a stub from Miniflare's namespace handle makes synchronous round
  // trips, and on a loaded machine a late wake-up of one hands the next call another's answer, failing every call after.
  const forwarded: Record<string, { className: string; scriptName: string; useSQLite?: boolean }> = {};
  for (const w of workers) {
    for (const [binding, target] of Object.entries<
      string | { className: string; scriptName?: string; useSQLite?: boolean }
    >(w.durableObjects ?? {})) {
      if (typeof target === 'string') forwarded[`${w.name}:${binding}`] = { className: target, scriptName: w.name };
      else
        forwarded[`${w.name}:${binding}`] = {
          className: target.className,
          scriptName: target.scriptName ?? w.name,
          ...(target.useSQLite ? { useSQLite: true } : {}),
        };
    }
  }
  const mf = new Miniflare({
    host: '127.0.0.1',
    workers: [
      ...workers.map((w) => ({
        ...w,
        modules: [{ type: 'ESModule' as const, path: 'worker.js', contents }],
        compatibilityDate: COMPATIBILITY_DATE,
      })),
      {
        name: OBJECT_CALLS,
        modules: [{ type: 'ESModule' as const, path: 'calls.js', contents: OBJECT_CALLS_SCRIPT }],
        compatibilityDate: COMPATIBILITY_DATE,
        durableObjects: forwarded,
      },
    ],
  });
  const unwatch = watchMutationCoverage(await mf.ready);
  const calls = mf.getWorker(OBJECT_CALLS);
  const call = async (binding: string, name: string, method: string, args: unknown[]) => {
    const res = await (await calls).fetch('http://calls.internal/', {
      method: 'POST',
      body: JSON.stringify({ binding, name, method, args }, bytesOut),
    });
    const text = await res.text();
    let answer: { result?: unknown; error?: string };
    try {
      answer = JSON.parse(text, bytesIn) as typeof answer;
    } catch {
      throw new Error(`${binding}.${method}: the object-calls worker answered ${res.status}: ${text.slice(0, 200)}`);
    }
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.result;
  };
  return {
    mf,
    // eslint-disable-next-line @typescript-eslint/require-await -- an unknown binding rejects the await, as a missing object does
    async object<T>(binding: string, name: string, worker?: string) {
      const key = `${worker ?? workers[0].name}:${binding}`;
      if (!forwarded[key]) throw new Error(`no object binding ${binding} on worker ${worker ?? workers[0].name}`);
      // Every method of the object, called with JSON arguments; not a thenable, so it can be awaited as itself.
      return new Proxy(
        {},
        {
          get: (_target, method) =>
            method === 'then' || typeof method !== 'string'
              ? undefined
              : (...args: unknown[]) => call(key, name, method, args),
        },
      ) as T;
    },
    async close() {
      unwatch();
      await mf.dispose();
    },
  };
}

const OBJECT_CALLS = 'object-calls';

/** Byte arrays travel as `{"$bytes": base64}` both ways; everything else as JSON. */
function bytesOut(_key: string, value: unknown): unknown {
  return value instanceof Uint8Array ? { $bytes: Buffer.from(value).toString('base64') } : value;
}
function bytesIn(_key: string, value: unknown): unknown {
  return value !== null && typeof value === 'object' && typeof (value as { $bytes?: unknown }).$bytes === 'string'
    ? new Uint8Array(Buffer.from((value as { $bytes: string }).$bytes, 'base64'))
    : value;
}

// An answer JSON would change (a Map or Set to {}, NaN to null, a function dropped) is refused, so a test never passes
// on a value the object's real callers would see differently.
const OBJECT_CALLS_SCRIPT = `
const bytesOut = (key, value) => {
  if (value instanceof Uint8Array) return { $bytes: btoa(Array.from(value, (b) => String.fromCharCode(b)).join('')) };
  if (typeof value === 'function' || typeof value === 'symbol' || value instanceof Map || value instanceof Set
    || (typeof value === 'number' && !Number.isFinite(value))) {
    throw new Error('the object answered ' + String(value) + (key ? ' at ' + key : '') + ', which JSON would change');
  }
  return value;
};
const bytesIn = (key, value) => value !== null && typeof value === 'object' && typeof value.$bytes === 'string'
  ? Uint8Array.from(atob(value.$bytes), (c) => c.charCodeAt(0))
  : value;
export default {
  async fetch(request, env) {
    const { binding, name, method, args } = JSON.parse(await request.text(), bytesIn);
    try {
      const namespace = env[binding];
      const result = await namespace.get(namespace.idFromName(name))[method](...args);
      return new Response(JSON.stringify({ result }, bytesOut));
    } catch (error) {
      return new Response(JSON.stringify({ error: String(error && error.message || error) }), { status: 500 });
    }
  },
};`;
