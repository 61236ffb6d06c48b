/**
 * `npm run soak` in its short form (SOAK_SECONDS): it runs on a stack of its own, loses and duplicates no write,
 * answers every request, and prints memory figures of the edge, the broker and the simulator at the start, at each
 * interval and at the end. No threshold on the figures: they are for a person to read.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import type { SoakReport } from '../../bench/soak.js';

let soak: ChildProcess | undefined;
afterAll(async () => {
  if (soak && soak.exitCode === null && soak.signalCode === null) {
    soak.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 3000));
    if (soak.exitCode === null && soak.signalCode === null) soak.kill('SIGKILL');
  }
});

describe('npm run soak (short)', () => {
  it('runs a mixed load, loses nothing and prints memory figures at the start, each interval and the end', async () => {
    soak = spawn(process.execPath, ['--import', 'tsx', 'bench/soak.ts'], {
      env: { ...process.env, SOAK_SECONDS: '6', SOAK_INTERVAL_SECONDS: '2', SOAK_RATE: '100' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    soak.stdout!.on('data', (d) => { output += d; });
    soak.stderr!.on('data', (d) => { output += d; });
    const code = await new Promise<number | null>((done) => soak!.once('close', (c) => done(c)));
    expect(code, output).toBe(0);

    const report = JSON.parse(output.trim().split('\n').at(-1)!) as SoakReport;
    expect({
      lost: report.lost, duplicated: report.duplicated, resets: report.resets, errors: report.errors,
      unresolved: report.unresolved, replayMismatches: report.writes.replayMismatches,
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
    const memoryLine = /^ {2}(start|\d+:\d\d|end)\s+[\d.]+ MB\s+[\d.]+ MB\s+\([\d.]+ MB\)\s+[\d.]+ MB/;
    const labels = lines.filter((l) => memoryLine.test(l)).map((l) => l.trim().split(/\s+/)[0]);
    expect(labels[0]).toBe('start');
    expect(labels.at(-1)).toBe('end');
    expect(labels.length).toBeGreaterThanOrEqual(3);
    expect(output).toMatch(/memory end − start: edge [+−][\d.]+ MB, broker [+−][\d.]+ MB, sim [+−][\d.]+ MB/);
  }, 180_000);
});
