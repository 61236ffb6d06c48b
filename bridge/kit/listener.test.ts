/**
 * The kit's listening socket: one path per bridged server and 404 for any other, 503 while a server is not
 * available, the embedding process's own HTTP routes beside the upgrades, the peer allow-list (`peerFilter`:
 * loopback always, the configured addresses and ranges however the peer's address is written), and the bounds it
 * refuses to be built with.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAddressRanges } from '../../shared/addressRanges.js';
import { SERVER_MIN_FRAME_BYTES } from '../../shared/protocol.js';
import { BridgedServer } from './bridgedServer.js';
import { createBridgeListener, replyJson } from './listener.js';
import { peerFilter } from './peers.js';
import { KitClient, serve, tinyDriver, type Served } from '../../test/support/bridge/kit.js';

const running: Served[] = [];
const clients: KitClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const served of running.splice(0)) await served.close();
});

function get(port: number, path: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    })
      .once('error', reject)
      .end();
  });
}

describe('createBridgeListener', () => {
  it('serves each server at its own path, refuses other paths with 404, and a server not available with 503', async () => {
    let up = true;
    const a = new BridgedServer(tinyDriver({ name: 'alpha' }));
    const b = new BridgedServer(tinyDriver({ name: 'beta', family: 'PF5', events: ['users'], available: () => up }));
    const served = await serve([a, b]);
    running.push(served);
    for (const name of ['alpha', 'beta']) {
      const client = await KitClient.connect(served.port, name);
      clients.push(client);
      expect((await client.login({ pump: false })).result).toMatchObject({ server: name });
    }
    expect(a.sessions.size).toBe(1);
    expect(b.sessions.size).toBe(1);
    await expect(KitClient.connect(served.port, 'gamma')).rejects.toThrow('upgrade refused with 404');
    await expect(KitClient.connect(served.port, 'alpha/more')).rejects.toThrow('upgrade refused with 404');
    up = false;
    await expect(KitClient.connect(served.port, 'beta')).rejects.toThrow('upgrade refused with 503');
  });

  it("answers the embedding process's routes, and 404 for any other request", async () => {
    const server = new BridgedServer(tinyDriver());
    const served = await serve([server], {
      routes: (_req, res, path) => {
        if (path.join('/') !== 'healthz') return false;
        replyJson(res, 200, { status: 'ok' });
        return true;
      },
    });
    running.push(served);
    expect(await get(served.port, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get(served.port, '/tiny')).toEqual({ status: 404, body: { error: 'not found' } });
  });

  it('is not built with a frame bound below SERVER_MIN_FRAME_BYTES, or two servers of one name', () => {
    const server = new BridgedServer(tinyDriver());
    expect(() => createBridgeListener([server], { maxPayload: SERVER_MIN_FRAME_BYTES - 1 })).toThrow(
      `maxPayload must be an integer of at least ${SERVER_MIN_FRAME_BYTES} (SERVER_MIN_FRAME_BYTES)`,
    );
    expect(() => createBridgeListener([server, new BridgedServer(tinyDriver())])).toThrow('two servers are named tiny');
  });
});

describe('BridgedServer', () => {
  it("refuses a driver that claims the kit's commands, an unknown event kind or a bad build", () => {
    expect(() => new BridgedServer(tinyDriver({ commands: { Ping: () => 1 } }))).toThrow(
      'commands: Ping is answered by the kit, not the driver',
    );
    expect(() => new BridgedServer(tinyDriver({ events: ['users', 'nope' as 'users'] }))).toThrow(
      /^events: nope is not a change-event kind/,
    );
    expect(() => new BridgedServer(tinyDriver({ build: 0 }))).toThrow('build must be an integer of at least 1');
    expect(() => new BridgedServer(tinyDriver({ name: 'a/b' }))).toThrow(/^name must be/);
  });
});

describe('peerFilter', () => {
  it('takes loopback and nothing else by default', () => {
    const allowed = peerFilter([]);
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].map(allowed)).toEqual([true, true, true]);
    expect(['127.0.0.2', '10.0.0.5', '::ffff:10.0.0.5', 'fd00::1', undefined].map(allowed)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("takes the configured addresses and ranges, however the peer's address is written", () => {
    const allowed = peerFilter(parseAddressRanges('172.29.79.0/24 10.0.0.5 fd00::/8').ranges);
    expect(['172.29.79.1', '::ffff:172.29.79.254', '10.0.0.5', 'fd12::3', '127.0.0.1'].map(allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['172.29.80.1', '10.0.0.6', '::ffff:10.0.0.6', 'fe80::1', '127.0.0.2'].map(allowed)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
