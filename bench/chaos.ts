/**
 * `npm run chaos`: the chaos soak (bench/chaosDrill.ts) at length on a stack of two brokers: a bank of keyed balance
 * operations, reads, unkeyed writes and two stream clients while faults are injected at random; then every account's
 * balance and history, the reads and the streams are checked (bench/chaosCheck.ts). Prints the faults injected per
 * kind, the counts and the verdict; exits 1 on any violation.
 *
 * CHAOS_SECONDS (1200), CHAOS_SEED (1), CHAOS_FAULTS (all, a comma list), CHAOS_ACCOUNTS (6), CHAOS_WRITERS (4),
 * CHAOS_LOG (a file that receives every line of the stack's processes, with the time).
 */
import { appendFileSync } from 'node:fs';
import { CHAOS_FAULTS, formatChaosReport, runChaos, type ChaosFault } from './chaosDrill.js';

const faults = (process.env.CHAOS_FAULTS?.split(',')
  .map((f) => f.trim())
  .filter(Boolean) ?? CHAOS_FAULTS) as ChaosFault[];
const unknown = faults.filter((f) => !CHAOS_FAULTS.includes(f));
if (unknown.length) {
  console.error(`chaos refused: unknown fault ${unknown.join(', ')} (known: ${CHAOS_FAULTS.join(', ')})`);
  process.exit(2);
}
const number = (name: string, fallback: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`chaos refused: ${name} must be a whole number of at least 1 (got ${raw})`);
    process.exit(2);
  }
  return n;
};
const report = await runChaos({
  seconds: number('CHAOS_SECONDS', 1200),
  seed: number('CHAOS_SEED', 1),
  accounts: number('CHAOS_ACCOUNTS', 6),
  writers: number('CHAOS_WRITERS', 4),
  faults,
  log: (line) => console.log(line),
  ...(process.env.CHAOS_LOG
    ? { stackLog: (line: string) => appendFileSync(process.env.CHAOS_LOG!, `${new Date().toISOString()} ${line}\n`) }
    : {}),
});
console.log(formatChaosReport(report));
console.log(JSON.stringify(report));
process.exit(report.verdict.violations.length === 0 ? 0 : 1);
