/**
 * A short fault drill (bench/faultDrill.ts) across the real processes: writes under Idempotency-Keys from several
 * writers while the trading server drops its connections, answers creates late, refuses logins and restarts, and the
 * broker is killed and started again. Counted against the trading server's accounts: nothing lost, nothing
 * duplicated, every request answered, every fault recovered from, and /healthz reporting each lasting fault.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { stackForFile, type Client } from './support.js';
import { ALL_FAULTS, formatDrillReport, runFaultDrill } from '../../bench/faultDrill.js';

let c: Client;
const setup = stackForFile();
beforeAll(() => {
  c = setup.client;
});

describe('fault drill', () => {
  it('loses and duplicates no write under any fault, answers every request, and recovers from each fault', async () => {
    const report = await runFaultDrill({
      stack: c.stack,
      writers: 4,
      faultMs: 500,
      calmMs: 200,
      writeSeconds: 1,
      settleMs: 20_000,
      faults: ALL_FAULTS,
    });
    if (process.env.E2E_LOG) console.log(formatDrillReport(report));
    expect(report.faults.map((f) => f.fault)).toEqual(ALL_FAULTS);
    expect(report.faults.filter((f) => f.recoveryMs === null)).toEqual([]);
    expect(report.succeeded).toBeGreaterThan(0);
    expect({
      lost: report.lost,
      duplicated: report.duplicated,
      resets: report.resets,
      unresolved: report.unresolved,
    }).toStrictEqual({ lost: 0, duplicated: 0, resets: 0, unresolved: 0 });
    expect(report.unknown.applied).toBeLessThanOrEqual(report.unknown.writes);
    // /healthz told the truth at some point of every fault that lasts: the faulted tier down, the others up.
    const toldDuring = report.faults.filter((f) => f.health.during).map((f) => [f.fault, f.health.during!.right > 0]);
    expect(toldDuring).toEqual(ALL_FAULTS.filter((f) => f !== 'drop').map((f) => [f, true]));
  }, 180_000);
});
