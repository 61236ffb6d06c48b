/**
 * The chaos soak, short (bench/chaosDrill.ts; at length `npm run chaos`): two brokers serving the demo platforms, a
 * bank of keyed balance operations retried as a client is told to, cached and live reads, unkeyed writes and two
 * stream clients, through one round of every fault kind in a seeded random order (the drill injects a first round whole however short
 * its time), each at the shortest length of its range: broker `kill -9`, `SIGSTOP`
 * and drained restart, the trading server dropping its connections, freezing, answering late and restarting, link
 * and stream objects losing their sockets. Every fault kind is injected, and the checker finds no violation: every
 * balance is its opening plus the keys applied, each once, none left without a final answer, no read went back, no
 * stream skipped a balance event without a resync.
 */
import { describe, expect, it } from 'vitest';
import { CHAOS_FAULTS, formatChaosReport, runChaos } from '../../bench/chaosDrill.js';

describe('the chaos soak, short', () => {
  it('injects every fault kind and breaks no invariant of the bank, the reads or the streams', async () => {
    const report = await runChaos({
      seconds: 1,
      seed: 7,
      accounts: 4,
      writers: 3,
      calmMs: [100, 400],
      shortestFaults: true,
    });
    if (process.env.E2E_LOG) console.log(formatChaosReport(report));
    expect(
      Object.entries(report.injected)
        .filter(([, n]) => n === 0)
        .map(([f]) => f),
      'fault kinds never injected',
    ).toStrictEqual([]);
    expect(Object.keys(report.injected)).toStrictEqual(CHAOS_FAULTS);
    // The load ran: operations applied and read back, streams that carried balance events.
    expect(report.bank.applied).toBeGreaterThan(20);
    expect(report.reads.checked).toBeGreaterThan(20);
    expect(report.streams.map((s) => [s.client, s.balanceEvents > 0])).toStrictEqual([
      ['sse', true],
      ['hub', true],
    ]);
    expect(report.verdict.violations, formatChaosReport(report)).toStrictEqual([]);
    expect(report.bank.unresolved).toBe(0);
  }, 300_000);
});
