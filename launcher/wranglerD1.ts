/**
 * The registry's D1 database reached through wrangler (`wrangler d1 execute DB --json --command …`): `--remote` for
 * the deployed database of an environment (`--env staging|production`, with wrangler's own login or
 * CLOUDFLARE_API_TOKEN), `--local --persist-to DIR` for a local one. It has the shape of the D1 binding the registry
 * store expects, so the registry CLI runs the same store code against the deployed database as against its own.
 *
 * `wrangler d1 execute` takes SQL text, not bound parameters, so each parameter is written into the statement as a
 * SQLite literal: NULL, a finite number, or a string in single quotes with every quote doubled (the only escape a
 * SQLite string literal has). A batch is sent as one command, its statements in order.
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export type WranglerD1Target = { remote: true; env?: string } | { remote: false; persistTo: string; env?: string };

interface Result<T> {
  results: T[];
  success: boolean;
  meta?: Record<string, unknown>;
}

/** A parameter as a SQLite literal. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot write ${value} into SQL`);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new Error('cannot write a NUL character into SQL');
    return `'${value.replace(/'/g, "''")}'`;
  }
  throw new Error(`cannot write a ${typeof value} into SQL`);
}

/** `sql` with each `?` outside string literals replaced by the next value. */
export function inlineParameters(sql: string, values: unknown[]): string {
  let out = '';
  let next = 0;
  let quoted = false;
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    if (ch === '?' && !quoted) {
      if (next >= values.length) throw new Error(`too few parameters for: ${sql}`);
      out += sqlLiteral(values[next++]);
    } else {
      out += ch;
    }
  }
  if (next !== values.length) throw new Error(`${values.length} parameters for ${next} placeholders in: ${sql}`);
  return out;
}

/** The wrangler arguments that run `sql` on the target. */
export function executeArgs(target: WranglerD1Target, sql: string): string[] {
  return [
    'd1',
    'execute',
    'DB',
    '--json',
    '--command',
    sql,
    ...(target.remote ? ['--remote'] : ['--local', '--persist-to', target.persistTo]),
    ...(target.env ? ['--env', target.env] : []),
    '--config',
    join(root, 'wrangler.toml'),
  ];
}

function execute(target: WranglerD1Target, sql: string): Promise<Result<Record<string, unknown>>[]> {
  const wrangler = join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [wrangler, ...executeArgs(target, sql)], {
      cwd: root,
      env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
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
    child.once('close', (code) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(stdout);
      } catch {
        parsed = undefined;
      }
      if (code === 0 && Array.isArray(parsed)) return resolveRun(parsed as Result<Record<string, unknown>>[]);
      const reported = (parsed as { error?: { text?: string } } | undefined)?.error?.text;
      const where = target.remote
        ? `the deployed registry${target.env ? ` (--env ${target.env})` : ''}`
        : 'the local registry';
      reject(
        new Error(
          `wrangler d1 execute on ${where} failed: ${reported ?? (stderr.trim() || stdout.trim()).split('\n').slice(-5).join(' ')}`,
        ),
      );
    });
  });
}

class Statement {
  constructor(
    private readonly target: WranglerD1Target,
    readonly sql: string,
    readonly values: unknown[] = [],
  ) {}

  bind(...values: unknown[]): Statement {
    return new Statement(this.target, this.sql, values);
  }

  get text(): string {
    return inlineParameters(this.sql, this.values);
  }

  async all<T = Record<string, unknown>>(): Promise<{ results: T[] }> {
    const [result] = await execute(this.target, this.text);
    return { results: (result?.results ?? []) as T[] };
  }

  async first<T = Record<string, unknown>>(): Promise<T | null> {
    return (await this.all<T>()).results[0] ?? null;
  }

  async run(): Promise<unknown> {
    return (await execute(this.target, this.text))[0];
  }
}

/** The registry database of `target`, through wrangler. */
export function wranglerD1(target: WranglerD1Target) {
  return {
    prepare: (sql: string) => new Statement(target, sql),
    async batch(statements: Statement[]): Promise<unknown[]> {
      if (statements.length === 0) return [];
      return execute(target, statements.map((s) => s.text.replace(/;\s*$/, '')).join(';\n'));
    },
  };
}
