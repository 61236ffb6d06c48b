/**
 * `npm test`: the format check (`npm run format:check`, about two seconds) first, then the tests (`vitest run`) with
 * the two type checks (`npm run typecheck`) and the lint gate (`npm run lint`) beside them instead of before them, at
 * a lower priority. The end-to-end files leave a core idle much of the time (they wait on processes), and the checks
 * take that time rather than adding their own minutes in front of the tests. The checks' reports are printed after
 * the tests'; any of them failing fails `npm test`. Arguments go to vitest (`npm test -- <files>`), and then the checks
 * are left to their own scripts.
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
const timed = (promise) => promise.then((result) => ({ ...result, seconds: (Date.now() - started) / 1000 }));

/** The checks beside the tests: what each is, its script, and the command it runs. */
const CHECKS = [
  { name: 'typecheck (node)', script: 'typecheck', command: bin('tsgo'), args: ['-p', '.'] },
  { name: 'typecheck (worker)', script: 'typecheck', command: bin('tsgo'), args: ['-p', 'workers'] },
  { name: 'lint', script: 'lint', command: bin('eslint'), args: ['.'], help: 'docs/testing.md, "The lint gate"' },
];

const format = files.length > 0 ? null : await run(bin('biome'), ['format', '.'], { quiet: true });
const checks =
  files.length > 0
    ? []
    : CHECKS.map((check) => ({
        check,
        done: timed(run(check.command, check.args, { quiet: true, lowerPriority: true })),
      }));
const tests = await run(bin('vitest'), ['run', ...files]);
let failed = tests.code;
if (format === null) {
  console.log('format, typecheck, lint: left to npm run format:check, typecheck and lint (the tests run were named)');
} else if (format.code === 0) {
  console.log('format: every file as npm run format writes it');
} else {
  process.stdout.write(format.output);
  console.log('format: failed (npm run format writes the tree as the gate wants it; docs/testing.md, "The lint gate")');
  failed ||= format.code;
}
for (const { check, done } of checks) {
  const result = await done;
  if (result.code === 0) {
    console.log(`${check.name}: no findings (${result.seconds.toFixed(0)} s, beside the tests)`);
  } else {
    process.stdout.write(result.output);
    console.log(
      `${check.name}: failed (npm run ${check.script} shows the findings${check.help ? `; ${check.help}` : ''})`,
    );
    failed ||= result.code;
  }
}
process.exit(failed);
