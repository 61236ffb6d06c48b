/**
 * The typed client story against the whole stack: the committed types (clients/typescript/api.d.ts) are exactly what
 * openapi-typescript makes of the /openapi.json the edge serves, so they cannot drift from the API; the example
 * (clients/typescript/example.ts) compiles under the project's settings, while a call to a path the API lacks or with
 * a wrongly typed field does not; and the example gets a token, reads and writes through the real gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CLIENT_TYPES_FILE, clientTypes } from '../../clients/typescript/clientTypes.js';
import { example, gateway, fetchToken } from '../../clients/typescript/example.js';
import { startClient, waitHealthy, type Client } from './support.js';

const root = resolve(import.meta.dirname, '../..');
const EXAMPLE = join(root, 'clients/typescript/example.ts');

let client: Client;

beforeAll(async () => {
  client = await startClient();
  await waitHealthy(client);
}, 120_000);
afterAll(async () => {
  await client?.stack.close();
});

/**
 * Type-checks the example beside `misuse` (a file that uses the client wrongly) under the root tsconfig's options, in
 * a child process so the stack's sockets and pipes keep being served meanwhile: the native compiler (tsgo, as `npm
 * run typecheck`), which reports the same diagnostics as tsc in a fifth of the time. Answers its errors.
 */
async function typeErrors(misuse: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'typed-client-'));
  try {
    writeFileSync(join(dir, 'misuse.ts'), misuse);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: { noEmit: true, typeRoots: [join(root, 'node_modules/@types')] },
        files: [EXAMPLE, join(dir, 'misuse.ts')],
        include: [],
      }),
    );
    const tsgo = join(root, 'node_modules/@typescript/native-preview/bin/tsgo');
    const output = await new Promise<string>((done, fail) => {
      execFile(
        process.execPath,
        [tsgo, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'],
        { maxBuffer: 1 << 24 },
        (error, stdout, stderr) => {
          // The compiler exits 2 when it reports errors; anything else going wrong has no error lines to show.
          if (error && !/error TS\d+/.test(stdout))
            fail(new Error(`tsgo failed: ${stderr || stdout || error.message}`));
          else done(stdout);
        },
      );
    });
    // One entry per error: its line and the indented lines that explain it.
    return output.split(/\n(?=\S)/).filter((e) => /error TS\d+/.test(e));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the generated types', () => {
  it('are what openapi-typescript makes of the served /openapi.json (else: npm run gen:client)', async () => {
    const document = (await client.get('/openapi.json')).body;
    const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    const fresh = await clientTypes(document);
    // Compared whole; a failure names the first line that differs rather than printing 900 KiB.
    if (fresh !== committed) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      expect.fail(
        `clients/typescript/api.d.ts is out of date with /openapi.json (first difference at line ${line + 1}: ${JSON.stringify(a[line])} vs ${JSON.stringify(b[line])}): run npm run gen:client`,
      );
    }
    expect(fresh).toBe(committed);
  }, 60_000);

  it('compile the example, and refuse a path the API lacks or a field of the wrong type', async () => {
    const errors = await typeErrors(`import { gateway } from '${EXAMPLE.replace(/\.ts$/, '.js')}';
const api = gateway('http://127.0.0.1:8787', 'token');
export const unknownPath = api.GET('/api/v2/PF4/{tradePlatform}/NoSuchOperation', { params: { path: { tradePlatform: 'x' } } });
export const wrongField = api.POST('/api/v2/PF4/{tradePlatform}/UserRecordNew', { params: { path: { tradePlatform: 'x' } }, body: { login: 'seven' } });
export const missingPlatform = api.GET('/api/v2/PF4/{tradePlatform}/UsersRequest', { params: { query: { limit: 3 } } });
`);
    // The example itself (and the types it uses) compile clean: every error is the misuse file's.
    expect(errors.filter((e) => !e.includes('misuse.ts('))).toEqual([]);
    expect(errors.some((e) => e.includes('NoSuchOperation'))).toBe(true);
    expect(errors.some((e) => /'string' is not assignable to type 'number'/.test(e))).toBe(true);
    expect(errors.some((e) => e.includes("'path'"))).toBe(true);
  }, 120_000);
});

describe('the example against the stack', () => {
  it('gets a token, reads accounts (v2) and creates one under an Idempotency-Key (v2), typed', async () => {
    const { edgeUrl, clientId, clientSecret, platforms } = client.stack;
    const result = await example(edgeUrl, clientId, clientSecret);
    expect(result.platform.id).toBe(platforms.pf4);
    expect(result.users).toHaveLength(3);
    for (const user of result.users) expect(typeof user.login).toBe('number');
    expect(result.hasMore).toBe(true);
    expect(result.timeoutApplied).toBe(10);
    expect(result.created).toMatchObject({ group: 'demo\\pro', name: 'Typed Client', leverage: 100 });
    const login = result.created.login ?? 0;
    expect(login).toBeGreaterThan(0);
    expect(result.replayed).toBe(true);

    // The account is on the trading server, read back through the same typed client.
    const api = gateway(edgeUrl, await fetchToken(edgeUrl, clientId, clientSecret));
    const back = await api.GET('/api/v2/PF4/{tradePlatform}/UserRecordRequest/{login}', {
      params: { path: { tradePlatform: platforms.pf4, login } },
    });
    expect(back.data?.error).toBeNull();
    expect(back.data?.data).toMatchObject({ login, name: 'Typed Client' });
  }, 60_000);

  it('reports a refused token request', async () => {
    await expect(fetchToken(client.stack.edgeUrl, client.stack.clientId, 'wrong-secret')).rejects.toThrow(
      /token request refused \(401\)/,
    );
  });
});
