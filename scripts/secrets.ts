/**
 * `npm run secrets`: the edge's secrets, generated and handed to wrangler (docs/deploying.md).
 *
 *   npm run secrets -- --env staging|production [--only BROKER_SECRET|AUTH_SIGNING_KEY] [--broker-secret-file PATH] [--dry-run]
 *       generates a broker link secret and a token signing key and sets them on that environment's worker with
 *       `wrangler secret put` (the value goes on wrangler's standard input, never on a command line or a screen);
 *       the broker secret is also written, owner-only, to a file (default `$DATA_DIR/deploy/<env>/broker-secret`)
 *       for the broker host's BROKER_SECRET. Running it again rotates them.
 *   npm run secrets -- --local [--dev-vars PATH]
 *       writes `.dev.vars` for `wrangler dev` with the secrets `npm start` keeps in $DATA_DIR (made if missing), so
 *       `wrangler dev` and `npm start` sign the same tokens and reach the same broker.
 */
import '../shared/requireNode.js';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { newBrokerSecret, newSigningKey } from '../shared/deploymentSecrets.js';
import { ensurePrivateDir, writePrivateFile } from '../launcher/privateData.js';
import { isEntryModule } from '../shared/entryModule.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SECRETS = ['BROKER_SECRET', 'AUTH_SIGNING_KEY'] as const;
type SecretName = (typeof SECRETS)[number];
const ENVIRONMENTS = ['staging', 'production'];

const HELP = `Secrets of the edge (BROKER_SECRET, AUTH_SIGNING_KEY)

  npm run secrets -- --env staging|production [--only NAME] [--broker-secret-file PATH] [--dry-run]
      generate both (or only NAME), set them with \`wrangler secret put NAME --env ENV\`, and write the broker
      secret owner-only to PATH (default $DATA_DIR/deploy/ENV/broker-secret) for the broker's BROKER_SECRET
  npm run secrets -- --local [--dev-vars PATH]
      write .dev.vars (or PATH) for \`wrangler dev\` from the secrets npm start keeps in $DATA_DIR (default .data)
`;

class UsageError extends Error {}

/** Where a run reads its environment and writes its lines: the process's own when run as `npm run secrets`. */
export interface SecretsIo {
  env: NodeJS.ProcessEnv;
  out: (line: string) => void;
  err: (line: string) => void;
}

const PROCESS_IO: SecretsIo = {
  env: process.env,
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};

/** `wrangler secret put NAME --env ENV`, the value on standard input. */
function secretPut(name: SecretName, value: string, env: string, io: SecretsIo): Promise<void> {
  const wrangler = join(root, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  return new Promise((resolvePut, reject) => {
    const child = spawn(
      process.execPath,
      [wrangler, 'secret', 'put', name, '--env', env, '--config', join(root, 'wrangler.toml')],
      {
        cwd: root,
        env: { ...io.env, WRANGLER_SEND_METRICS: 'false' },
        stdio: ['pipe', 'inherit', 'inherit'],
      },
    );
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolvePut()
        : reject(new Error(`wrangler secret put ${name} --env ${env} failed (exit ${code}); see its output above`)),
    );
    child.stdin.end(value);
  });
}

async function deploySecrets(
  env: string,
  only: SecretName | undefined,
  brokerSecretFile: string,
  dryRun: boolean,
  io: SecretsIo,
): Promise<void> {
  const names = only ? [only] : [...SECRETS];
  const values: Record<SecretName, string> = {
    BROKER_SECRET: newBrokerSecret(),
    AUTH_SIGNING_KEY: await newSigningKey(),
  };
  for (const name of names) {
    io.out(
      `${dryRun ? 'would run' : 'running'}: wrangler secret put ${name} --env ${env}   (value generated, on standard input)`,
    );
    if (!dryRun) await secretPut(name, values[name], env, io);
  }
  if (names.includes('BROKER_SECRET')) {
    io.out(`${dryRun ? 'would write' : 'wrote'} the broker secret (owner-only) to ${brokerSecretFile}`);
    if (!dryRun) {
      ensurePrivateDir(dirname(brokerSecretFile));
      writePrivateFile(brokerSecretFile, values.BROKER_SECRET);
    }
    io.out(
      'next: give the broker the same value as BROKER_SECRET (for example a compose or orchestrator secret read from that file);',
    );
    io.out("until it has it, the edge's links are refused.");
  }
  if (names.includes('AUTH_SIGNING_KEY')) {
    io.out('tokens signed with the previous key stop verifying once the new key is live: clients fetch new ones.');
  }
}

