/**
 * The failover drill, short (bench/failoverDrill.ts; at length `npm run drill:failover`): two brokers serving the demo
 * platforms under a mixed load of reads, writes with and without an Idempotency-Key and two stream clients, through
 * `kill -9` and `SIGSTOP` of the serving broker, a rolling `SIGTERM` restart of both and the standby's loss. No read
 * fails, no keyed write is lost or duplicated, only writes in flight on a lost broker are left unknown, a rolling
 * restart and a standby's loss fail nothing, the streams carry on, with a resync notice wherever they moved. How fast the
 * takeover is, is the drill's figure, not this test's.
 */
import { describe, expect, it } from 'vitest';
import { runFailoverDrill, type FailoverRow } from '../../bench/failoverDrill.js';

describe('the failover drill, short', () => {
  it("loses no read and no keyed write through every fault, and fails nothing in a rolling restart or a standby's loss", async () => {
    const report = await runFailoverDrill({
      // The stopped broker resumes once the standby has taken over (at most 3 s): the takeover is what `stop` tests.
      stopMs: 3000,
      resumeOnTakeover: true,
      downMs: 200,
      calmMs: 250,
      holdDownSeconds: 1,
      readers: 1,
      writers: 1,
    });
    const row = (fault: FailoverRow['fault']) => report.rows.find((r) => r.fault === fault)!;
    expect(report.rows.map((r) => r.fault)).toStrictEqual(['kill', 'stop', 'rolling', 'standby-loss']);
    for (const r of report.rows) {
      // The load ran through each fault, and nothing a caller relies on broke.
      expect({
        fault: r.fault,
        readsDone: r.cached.ok > 0 && r.live.ok > 0,
        writesDone: r.unkeyed.ok + r.keyed.ok > 0,
      }).toStrictEqual({ fault: r.fault, readsDone: true, writesDone: true });
      expect({
        fault: r.fault,
        cached: r.cached.failed,
        live: r.live.failed,
        lost: r.keyed.lost,
        duplicated: r.keyed.duplicated,
        unknownNotInFlight: r.unknownNotInFlight,
      }).toStrictEqual({ fault: r.fault, cached: 0, live: 0, lost: 0, duplicated: 0, unknownNotInFlight: 0 });
      expect({ fault: r.fault, sseEnded: r.sse.ended, hubEnded: r.hub.ended }).toStrictEqual({
        fault: r.fault,
        sseEnded: false,
        hubEnded: false,
      });
    }
    for (const fault of ['rolling', 'standby-loss'] as const) {
      const r = row(fault);
      expect({
        fault,
        failed: r.unkeyed.failed + r.keyed.failed,
        unknown: r.unkeyed.unknown + r.keyed.unknown,
      }).toStrictEqual({ fault, failed: 0, unknown: 0 });
    }
    for (const fault of ['kill', 'stop'] as const) {
      expect(row(fault).takeoverMs, `${fault}: every link object moved to the standby`).not.toBeNull();
    }
    // The streams began on the preferred broker, so its kill moved them: they said so, and told the trade stream to
    // resync. Wherever a stream moved, it was told the same.
    expect({ sse: row('kill').sse.disconnects > 0, hub: row('kill').hub.disconnects > 0 }).toStrictEqual({
      sse: true,
      hub: true,
    });
    for (const r of report.rows) {
      if (r.sse.disconnects > 0) expect(r.sse.resyncs, `${r.fault}: SSE resync`).toBeGreaterThan(0);
      if (r.hub.disconnects > 0) expect(r.hub.resyncs, `${r.fault}: hub resync`).toBeGreaterThan(0);
    }
    // The standby's loss moved no link object.
    expect(row('standby-loss').takeoverMs).toBeNull();
  }, 240_000);
});
