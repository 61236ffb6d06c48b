/**
 * Timed reads on a thread of their own (bench/attack/timedReads.ts and readerThread.ts): the thread starts from its
 * TypeScript source, reads with the token until stopped, and hands back each read's time and outcome.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './http.js';
import { startTimedReads, startTsWorker } from './timedReads.js';
import { until } from './waiting.js';

describe('timed reads on a thread', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((done) => (server ? server.close(done) : done(undefined)));
    server = undefined;
  });

  it('reads until stopped, and counts only a 200 without an error as a good read', async () => {
    const seen: Array<string | undefined> = [];
    const answers = [
      [200, '{"data":1,"error":null}'],
      [200, '{"data":2,"error":null}'],
      [200, '{"data":null,"error":{"code":"Timeout"}}'],
      [500, '{"error":null}'],
      [200, 'not json'],
    ] as const;
    server = createServer((req, res) => {
      const [status, body] = answers[Math.min(seen.length, answers.length - 1)];
      seen.push(req.headers.authorization);
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    const port = await freePort();
    await new Promise<void>((done) => server!.listen(port, '127.0.0.1', done));

    const started = Date.now();
    const reads = startTimedReads(`http://127.0.0.1:${port}/read`, 'tok');
    expect(await until(() => seen.length >= 7, 20_000)).toBe(true);
    const timed = await reads.stop();
    expect(timed.length).toBe(seen.length);
    expect(new Set(seen)).toStrictEqual(new Set(['Bearer tok']));
    expect(timed.map((r) => r.ok)).toStrictEqual([true, true, false, false, ...Array(timed.length - 4).fill(false)]);
    for (const [i, r] of timed.entries()) {
      expect(r.ms).toBeGreaterThan(0);
      expect(r.at).toBeGreaterThanOrEqual(i === 0 ? started : timed[i - 1].at);
    }
  });

  it('fails a thread whose module cannot be loaded', async () => {
    const thread = startTsWorker(new URL('./noSuchThread.ts', import.meta.url), {});
    const failure = await new Promise<Error>((done) => thread.once('error', done));
    expect(failure.message).toMatch(/noSuchThread/);
    await thread.terminate();
  });
});
