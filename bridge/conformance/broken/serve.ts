/**
 * Serves broken servers (servers.ts) in-process, each built anew with a world of its own, all behind one kit listener
 * on 127.0.0.1 and an ephemeral port; `runAgainst` runs the conformance suite against one of them with the manager
 * of its family and short time bounds (the worlds are tiny and answer at once). `close` stops every server and its
 * world's timers and ends every connection.
 */
import type { AddressInfo } from 'node:net';
import { createBridgeListener } from '../../kit/index.js';
import { runConformance, type ConformanceReport, type Timeouts } from '../suite.js';
import { MANAGERS, type BrokenServer, type Built } from './servers.js';

/** The bounds of a run against a test server: an answer is due at once here, so two seconds are plenty even on a
 *  loaded machine, where the in-process server and suite share one event loop. A second answer or a moved record
 *  comes in the same turn as the first (after the Ping's round trip that precedes the grace, or the fences that
 *  precede every comparison), so the grace and the pause between comparisons need not allow for a network. */
export const TEST_TIMEOUTS: Timeouts = {
  answerMs: 5000,
  pingMs: 3000,
  snapshotMs: 10000,
  lateEventMs: 300,
  graceMs: 20,
  retryMs: 10,
};

export interface ServedBroken {
  port: number;
  runAgainst(server: BrokenServer): Promise<ConformanceReport>;
  close(): Promise<void>;
}

export async function serveBroken(servers: readonly BrokenServer[]): Promise<ServedBroken> {
  const built = new Map<string, Built>();
  for (const server of servers) {
    if (built.has(server.name)) throw new Error(`two broken servers are named ${server.name}`);
    const one = server.build(server.name);
    one.world.restartServer = () => one.server.restart('SrvRestart');
    built.set(server.name, one);
  }
  const http = createBridgeListener([...built.values()].map((b) => b.server));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    port,
    runAgainst: (server) => {
      const manager = MANAGERS[server.family];
      return runConformance({
        server: `ws://127.0.0.1:${port}/${server.name}`,
        login: manager.login,
        password: manager.password,
        family: server.family,
        writes: server.writes,
        timeouts: { ...TEST_TIMEOUTS, ...server.timeouts },
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { server, world } of built.values()) {
          world.stop();
          server.stop();
        }
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
