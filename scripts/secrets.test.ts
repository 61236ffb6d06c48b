/**
 * `npm run secrets`: the generated secrets have the shapes the edge and the broker accept; a deploy run names what
 * it sets and where the broker's copy goes without ever printing a value; `--local` writes `.dev.vars` for
 * `wrangler dev` with the very secrets npm start keeps; bad usage is refused with exit code 2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { newBrokerSecret, newSigningKey } from '../shared/deploymentSecrets.js';
import { edgeEnvironment, readEnvironment } from '../shared/environment.js';
import { runSecrets } from './secrets.js';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'secrets-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function secrets(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/secrets.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: join(dir, 'data'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

/** The same run in this process (runSecrets, what the command calls), with the command's environment and output. */
async function secretsHere(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runSecrets(args, {
    env: { DATA_DIR: join(dir, 'data'), ...env },
    out: (line) => {
      out += `${line}\n`;
    },
    err: (line) => {
      err += `${line}\n`;
    },
  });
  return { code, out, err };
}

describe('generated secrets', () => {
  it('are a 256-bit base64url link secret and a private ES256 JWK the edge accepts', async () => {
    const secret = newBrokerSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newBrokerSecret()).not.toBe(secret);
    const key = await newSigningKey(new Date('2026-03-04T00:00:00Z'));
    const jwk = JSON.parse(key);
    expect(jwk).toMatchObject({
      kty: 'EC',
      crv: 'P-256',
      alg: 'ES256',
      use: 'sig',
      kid: expect.stringMatching(/^edge-2026-03-04-/),
    });
    expect(readEnvironment(edgeEnvironment, { AUTH_SIGNING_KEY: key, BROKER_SECRET: secret }).AUTH_SIGNING_KEY).toBe(
      key,
    );
    await expect(importJWK(jwk, 'ES256')).resolves.toBeDefined();
  });
});

describe('npm run secrets', () => {
  // The command itself, as a process: its output and exit code. The other runs call what it calls, in this process.
  it('plans a deploy without printing a value or touching a file (--dry-run)', async () => {
    const { code, out } = await secrets(['--env', 'staging', '--dry-run', '--broker-secret-file', join(dir, 'bs')]);
    expect(code).toBe(0);
    expect(out).toContain('would run: wrangler secret put BROKER_SECRET --env staging');
    expect(out).toContain('would run: wrangler secret put AUTH_SIGNING_KEY --env staging');
    expect(out).toContain(`would write the broker secret (owner-only) to ${join(dir, 'bs')}`);
    expect(out).not.toMatch(/[A-Za-z0-9_-]{43}/);
    expect(out).not.toContain('"d":');
    expect(() => statSync(join(dir, 'bs'))).toThrow();
  });

  it('writes .dev.vars for wrangler dev with the secrets npm start keeps (--local)', async () => {
    const dataDir = join(dir, 'data-local');
    const devVars = join(dir, 'dev.vars');
    const first = await secretsHere(['--local', '--dev-vars', devVars], { DATA_DIR: dataDir });
    expect(first.code, first.err).toBe(0);
    const text = readFileSync(devVars, 'utf8');
    expect(statSync(devVars).mode & 0o777).toBe(0o600);
    const value = (name: string) => new RegExp(`^${name}='([^']*)'$`, 'm').exec(text)?.[1];
    expect(value('BROKER_SECRET')).toBe(readFileSync(join(dataDir, 'broker-secret'), 'utf8'));
    expect(value('AUTH_SIGNING_KEY')).toBe(readFileSync(join(dataDir, 'signing-key.json'), 'utf8'));
    expect(JSON.parse(value('AUTH_SIGNING_KEY')!)).toMatchObject({ kty: 'EC', crv: 'P-256' });
    // An existing secret of npm start's is kept, not replaced.
    writeFileSync(join(dataDir, 'broker-secret'), 'kept-secret');
    expect((await secretsHere(['--local', '--dev-vars', devVars], { DATA_DIR: dataDir })).code).toBe(0);
    expect(readFileSync(devVars, 'utf8')).toMatch(/^BROKER_SECRET='kept-secret'$/m);
  });

  it('refuses an unknown environment, a missing one and an unknown secret with exit code 2', async () => {
    expect(await secretsHere(['--env', 'qa'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('--env must be one of staging, production, got "qa"'),
    });
    expect(await secretsHere([])).toMatchObject({
      code: 2,
      err: expect.stringContaining('--env staging|production (or --local) is required'),
    });
    expect(await secretsHere(['--env', 'production', '--only', 'PASSWORD'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('--only must be one of BROKER_SECRET, AUTH_SIGNING_KEY'),
    });
  });
});
