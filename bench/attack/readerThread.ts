/**
 * The attack drill's timed reads, run on a thread of their own (started by bench/attack/timedReads.ts): one GET after
 * another with the bearer token until the parent posts any message, then the time and outcome of every read posted
 * back at once, so that the reading thread does nothing else while the flood runs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { TimedRead } from './timedReads.js';

const { url, token } = workerData as { url: string; token: string };
const reads: TimedRead[] = [];
let reading = true;
parentPort!.on('message', () => {
  reading = false;
});
void (async () => {
  while (reading) {
    const t = performance.now();
    let ok = false;
    try {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { error?: unknown };
      ok = res.status === 200 && body.error === null;
    } catch {
      /* a failed read */
    }
    reads.push({ at: Date.now(), ms: performance.now() - t, ok });
    await new Promise((r) => setImmediate(r));
  }
  parentPort!.postMessage(reads);
})();
