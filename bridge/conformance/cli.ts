/**
 * The command line of the conformance suite (`npm run conformance -- …`, scripts/conformance.ts): the arguments are
 * checked before anything connects, each refusal naming its flag; the password is read from the environment variable
 * `--password-env` names (never from the command line) and never printed. The run prints the report table and ends
 * with `conformance: P passed, F failed, S skipped`; the exit code is 0 only when nothing failed.
 */
import { parseArgs } from 'node:util';
import { FAMILIES, type Family } from '../../shared/protocol.js';
import type { ConformanceOptions } from './context.js';
import { formatReport } from './report.js';
import { runConformance } from './suite.js';

export const USAGE = `Manager-protocol conformance suite: checks a bridge (or the simulator) against docs/manager-protocol.md

  npm run conformance -- --server ws://HOST:PORT/NAME --login N --password-env VAR [--family PF4|PF5] [--writes]
                         [--snapshot-seconds S]

  --server            the trading server's manager-protocol URL (ws:// or wss://)
  --login             the manager login (an integer >= 1)
  --password-env      the environment variable holding the manager password (never the password itself)
  --family            the family the server must answer (PF4 or PF5); without it the login's answer decides
  --writes            also make changes (accounts, trades, orders, configuration rewrites, a restart) and check their
                      events: CHANGES DATA, for a sandbox server only
  --snapshot-seconds  the bound of one whole snapshot (default 120)

Prints every rule's result, then "conformance: P passed, F failed, S skipped". Exit 0 only when none failed.
Rules: docs/conformance.md.`;

/** A refusal of the command line: its message names the flag. */
export class UsageError extends Error {}

export function parseConformanceArgs(argv: readonly string[], env: NodeJS.ProcessEnv): ConformanceOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        server: { type: 'string' },
        login: { type: 'string' },
        'password-env': { type: 'string' },
        family: { type: 'string' },
        writes: { type: 'boolean' },
        'snapshot-seconds': { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    // Node's message quotes a stray argument, which may be the password itself: that one is not repeated.
    if ((error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new UsageError(
        'an argument without a flag (not shown, since it may be the password): every value follows its flag, the password goes in the environment variable --password-env names',
      );
    }
    throw new UsageError((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) throw new UsageError(USAGE);
  if (v.server === undefined) throw new UsageError("--server is required: the trading server's ws:// or wss:// URL");
  let url: URL;
  try {
    url = new URL(v.server);
  } catch {
    throw new UsageError(`--server must be a ws:// or wss:// URL, got ${JSON.stringify(v.server)}`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw new UsageError(`--server must be a ws:// or wss:// URL, got ${url.protocol}//`);
  if (v.login === undefined) throw new UsageError('--login is required: the manager login');
  if (!/^\d+$/.test(v.login) || Number(v.login) < 1 || !Number.isSafeInteger(Number(v.login))) {
    throw new UsageError(`--login must be an integer >= 1, got ${JSON.stringify(v.login)}`);
  }
  // What was given as --password-env is never echoed: someone may have passed the password itself.
  const variable = v['password-env'];
  if (variable === undefined)
    throw new UsageError('--password-env is required: the name of the environment variable holding the password');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
    throw new UsageError(
      '--password-env must name an environment variable (letters, digits and _, not starting with a digit); the value given is not shown, since it may be the password itself',
    );
  }
  const password = env[variable];
  if (password === undefined)
    throw new UsageError(
      '--password-env: the environment variable it names is not set (the name is not shown, since it may be the password itself)',
    );
  let family: Family | undefined;
  if (v.family !== undefined) {
    if (!(FAMILIES as readonly string[]).includes(v.family))
      throw new UsageError(`--family must be one of ${FAMILIES.join(', ')}, got ${JSON.stringify(v.family)}`);
    family = v.family as Family;
  }
  const options: ConformanceOptions = {
    server: v.server,
    login: Number(v.login),
    password,
    writes: v.writes === true,
    ...(family ? { family } : {}),
  };
  const seconds = v['snapshot-seconds'];
  if (seconds !== undefined) {
    const n = Number(seconds);
    if (!Number.isFinite(n) || n <= 0 || n > 3600)
      throw new UsageError(
        `--snapshot-seconds must be a number of seconds in (0, 3600], got ${JSON.stringify(seconds)}`,
      );
    options.timeouts = { snapshotMs: Math.round(n * 1000) };
  }
  return options;
}

/** Runs the command: answers the exit code; the report goes to `out`, a refusal of the arguments to `err`. */
export async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  let options: ConformanceOptions;
  try {
    options = parseConformanceArgs(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(error.message);
    return error.message === USAGE ? 0 : 2;
  }
  if (options.writes) out(`--writes: the suite changes data on ${options.server} (a sandbox server only)\n`);
  const report = await runConformance(options);
  out(formatReport(report));
  return report.failed === 0 ? 0 : 1;
}
