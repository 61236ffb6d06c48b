import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Whether the module at `moduleUrl` (its `import.meta.url`) is the one the process was started with, as
 * `node --import tsx scripts/x.ts` or `npm run x` start it: a script's command then runs, while a test importing the
 * module gets its exports only.
 */
export function isEntryModule(moduleUrl: string): boolean {
  const started = process.argv[1];
  return started !== undefined && started !== '' && resolve(started) === fileURLToPath(moduleUrl);
}