/** A secret npm start keeps in the data folder; made (and kept) the same way if it is not there yet. */
async function dataSecret(dataDir: string, file: string, make: () => Promise<string> | string): Promise<string> {
  const path = join(dataDir, file);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const value = await make();
  ensurePrivateDir(dataDir);
  writePrivateFile(path, value);
  return value;
}

/** A .dev.vars line: single-quoted, which dotenv takes literally (a JWK has no single quote, base64url neither). */
const devVar = (name: string, value: string) => {
  if (value.includes("'") || value.includes('\n')) throw new Error(`${name} cannot be written to .dev.vars as it is`);
  return `${name}='${value}'`;
};

async function localDevVars(devVarsFile: string, io: SecretsIo): Promise<void> {
  const dataDir = resolve(io.env.DATA_DIR || '.data');
  const brokerSecret = await dataSecret(dataDir, 'broker-secret', newBrokerSecret);
  const signingKey = await dataSecret(dataDir, 'signing-key.json', () => newSigningKey());
  writePrivateFile(
    devVarsFile,
    [
      '# Secrets of `wrangler dev`, written by `npm run secrets -- --local` from the ones npm start keeps in DATA_DIR.',
      devVar('BROKER_SECRET', brokerSecret),
      devVar('AUTH_SIGNING_KEY', signingKey),
      '',
    ].join('\n'),
  );
  io.out(`wrote ${devVarsFile} (owner-only) with BROKER_SECRET and AUTH_SIGNING_KEY from ${dataDir}`);
}

/** One run of `npm run secrets` with these arguments: its exit code (2 for bad usage). */
export async function runSecrets(argv: string[], io: SecretsIo = PROCESS_IO): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        env: { type: 'string' },
        only: { type: 'string' },
        'broker-secret-file': { type: 'string' },
        'dry-run': { type: 'boolean' },
        local: { type: 'boolean' },
        'dev-vars': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
    if (values.help) {
      io.out(HELP);
      return 0;
    }
    if (values.local) {
      if (values.env !== undefined) throw new UsageError('--local and --env exclude each other');
      await localDevVars(resolve(values['dev-vars'] ?? join(root, '.dev.vars')), io);
      return 0;
    }
    const env = values.env;
    if (env === undefined) throw new UsageError('--env staging|production (or --local) is required');
    if (!ENVIRONMENTS.includes(env))
      throw new UsageError(`--env must be one of ${ENVIRONMENTS.join(', ')}, got ${JSON.stringify(env)}`);
    const only = values.only;
    if (only !== undefined && !(SECRETS as readonly string[]).includes(only))
      throw new UsageError(`--only must be one of ${SECRETS.join(', ')}`);
    const dataDir = resolve(io.env.DATA_DIR || '.data');
    const file = resolve(values['broker-secret-file'] ?? join(dataDir, 'deploy', env, 'broker-secret'));
    await deploySecrets(env, only as SecretName | undefined, file, values['dry-run'] === true, io);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`error: ${(error as Error).message}`);
      io.err('run `npm run secrets -- --help` for usage');
      return 2;
    }
    io.err(`error: ${(error as Error).message}`);
    return 1;
  }
}

if (isEntryModule(import.meta.url)) {
  process.exitCode = await runSecrets(process.argv.slice(2));
}
