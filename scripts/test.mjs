/**
 * `npm test` after the type checks: the format check (`npm run format:check`, about two seconds) first, then the lint
 * gate (`npm run lint`) beside the tests (`vitest run`) instead of before them. The end-to-end files leave a core idle
 * much of the time (they wait on processes), and the lint's one thread takes that time at a lower priority rather
 * than adding minutes in front of the tests. The lint's and the format check's reports are printed after the tests';
 * any of the three failing fails `npm test`. Arguments go to vitest (`npm test -- <files>`), and then the lint and the
 * format check are left to their own scripts.
 */
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** Runs a command; resolves with its exit code and, when `quiet`, what it printed. */
function run(command, args, { quiet = false, lowerPriority = false } = {}) {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { cwd: root, stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (lowerPriority) {
      try {
        setPriority(child.pid, 10);
      } catch {
        /* left at the normal priority */
      }
    }
    let output = '';
    child.stdout?.on('data', (d) => {
      output += d;
    });
    child.stderr?.on('data', (d) => {
      output += d;
    });
    child.once('error', (error) => resolveRun({ code: 1, output: `${command}: ${error.message}\n` }));
    child.once('close', (code, signal) => resolveRun({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const started = Date.now();
const files = process.argv.slice(2);
const format = files.length > 0 ? null : await run(bin('biome'), ['format', '.'], { quiet: true });
const lint =
  files.length > 0
    ? Promise.resolve({ code: 0, output: '', seconds: null })
    : run(bin('eslint'), ['.'], { quiet: true, lowerPriority: true }).then((result) => ({
        ...result,
        seconds: (Date.now() - started) / 1000,
      }));
const tests = await run(bin('vitest'), ['run', ...files]);
const linted = await lint;
if (linted.seconds === null) {
  console.log('lint: left to npm run lint (the tests run were named)');
} else if (linted.code === 0) {
  console.log(`lint: no findings (${linted.seconds.toFixed(0)} s, beside the tests)`);
} else {
  process.stdout.write(linted.output);
  console.log(`lint: failed (npm run lint shows the findings; docs/testing.md, "The lint gate")`);
}
if (format === null) {
  console.log('format: left to npm run format:check (the tests run were named)');
} else if (format.code === 0) {
  console.log('format: every file as npm run format writes it');
} else {
  process.stdout.write(format.output);
  console.log('format: failed (npm run format writes the tree as the gate wants it; docs/testing.md, "The lint gate")');
}
process.exit(tests.code !== 0 ? tests.code : linted.code !== 0 ? linted.code : (format?.code ?? 0));
