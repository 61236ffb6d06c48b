/**
 * The minimal bridge put together: the world loaded from its file, the driver over it, one `BridgedServer` behind the
 * kit's listener. The process entry (main.ts) and the tests start it the same way.
 *
 * Invariants: the listener serves one trading server at `ws://host:port/<name>`; loopback and the `allow` ranges
 * may connect, anyone else is refused 403; `close` drops every manager session and stops listening.
 */
import type { AddressInfo } from 'node:net';
import { BridgedServer, createBridgeListener, type BridgeLog } from '../../bridge/kit/index.js';
import type { AddressRange } from '../../shared/addressRanges.js';
import { minimalDriver } from './driver.js';
import { World } from './world.js';

export interface StartOptions {
  world: World;
  name: string;
  manager: { login: number; password: string };
  port: number;
  host: string;
  allow?: readonly AddressRange[];
  log?: BridgeLog;
}

export interface RunningBridge {
  /** `ws://host:port/<name>`: what a broker's platform file names as the server. */
  url: string;
  port: number;
  server: BridgedServer;
  close(): Promise<void>;
}

export async function startMinimalBridge(options: StartOptions): Promise<RunningBridge> {
  const server = new BridgedServer(
    minimalDriver(options.world, { name: options.name, manager: options.manager, log: options.log }),
  );
  const http = createBridgeListener([server], { allow: options.allow, log: options.log });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `ws://${host}:${port}/${encodeURIComponent(options.name)}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.stop();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
