/**
 * A CPU profile (`.cpuprofile`, as V8's profiler and `node --cpu-prof` write it) summed up: the share of the sampled
 * time spent in each function itself (self time), the largest first, and the share the process was idle. Used by
 * `npm run bench:broker` with BENCH_PROFILE to say where the broker's time went in each measured phase.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  share: number;
  name: string;
}

const short = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(broker|shared|sim)\//, '$1/');

/** The `top` functions by self time, each as a share of all sampled time; idle and GC appear under their own names. */
export function summarize(profile: CpuProfile, top: number): { lines: ProfileLine[]; busyShare: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    total += dt;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') idle += dt;
    const name = url
      ? `${functionName || '(anonymous)'} ${short(url)}:${lineNumber + 1}`
      : functionName || '(anonymous)';
    self.set(name, (self.get(name) ?? 0) + dt);
  }
  const lines = [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, t]) => ({ name, share: total ? t / total : 0 }));
  return { lines, busyShare: total ? 1 - idle / total : 0 };
}
