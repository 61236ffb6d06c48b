/**
 * Processes the benches and drills watch, read from Linux /proc: which children of this process run a program (the
 * edge's workerd is one Miniflare starts), and what CPU time and memory they used. `parseStat` and `parseVmRssKb`
 * read the text of /proc/<pid>/stat and /proc/<pid>/status; the rest reads the files. Where there is no /proc,
 * there are no processes.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: /proc CPU times are counted in ticks of 1/100 s. */
export const TICKS_PER_SECOND = 100;

export interface ProcessStat {
  /** The program's name (`comm`, at most 15 characters). */
  name: string;
  ppid: number;
  /** User and system CPU time, in ticks. */
  cpuTicks: number;
}

/** One /proc/<pid>/stat line. The name stands in parentheses and may hold spaces and parentheses itself. */
export function parseStat(stat: string): ProcessStat {
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return {
    name: stat.slice(stat.indexOf('(') + 1, close),
    ppid: Number(fields[1]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
  };
}

/** Resident memory in kB from the text of /proc/<pid>/status; null when it has none (a zombie, a kernel thread). */
export function parseVmRssKb(status: string): number | null {
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  return kb ? Number(kb[1]) : null;
}

/** Every process's stat now, by pid; those that end while it reads are left out. */
export function processTable(): Map<number, ProcessStat> {
  const table = new Map<number, ProcessStat>();
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return table;
  }
  for (const entry of entries) {
    try {
      table.set(Number(entry), parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8')));
    } catch {
      /* gone */
    }
  }
  return table;
}

/** The direct children of `parent` (this process by default) named `name`. */
export function childProcessesNamed(name: string, parent = process.pid): number[] {
  return [...processTable()].filter(([, p]) => p.name === name && p.ppid === parent).map(([pid]) => pid);
}

/** All descendants of `ancestor` (this process by default) named `name`, at any depth. */
export function descendantProcessesNamed(name: string, ancestor = process.pid): number[] {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [pid, p] of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const found: number[] = [];
  const queue = [ancestor];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (table.get(child)?.name === name) found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** CPU seconds and resident memory (MB) of `pids` together; a process that ended counts nothing. */
export function usageOf(pids: readonly number[]): { cpuSeconds: number; rssMb: number } {
  let cpu = 0;
  let rss = 0;
  for (const pid of pids) {
    try {
      cpu += parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).cpuTicks / TICKS_PER_SECOND;
      rss += (parseVmRssKb(readFileSync(`/proc/${pid}/status`, 'utf8')) ?? 0) / 1024;
    } catch {
      /* gone */
    }
  }
  return { cpuSeconds: cpu, rssMb: rss };
}
