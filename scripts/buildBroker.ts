/**
 * `npm run build:broker`: the broker, the simulator and the container health check as plain JavaScript for Node
 * (`dist/broker/main.js`, `dist/sim/main.js`, `dist/broker/healthcheck.js`), what broker/Dockerfile runs. Packages
 * stay imports of node_modules (the image installs the production dependencies); the project's own TypeScript,
 * shared/ included, is bundled. `--outdir DIR` writes elsewhere (tests).
 */
import '../shared/requireNode.js';
import { build } from 'esbuild';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const ENTRIES = ['broker/main.ts', 'sim/main.ts', 'broker/healthcheck.ts'];

const { values } = parseArgs({ options: { outdir: { type: 'string' } } });
const outdir = resolve(values.outdir ?? join(root, 'dist'));
await build({
  entryPoints: ENTRIES.map((e) => join(root, e)),
  outbase: root,
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
console.log(`built ${ENTRIES.map((e) => e.replace(/\.ts$/, '.js')).join(', ')} in ${outdir}`);
