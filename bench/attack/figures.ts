/**
 * The arithmetic of the attack drill (bench/attackDrill.ts), kept apart from the stack it runs against so it can be
 * checked on its own: latency summaries and their ratios, times in words, answers counted by status, what a rate-limit
 * counter spent across readings (windows turn over while a flood runs), and the drill's one line per finding.
 * Percentiles are bench/measure.ts's, as in every other bench: the sample at rank floor(n·p).
 */
import { percentile, sortedOf } from '../measure.js';

export interface LatencySummary {
  n: number;
  /** Null when there are no samples. */
  p50: number | null;
  p99: number | null;
  max: number | null;
}

export function summarize(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) return { n: 0, p50: null, p99: null, max: null };
  const sorted = sortedOf(samples);
  return {
    n: samples.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1],
  };
}

/** Milliseconds with one decimal (`12.3 ms`), or `—` for no figure. */
export function ms(value: number | null): string {
  return value === null ? '—' : `${(Math.round(value * 10) / 10).toFixed(1)} ms`;
}

/** Seconds with one decimal (`4.7 s`), or `never` for no figure. */
export function seconds(milliseconds: number | null): string {
  return milliseconds === null ? 'never' : `${(milliseconds / 1000).toFixed(1)} s`;
}

/** `during / before` as `×2.41`; `—` when either is missing or `before` is 0. */
export function ratio(during: number | null, before: number | null): string {
  if (during === null || before === null || before === 0) return '—';
  return `×${(during / before).toFixed(2)}`;
}

/** Counts of each label, in order of first appearance: `401×240 429×1,200`. */
export function countLabels(labels: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  if (counts.size === 0) return 'none';
  return [...counts].map(([label, n]) => `${label}×${n.toLocaleString('en-US')}`).join(' ');
}

/** One reading of a fixed-window counter: what its window had left, and when that window ends. */
export interface CounterReading {
  left: number;
  resetAt: number;
}

/**
 * What a counter of `limit` per window spent from the first reading to the last: the drops within a window, and,
 * where a reading belongs to a later window than the one before it, everything that window has used so far (a new
 * window starts from `limit`). Spending between the last reading of a window and its end is not seen, so take
 * readings often enough for the window in question.
 */
export function counterSpent(readings: readonly CounterReading[], limit: number): number {
  let spent = 0;
  for (let i = 1; i < readings.length; i++) {
    const [before, after] = [readings[i - 1], readings[i]];
    if (after.resetAt === before.resetAt) spent += Math.max(0, before.left - after.left);
    else if (after.resetAt > before.resetAt) spent += Math.max(0, limit - after.left);
    else throw new RangeError('counterSpent: readings must be in the order they were taken');
  }
  return spent;
}

export interface Finding {
  /** The attack's number and letter in the drill, e.g. `1a`. */
  id: string;
  title: string;
  /** The measured figures, in words. */
  figures: string;
  held: boolean;
}

/** The drill's line for one finding: `1a  HELD      <title>: <figures>`. */
export function findingLine(f: Finding): string {
  return `${f.id.padEnd(3)} ${(f.held ? 'HELD' : 'NOT HELD').padEnd(8)}  ${f.title}: ${f.figures}`;
}
