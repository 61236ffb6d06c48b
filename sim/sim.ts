/**
 * Starting and stopping a whole simulator in-process: the trading servers from the config, their quote feeds and
 * the listening socket. `main.ts` wraps this for the command line; tests call it directly.
 */
import type { AddressInfo } from 'node:net';
import { parseConfig, defaultConfig, type SimConfig, type SimConfigInput } from './config/simConfig.js';
import { createManagerServer, type PeerPolicy } from './protocol/managerServer.js';
import { TradingServer, type Logger } from './server/tradingServer.js';
import { deriveSeed } from './world/random.js';

export interface SimOptions {
  /** 0 (the default here) picks a free port. */
  port?: number;
  /** Bind address, loopback by default. Which peers are answered is `allow`'s (and `controlToken`'s) business. */
  host?: string;
  /** Peers besides loopback that may open manager sessions (SIM_MANAGER_ALLOW). Default: none. */
  allow?: PeerPolicy['allow'];
  /** Lets an allowed non-loopback peer use the fault controls as a bearer token (SIM_CONTROL_TOKEN). Default: none. */
  controlToken?: string;
  /** World seed for servers without their own; default 42. */
  seed?: number;
  /** The config; without it the embedded default of one PF4 and one PF5 server. */
  config?: SimConfig | SimConfigInput;
  /** Password of the default config's manager 1000. */
  managerPassword?: string;
  /** Receives structured log entries; silent by default. */
  log?: Logger;
}

export interface RunningSim {
  port: number;
  servers: string[];
  /** The trading servers by name, for tests that want to look inside. */
  tradingServers: ReadonlyMap<string, TradingServer>;
  close(): Promise<void>;
}

export const DEFAULT_SEED = 42;

export async function startSim(options: SimOptions = {}): Promise<RunningSim> {
  const log: Logger = options.log ?? (() => {});
  const config = parseConfig(options.config ?? defaultConfig(options.managerPassword));
  const baseSeed = options.seed ?? config.seed ?? DEFAULT_SEED;
  const servers = new Map<string, TradingServer>();
  for (const serverConfig of config.servers) {
    // Each server gets its own stream unless pinned, so two servers of a family do not mirror each other.
    const seed = serverConfig.seed ?? deriveSeed(baseSeed, serverConfig.name);
    servers.set(serverConfig.name, new TradingServer(serverConfig, seed, log));
  }

  const http = createManagerServer(servers, log, { allow: options.allow, controlToken: options.controlToken });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  for (const server of servers.values()) server.start();
  const port = (http.address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  return {
    port,
    servers: [...servers.keys()],
    tradingServers: servers,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const server of servers.values()) server.stop();
        http.close(() => resolve());
        http.closeAllConnections();
      });
      return closing;
    },
  };
}
