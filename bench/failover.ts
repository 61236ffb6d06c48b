/**
 * `npm run drill:failover`: the failover drill (bench/failoverDrill.ts) at length on a stack of two brokers: `kill -9`
 * of the serving broker, `SIGSTOP` of it for FAILOVER_STOP_SECONDS (10) then `SIGCONT`, a rolling `SIGTERM` restart of
 * both, and the standby's loss, under a steady mixed load; prints a table per fault and exits 1 when a fault broke the
 * bar (a failed read, a keyed write lost or duplicated, an unknown outcome of a write not in flight on the lost broker,
 * a failed call in a rolling restart or a standby's loss, a takeover over 2 s, a stream ended).
 *
 * FAILOVER_FAULTS (all: kill,stop,rolling,standby-loss), FAILOVER_STOP_SECONDS (10), FAILOVER_HOLD_DOWN_SECONDS (3),
 * FAILOVER_LOG (a file that receives every line of the stack's processes, with the time).
 */
import { appendFileSync } from 'node:fs';
import {
  FAILOVER_FAULTS,
  failoverVerdict,
  formatFailoverReport,
  runFailoverDrill,
  type FailoverFault,
} from './failoverDrill.js';

const faults = (process.env.FAILOVER_FAULTS?.split(',')
  .map((f) => f.trim())
  .filter(Boolean) ?? FAILOVER_FAULTS) as FailoverFault[];
const unknown = faults.filter((f) => !FAILOVER_FAULTS.includes(f));
if (unknown.length) {
  console.error(`drill refused: unknown fault ${unknown.join(', ')} (known: ${FAILOVER_FAULTS.join(', ')})`);
  process.exit(2);
}
const report = await runFailoverDrill({
  faults,
  stopMs: (Number(process.env.FAILOVER_STOP_SECONDS) || 10) * 1000,
  holdDownSeconds: Number(process.env.FAILOVER_HOLD_DOWN_SECONDS) || 3,
  log: (line) => console.log(line),
  ...(process.env.FAILOVER_LOG
    ? { stackLog: (line: string) => appendFileSync(process.env.FAILOVER_LOG!, `${new Date().toISOString()} ${line}\n`) }
    : {}),
});
console.log(formatFailoverReport(report));
console.log(JSON.stringify(report));
const problems = failoverVerdict(report);
for (const p of problems) console.log(`NOT HELD: ${p}`);
process.exit(problems.length === 0 ? 0 : 1);
