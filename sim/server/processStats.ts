/**
 * Process-wide figures for the control channel's state answer: memory and event-loop delay. The delay histogram
 * shows whether the process keeps up with its tick rate (a loop that falls behind shows growing delays).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
let histogram: IntervalHistogram | null = null;

/** The histogram records whole timer intervals; the delay is what exceeds the sampling interval. */
const delayMs = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);

export function processStats(): Record<string, number> {
  if (!histogram) {
    histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
  }
  const mem = process.memoryUsage();
  const stats = {
    rssMB: Math.round(mem.rss / 1048576),
    heapUsedMB: Math.round(mem.heapUsed / 1048576),
    eventLoopDelayP50Ms: delayMs(histogram.percentile(50)),
    eventLoopDelayP99Ms: delayMs(histogram.percentile(99)),
    eventLoopDelayMaxMs: delayMs(histogram.max),
  };
  histogram.reset();
  return stats;
}
