/**
 * What one start of the local edge costs, with the objects worker given the app's whole bundle (both workers the same
 * script, as before workers/objects.ts) and given the objects' classes alone (the launcher's default), started
 * alternately in one run: wall time from start to a first answer and the edge's disposal, this process's CPU (Miniflare
 * writing workerd's configuration, its proxies) and workerd's (compiling and running both workers). The tests start an
 * edge about 200 times, so this is a share of `npm test`'s CPU.
 * `npx tsx bench/edgeStarts.ts [starts of each]` (default 8)
 */
import { readFileSync } from 'node:fs';
import { buildWorker, miniflareOptions, OBJECTS_ENTRY, startMiniflare } from '../launcher/edge.js';

const starts = Number(process.argv[2] ?? 8);

/** CPU milliseconds of this process's children that have exited and been waited for (/proc/self/stat cutime, cstime). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const full = await buildWorker();
const lean = await buildWorker(OBJECTS_ENTRY);
const totals = {
  'whole bundle in both workers': { script: full, wall: 0, node: 0, workerd: 0 },
  'objects worker: the classes alone': { script: lean, wall: 0, node: 0, workerd: 0 },
};
for (let i = 0; i < starts; i++) {
  for (const total of Object.values(totals)) {
    const cpu = process.cpuUsage();
    const children = childrenCpuMs();
    const started = performance.now();
    const { miniflare } = await startMiniflare(miniflareOptions(full, {}, undefined, total.script));
    await (await fetch(new URL('/livez', (await miniflare.ready).href))).arrayBuffer();
    await miniflare.dispose();
    // workerd is waited for once it exits: its CPU is counted with the children's.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const used = process.cpuUsage(cpu);
    total.wall += performance.now() - started - 200;
    total.node += (used.user + used.system) / 1000;
    total.workerd += childrenCpuMs() - children;
  }
}
const [baseline] = Object.values(totals);
console.log(
  `edge starts: ${starts} of each, alternately; the objects worker's script ${full.length} / ${lean.length} bytes`,
);
for (const [name, t] of Object.entries(totals)) {
  const cpu = (t.node + t.workerd) / starts;
  const ratio = cpu / ((baseline.node + baseline.workerd) / starts);
  console.log(
    `  ${name.padEnd(36)} wall ${(t.wall / starts).toFixed(0)} ms, CPU ${cpu.toFixed(0)} ms (this process ${(t.node / starts).toFixed(0)}, workerd ${(t.workerd / starts).toFixed(0)}), ${ratio.toFixed(2)}x the whole bundle's`,
  );
}
