/**
 * The listener serving `wss://` itself (`tls: {cert, key}`): a client trusting the certificate's CA logs in over it
 * and the embedding process's routes answer over HTTPS; a client that does not trust it, or speaks plain `ws://`,
 * gets nothing served; a certificate that does not load is refused when the listener is built. The certificate is
 * self-signed, made for the test by `openssl` in a temporary folder, for 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BridgedServer } from './bridgedServer.js';
import { createBridgeListener, replyJson } from './listener.js';
import { KitClient, serve, tinyDriver, type Served } from '../../test/support/bridge/kit.js';

let folder: string;
let cert: string;
let key: string;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'bridge-kit-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(folder, 'key.pem'),
      '-out',
      join(folder, 'cert.pem'),
    ],
    { stdio: 'pipe' },
  );
  cert = readFileSync(join(folder, 'cert.pem'), 'utf8');
  key = readFileSync(join(folder, 'key.pem'), 'utf8');
});

afterAll(() => rmSync(folder, { recursive: true, force: true }));

const running: Served[] = [];
const clients: KitClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const served of running.splice(0)) await served.close();
});

async function serveTls(): Promise<Served> {
  const served = await serve([new BridgedServer(tinyDriver())], {
    tls: { cert, key },
    routes: (_req, res, path) => {
      if (path.join('/') !== 'healthz') return false;
      replyJson(res, 200, { status: 'ok' });
      return true;
    },
  });
  running.push(served);
  return served;
}

describe('createBridgeListener with tls', () => {
  it('serves wss:// to a client trusting its CA, the login and the snapshot over it', async () => {
    const { port } = await serveTls();
    const client = await KitClient.connect(port, 'tiny', { ca: cert });
    clients.push(client);
    expect((await client.login()).result).toMatchObject({ server: 'tiny', family: 'PF4' });
    await client.resynced();
    expect(client.events[1].record).toEqual({
      kind: 'users',
      items: [
        { login: 1, name: 'One' },
        { login: 2, name: 'Two' },
      ],
    });
  });

  it("answers the embedding process's routes over HTTPS", async () => {
    const { port } = await serveTls();
    const answer = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/healthz', ca: cert, agent: false }, (res) => {
        let text = '';
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      })
        .once('error', reject)
        .end();
    });
    expect(answer).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('serves nothing to a client that does not trust the certificate, or speaks plain ws://', async () => {
    const { port } = await serveTls();
    await expect(KitClient.connect(port, 'tiny')).rejects.toThrow();
    const untrusting = new Promise<string>((resolve) => {
      void KitClient.connect(port, 'tiny', { ca: '' }).then(
        (client) => {
          client.close();
          resolve('connected');
        },
        (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message),
      );
    });
    expect(await untrusting).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('is not built with a certificate or key that is missing or does not load', () => {
    const server = new BridgedServer(tinyDriver());
    expect(() => createBridgeListener([server], { tls: { cert, key: '' } })).toThrow(
      'tls.key must be a PEM private key (a string or Buffer)',
    );
    expect(() => createBridgeListener([server], { tls: { cert: undefined as never, key } })).toThrow(
      'tls.cert must be a PEM certificate chain (a string or Buffer)',
    );
    expect(() => createBridgeListener([server], { tls: { cert: 'not a certificate', key } })).toThrow(
      /^tls: the certificate and key do not load: /,
    );
  });
});
