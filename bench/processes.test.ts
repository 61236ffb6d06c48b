/**
 * Reading /proc (bench/processes.ts): the stat and status texts, and the children and descendants of this process
 * found by name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { childProcessesNamed, descendantProcessesNamed, parseStat, parseVmRssKb, usageOf } from './processes.js';
import { until } from '../test/support/until.js';

describe('the texts of /proc', () => {
  it('reads name, parent and CPU ticks from a stat line, whatever the name holds', () => {
    const fields = (ppid: number, utime: number, stime: number) =>
      `S ${ppid} 4242 4242 0 -1 4194560 1200 0 0 0 ${utime} ${stime} 0 0 20 0 9 0 123456 1000000 2000`;
    expect(parseStat(`4243 (workerd) ${fields(4200, 150, 35)}`)).toStrictEqual({
      name: 'workerd',
      ppid: 4200,
      cpuTicks: 185,
    });
    expect(parseStat(`17 (a (b) c) ${fields(1, 7, 0)}`)).toStrictEqual({ name: 'a (b) c', ppid: 1, cpuTicks: 7 });
  });

  it('reads VmRSS in kB, and nothing where the status has none', () => {
    expect(parseVmRssKb('Name:\tworkerd\nVmPeak:\t  900000 kB\nVmRSS:\t  182344 kB\nRssAnon:\t 1000 kB\n')).toBe(
      182_344,
    );
    expect(parseVmRssKb('Name:\tkthreadd\nState:\tS (sleeping)\n')).toBeNull();
  });
});

describe('processes of this one', () => {
  const started: ChildProcess[] = [];
  afterEach(() => {
    for (const child of started.splice(0)) child.kill('SIGKILL');
  });

  it('finds a child by name, and a grandchild only among the descendants', async () => {
    const child = spawn('sleep', ['30']);
    const shell = spawn('sh', ['-c', 'sleep 31; exit 0']);
    started.push(child, shell);
    // A child takes its program's name once it has exec'd it.
    const grandchild = await until(() => {
      const sleeping = descendantProcessesNamed('sleep');
      return sleeping.includes(child.pid!) && sleeping.find((pid) => pid !== child.pid);
    }, 'both sleeps');
    expect(childProcessesNamed('sleep')).toStrictEqual([child.pid]);
    expect(descendantProcessesNamed('sleep').sort()).toStrictEqual([child.pid!, grandchild].sort());
    expect(childProcessesNamed('sleep', shell.pid)).toStrictEqual([grandchild]);
  });

  it('sums CPU time and resident memory, counting an ended process as nothing', () => {
    const own = usageOf([process.pid]);
    expect(own.rssMb).toBeGreaterThan(10);
    expect(own.cpuSeconds).toBeGreaterThan(0);
    expect(usageOf([])).toStrictEqual({ cpuSeconds: 0, rssMb: 0 });
    expect(usageOf([2 ** 22 + 1])).toStrictEqual({ cpuSeconds: 0, rssMb: 0 });
  });
});
