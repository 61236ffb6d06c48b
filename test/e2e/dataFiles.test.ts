/**
 * The data folder is owner-only: after the stack ran against it (registry seeded, a token issued, an idempotent write
 * stored by a platform gateway object), every folder under DATA_DIR is 0700 and every file 0600: the registry's D1
 * files (client secret hashes), the Durable Object storage (idempotency records with whole account records), the
 * signing key, the broker secret, the manager password and the broker's platform file. A folder an older release
 * left world-readable is tightened at start. The broker's platform file names the variable holding the manager
 * password, never the password.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startStack, type Stack } from '../../launcher/stack.js';

const parent = mkdtempSync(join(tmpdir(), 'gateway-data-'));
const dataDir = join(parent, 'data');
let stack: Stack | undefined;
afterAll(async () => {
  await stack?.close();
  rmSync(parent, { recursive: true, force: true });
});

/** Every path under `root` with its permission bits, folders marked with a trailing slash. */
function modes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    out[`${relative(root, path) || '.'}${stat.isDirectory() ? '/' : ''}`] = (stat.mode & 0o777).toString(8);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return out;
}

describe('the data folder', () => {
  it('holds only owner-only folders and files after a run, older leftovers tightened', async () => {
    // What an older release left: a world-readable folder and file.
    mkdirSync(join(dataDir, 'edge'), { recursive: true, mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'edge', 'leftover.json'), '{}', { mode: 0o644 });

    stack = await startStack({ dataDir, seed: 7 });
    const token = await stack.token();
    const res = await fetch(`${stack.edgeUrl}/api/v2/PF4/${stack.platforms.pf4}/UserRecordNew`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': 'data-files-1',
      },
      body: JSON.stringify({ group: 'demo\\forex', name: 'Private' }),
    });
    expect(((await res.json()) as { error: unknown }).error).toBeNull();

    const found = modes(dataDir);
    for (const name of ['signing-key.json', 'broker-secret', 'manager-password', 'broker-platforms.json'])
      expect(found[name], name).toBe('600');
    expect(Object.keys(found).some((p) => p.startsWith('edge/v3/d1/') && !p.endsWith('/'))).toBe(true);
    expect(Object.keys(found).some((p) => p.startsWith('edge/do/') && !p.endsWith('/'))).toBe(true);
    const loose = Object.entries(found).filter(([path, mode]) => mode !== (path.endsWith('/') ? '700' : '600'));
    expect(loose).toEqual([]);
  }, 120_000);

  it('holds the broker platform file without the manager password: each entry names the variable holding it', () => {
    const password = readFileSync(join(dataDir, 'manager-password'), 'utf8').trim();
    const text = readFileSync(join(dataDir, 'broker-platforms.json'), 'utf8');
    expect(text).not.toContain(password);
    const entries = (JSON.parse(text) as { platforms: Array<Record<string, unknown>> }).platforms;
    expect(entries.map((p) => [p.family, p.passwordEnv, 'password' in p])).toEqual([
      ['PF4', 'DEMO_MANAGER_PASSWORD', false],
      ['PF5', 'DEMO_MANAGER_PASSWORD', false],
    ]);
  });
});
