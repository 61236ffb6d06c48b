/**
 * `npm run soak` in its short form (SOAK_SECONDS): it runs on a stack of its own, loses and duplicates no write,
 * answers every request, and prints memory figures of the edge (its RSS, the heap its isolates hold and V8's
 * reservation), the broker and the simulator at the start, at each interval and at the end, what the edge's objects
 * hold then (idempotency records, late-outcome routes, replica rows), and verdicts on the edge's RSS and heap over
 * the last half. No threshold on the figures here: a four-second run says nothing about memory over time.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import type { SoakReport } from '../../bench/soak.js';

let soak: ChildProcess | undefined;
afterAll(async () => {
  if (soak && soak.exitCode === null && soak.signalCode === null) {
    const child = soak;
    const exited = new Promise<boolean>((done) => child.once('exit', () => done(true)));
    child.kill('SIGTERM');
    // Its exit, or SIGKILL if it has not stopped its stack within 3 s.
    const bound = new Promise<boolean>((done) => setTimeout(() => done(false), 3000).unref());
    if (!(await Promise.race([exited, bound]))) child.kill('SIGKILL');
  }
});

describe('npm run soak (short)', () => {
  it('runs a mixed load, loses nothing and prints memory figures at the start, each interval and the end', async () => {
    soak = spawn(process.execPath, ['--import', 'tsx', 'bench/soak.ts'], {
      env: { ...process.env, SOAK_SECONDS: '4', SOAK_INTERVAL_SECONDS: '2', SOAK_RATE: '100' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    soak.stdout!.on('data', (d) => {
      output += d;
    });
    soak.stderr!.on('data', (d) => {
      output += d;
    });
    const code = await new Promise<number | null>((done) => soak!.once('close', (c) => done(c)));
    expect(code, output).toBe(0);

    const report = JSON.parse(output.trim().split('\n').at(-1)!) as SoakReport;
    expect({
      lost: report.lost,
      duplicated: report.duplicated,
      resets: report.resets,
      errors: report.errors,
      unresolved: report.unresolved,
      replayMismatches: report.writes.replayMismatches,
    }).toStrictEqual({ lost: 0, duplicated: 0, resets: 0, errors: 0, unresolved: 0, replayMismatches: 0 });
    expect(report.byKind.cached).toBeGreaterThan(0);
    expect(report.byKind.page).toBeGreaterThan(0);
    expect(report.byKind.live).toBeGreaterThan(0);
    expect(report.writes.updates).toBeGreaterThan(0);
    expect(report.writes.replays).toBeGreaterThan(0);

    // Memory of all three processes, read at the start, at least once in between and at the end.
    expect(report.memory.length).toBeGreaterThanOrEqual(3);
    for (const sample of report.memory) {
      expect(sample.edge, 'workerd RSS').toBeGreaterThan(0);
      expect(sample.broker, 'broker RSS').toBeGreaterThan(0);
      expect(sample.sim, 'simulator RSS').toBeGreaterThan(0);
    }
    const lines = output.split('\n');
    // time, edge RSS, the heap its two isolates hold and V8's reservation, broker RSS (its heap), simulator RSS.
    const memoryLine =
      /^ {2}(start|\d+:\d\d|end)\s+[\d.]+ MB\s+[\d.]+ MB \+ [\d.]+ MB\s+[\d.]+ MB\s+[\d.]+ MB\s+\([\d.]+ MB\)\s+[\d.]+ MB/;
    const labels = lines.filter((l) => memoryLine.test(l)).map((l) => l.trim().split(/\s+/)[0]);
    expect(labels[0]).toBe('start');
    expect(labels.at(-1)).toBe('end');
    expect(labels.length).toBeGreaterThanOrEqual(3);
    expect(output).toMatch(/memory end − start: edge [+−][\d.]+ MB, broker [+−][\d.]+ MB, sim [+−][\d.]+ MB/);

    // What the edge's objects hold: at the end, one idempotency record per key answered (every create and every
    // rename; a replay reuses its key), the demo platforms' replicas filled, the ledgers' files on disk.
    const end = report.memory.at(-1)!.held!;
    expect(end.keys).toBe(report.writes.creates + report.writes.updates);
    expect(end.replicaRows).toBeGreaterThan(0);
    expect(end.ledgerDiskBytes).toBeGreaterThan(0);
    expect(report.memory[0].held).toMatchObject({ keys: 8, routes: 0 }); // the writers' own accounts, made before the load
    // The heap each of the edge's isolates holds, read through workerd's inspector at every sample: some MB each, within
    // what V8 has reserved for both.
    for (const sample of report.memory) {
      expect(sample.heap, 'edge heap').toBeTruthy();
      const { edge, objects, committed } = sample.heap!;
      expect(edge).toBeGreaterThan(1_000_000);
      expect(objects).toBeGreaterThan(1_000_000);
      expect(committed).toBeGreaterThanOrEqual(edge + objects);
    }
    // The verdict, when the last half holds 3 samples (a four-second run may not): a fitted rise
    // judged against the default bound (bench/soakVerdict.test.ts checks the fit itself).
    for (const [what, verdict] of [
      ['edge RSS', report.verdict],
      ["heap the edge's isolates hold", report.heapVerdict],
    ] as const) {
      if (verdict === null) {
        expect(output).toContain(`${what} over the last half: too few samples for a verdict`);
      } else {
        expect(verdict).toMatchObject({ flatMb: 50, flat: verdict.riseMb <= 50 });
        expect(verdict.samples).toBeGreaterThanOrEqual(3);
        expect(output).toMatch(
          new RegExp(
            `${what} over the last half \\(\\d+ samples, fitted line\\): [+−][\\d.]+ MB ± [\\d.]+ MB: (flat|GROWING) \\(within 50 MB\\)`,
          ),
        );
      }
    }
  }, 180_000);
});
