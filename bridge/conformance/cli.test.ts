/**
 * The command line: each bad argument refused with a message naming its flag (the password only ever read from the
 * variable `--password-env` names), and the command against the simulator: the table, the summary line last, exit 0
 * when nothing failed and 1 when something did, 2 for a bad argument, the password nowhere in what it prints. The
 * passing run calls the command's `main` in this process, as scripts/conformance.ts does; the failing run and the
 * bad argument are the real command, `npm run conformance`, in a child process, which shows the script passing
 * `main`'s code on as the exit code and its texts on to stdout and stderr.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type RunningSim } from '../../sim/index.js';
import { main, parseConformanceArgs, UsageError } from './cli.js';
import { rulesFor } from './suite.js';

const PASSWORD = 'cli-test-password';
const ENV = { CONFORMANCE_PASSWORD: PASSWORD };
const BASE = ['--server', 'ws://127.0.0.1:1/demo', '--login', '1000', '--password-env', 'CONFORMANCE_PASSWORD'];

describe('parseConformanceArgs', () => {
  it('reads the options, the password from the named variable', () => {
    expect(parseConformanceArgs([...BASE, '--family', 'PF5', '--writes', '--snapshot-seconds', '30'], ENV)).toEqual({
      server: 'ws://127.0.0.1:1/demo',
      login: 1000,
      password: PASSWORD,
      family: 'PF5',
      writes: true,
      timeouts: { snapshotMs: 30_000 },
    });
    expect(parseConformanceArgs(BASE, ENV)).toEqual({
      server: 'ws://127.0.0.1:1/demo',
      login: 1000,
      password: PASSWORD,
      writes: false,
    });
  });

  it.each([
    [['--login', '1', '--password-env', 'CONFORMANCE_PASSWORD'], /^--server is required/],
    [
      ['--server', 'http://host/x', '--login', '1', '--password-env', 'CONFORMANCE_PASSWORD'],
      /^--server must be a ws:\/\/ or wss:\/\/ URL, got http:/,
    ],
    [
      ['--server', 'not a url', '--login', '1', '--password-env', 'CONFORMANCE_PASSWORD'],
      /^--server must be a ws:\/\/ or wss:\/\/ URL/,
    ],
    [['--server', 'ws://h/x', '--password-env', 'CONFORMANCE_PASSWORD'], /^--login is required/],
    [
      ['--server', 'ws://h/x', '--login', '0', '--password-env', 'CONFORMANCE_PASSWORD'],
      /^--login must be an integer >= 1, got "0"/,
    ],
    [
      ['--server', 'ws://h/x', '--login', '1.5', '--password-env', 'CONFORMANCE_PASSWORD'],
      /^--login must be an integer >= 1/,
    ],
    [['--server', 'ws://h/x', '--login', '1'], /^--password-env is required/],
    [
      ['--server', 'ws://h/x', '--login', '1', '--password-env', 'NOT_SET_ANYWHERE'],
      /^--password-env: the environment variable it names is not set \(the name is not shown/,
    ],
    [
      ['--server', 'ws://h/x', '--login', '1', '--password-env', 'a-b'],
      /^--password-env must name an environment variable/,
    ],
    [[...BASE, '--family', 'PF6'], /^--family must be one of PF4, PF5, got "PF6"/],
    [[...BASE, '--snapshot-seconds', '0'], /^--snapshot-seconds must be a number of seconds/],
    [[...BASE, '--password', 'x'], /'--password'/],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => parseConformanceArgs(argv, ENV)).toThrow(UsageError);
    expect(() => parseConformanceArgs(argv, ENV)).toThrow(message);
  });

  // The password itself given where the variable's name goes (or as a stray argument) is refused without being shown.
  it.each([
    [
      'a password that is no variable name',
      ['--password-env', 'pa"ss\\word 1'],
      'pa"ss\\word 1',
      /^--password-env must name an environment variable/,
    ],
    [
      'a password that could be a variable name',
      ['--password-env', 'Hunter2Secret'],
      'Hunter2Secret',
      /^--password-env: the environment variable it names is not set/,
    ],
    [
      'a password as a stray argument',
      ['--password-env', 'CONFORMANCE_PASSWORD', 'Hunter2Secret'],
      'Hunter2Secret',
      /^an argument without a flag/,
    ],
  ])('refuses %s without echoing it', (_, tail, secret, message) => {
    const argv = ['--server', 'ws://h/x', '--login', '1', ...tail];
    let error: unknown;
    try {
      parseConformanceArgs(argv, ENV);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain(secret);
    expect((error as Error).message).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect((error as Error).message).not.toContain('Hunter2');
  });
});

let sim: RunningSim;

beforeAll(async () => {
  sim = await startSim({
    config: { servers: [{ name: 'cli-pf4', family: 'PF4', managers: [{ login: 1000, password: PASSWORD }] }] },
  });
});

afterAll(async () => {
  await sim.close();
});

/** The command run in this process, its texts written as scripts/conformance.ts writes them. */
async function inProcess(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(
    args,
    { ...process.env, ...ENV },
    (text) => {
      stdout += `${text}\n`;
    },
    (text) => {
      stderr += `${text}\n`;
    },
  );
  return { code, stdout, stderr };
}

function command(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'conformance', '--', ...args], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, ...ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run conformance', () => {
  // The refused command connects to nothing, so it runs beside the first test's runs.
  let refused: ReturnType<typeof command>;
  beforeAll(() => {
    refused = command([
      '--server',
      `ws://127.0.0.1:${sim.port}/cli-pf4`,
      '--login',
      'x',
      '--password-env',
      'CONFORMANCE_PASSWORD',
    ]);
    // Its failure to start is the second test's to report.
    refused.catch(() => undefined);
  });

  afterAll(async () => {
    await refused.catch(() => undefined);
  });

  it('prints every rule and the summary line, exits 0 when none failed, 1 when one did, never the password', async () => {
    const args = [
      '--server',
      `ws://127.0.0.1:${sim.port}/cli-pf4`,
      '--login',
      '1000',
      '--password-env',
      'CONFORMANCE_PASSWORD',
    ];
    const good = await inProcess([...args, '--family', 'PF4']);
    const lines = good.stdout.trimEnd().split('\n');
    const rules = rulesFor('PF4');
    const skippedWithoutWrites = rules.filter(
      (r) => r.id.startsWith('writes.') || r.id === 'capabilities.write-probes',
    ).length;
    expect(lines.at(-1)).toBe(
      `conformance: ${rules.length - skippedWithoutWrites} passed, 0 failed, ${skippedWithoutWrites} skipped`,
    );
    expect(lines[0]).toMatch(/^rule +result +checks +detail$/);
    for (const rule of rules) expect(lines.some((line) => line.startsWith(`${rule.id} `))).toBe(true);
    expect(good.code).toBe(0);

    const wrongFamily = await command([...args, '--family', 'PF5']);
    expect(wrongFamily.stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^conformance: \d+ passed, [1-9]\d* failed, \d+ skipped$/,
    );
    expect(wrongFamily.stdout).toMatch(/^login\.family +failed +.+expected family PF5, got "PF4"$/m);
    expect(wrongFamily.code).toBe(1);

    for (const output of [good.stdout, good.stderr, wrongFamily.stdout, wrongFamily.stderr])
      expect(output).not.toContain(PASSWORD);
  });

  it('exits 2 with the flag named for a bad argument, before connecting', async () => {
    const result = await refused;
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr.trim()).toBe('--login must be an integer >= 1, got "x"');
  });
});
