/**
 * The measuring every benchmark, drill and the soak share, so that a figure means the same in each of them:
 *   - `percentile(sorted, p)`: the sample at rank floor(n·p) of an ascending list (p from 0 to 1; the last sample
 *     for p = 1), NaN for no samples;
 *   - `median(values)`: the middle sample (the upper one of an even count), on an unsorted list;
 *   - `sortedOf(values)`: the ascending copy `percentile` takes;
 *   - `cpuPressureUs()`: microseconds during which some runnable task waited for a CPU, machine-wide (Linux PSI,
 *     /proc/pressure/cpu), NaN where the kernel does not report it; two readings' difference over the time between
 *     them is the share of that time the machine was short of CPU.
 * Nothing here reads a clock or keeps state.
 */
import { readFileSync } from 'node:fs';

export function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

export function sortedOf(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort();
}

export function cpuPressureUs(): number {
  try {
    return Number(/some .*total=(\d+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}
