/**
 * `npm run drill`: the fault drill at length (bench/faultDrill.ts) on a stack of its own. Writes under
 * Idempotency-Keys go on while the trading server drops its connections, answers late, refuses logins and restarts,
 * and the broker is killed with SIGKILL and started again; then lost and duplicated writes are counted against the
 * server's accounts (goal: 0 and 0) and each fault's time to recovery is printed.
 *
 * DRILL_WRITERS (8), DRILL_FAULT_SECONDS (3), DRILL_FAULTS (all: drop,delay,refuse-login,sim-restart,broker-kill).
 */
import { ALL_FAULTS, formatDrillReport, runFaultDrill, type FaultName } from './faultDrill.js';

const faults = (process.env.DRILL_FAULTS?.split(',')
  .map((f) => f.trim())
  .filter(Boolean) ?? ALL_FAULTS) as FaultName[];
const unknown = faults.filter((f) => !ALL_FAULTS.includes(f));
if (unknown.length) {
  console.error(`drill refused: unknown fault ${unknown.join(', ')} (known: ${ALL_FAULTS.join(', ')})`);
  process.exit(2);
}
const report = await runFaultDrill({
  writers: Number(process.env.DRILL_WRITERS) || 8,
  faultMs: (Number(process.env.DRILL_FAULT_SECONDS) || 3) * 1000,
  faults,
  log: (line) => console.log(line),
});
console.log(formatDrillReport(report));
console.log(JSON.stringify(report));
process.exit(report.lost === 0 && report.duplicated === 0 ? 0 : 1);
