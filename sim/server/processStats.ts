/**
 * Process-wide figures for the control channel's state answer: memory and event-loop delay. The delay histogram
 * shows whether the process keeps up with its tick rate (a loop that falls behind shows growing delays).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

let histogram: IntervalHistogram | null = null;

export function processStats(): Record<string, number> {
  if (!histogram) {
    histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
  }
  const mem = process.memoryUsage();
  const stats = {
    rssMB: Math.round(mem.rss / 1048576),
    heapUsedMB: Math.round(mem.heapUsed / 1048576),
    eventLoopDelayP50Ms: Math.round(histogram.percentile(50) / 1e4) / 100,
    eventLoopDelayP99Ms: Math.round(histogram.percentile(99) / 1e4) / 100,
    eventLoopDelayMaxMs: Math.round(histogram.max / 1e4) / 100,
  };
  histogram.reset();
  return stats;
}
