/**
 * Reads timed on a thread of their own (bench/attack/readerThread.ts), so that the drill's own client work in its main
 * thread does not delay them, and the thread started from its TypeScript source.
 */
import { Worker } from 'node:worker_threads';

export interface TimedRead {
  /** When the read ended (ms since the epoch). */
  at: number;
  /** How long it took. */
  ms: number;
  /** Answered 200 with no error in its envelope. */
  ok: boolean;
}

/**
 * A worker thread on a TypeScript module. Node 20 does not apply `--import tsx` from a worker's execArgv to its entry,
 * so the thread starts with tsx's loader and has it import the module.
 */
export function startTsWorker(module: URL, workerData: unknown): Worker {
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => api.tsImport(${JSON.stringify(module.href)}, ${JSON.stringify(module.href)}));`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** Starts timing GETs of `url` with `token`; `stop` ends them and answers every read. */
export function startTimedReads(url: string, token: string): { stop(): Promise<TimedRead[]> } {
  const thread = startTsWorker(new URL('./readerThread.ts', import.meta.url), { url, token });
  const done = new Promise<TimedRead[]>((resolveReads, reject) => {
    thread.once('message', resolveReads);
    thread.once('error', reject);
  });
  // Awaited only at the stop: until then a failed thread must not end the drill as an unhandled rejection.
  done.catch(() => {});
  return {
    async stop() {
      thread.postMessage('stop');
      const reads = await done;
      await thread.terminate();
      return reads;
    },
  };
}
