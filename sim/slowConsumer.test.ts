/**
 * The simulator's slow-consumer close: a pumping manager that stops reading while change events keep coming is
 * closed with 1013 once 64 MiB wait on its socket, so it reconnects and resyncs instead of holding the server's
 * memory; a manager that keeps reading the same stream is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type RunningSim } from './index.js';
import { ManagerClient } from '../test/support/sim/managerClient.js';

const PASSWORD = 'slow-consumer-password';
let sim: RunningSim;
const logged: Array<Record<string, unknown>> = [];
const clients: ManagerClient[] = [];

beforeAll(async () => {
  sim = await startSim({
    managerPassword: PASSWORD,
    log: (entry) => {
      logged.push(entry);
    },
  });
});
afterAll(async () => {
  for (const client of clients) client.close();
  await sim?.close();
});

async function pumping(server: string): Promise<ManagerClient> {
  const client = await ManagerClient.connect(sim.port, server);
  clients.push(client);
  await client.ok('login', { login: 1000, password: PASSWORD, pump: true });
  await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end', 10_000);
  return client;
}

describe('a manager that stops reading its change stream', () => {
  it('is closed with 1013 once 64 MiB wait for it, while a reading manager stays connected', async () => {
    const slow = await pumping('demo-pf4');
    const reader = await pumping('demo-pf4');
    const server = sim.tradingServers.get('demo-pf4')!;
    expect(server.sessions.size).toBe(2);
    slow.ws.pause(); // stops reading: what the server sends piles up on its side of the socket

    // Bursts of 4 MiB of events: the reader takes each burst before the next, the paused manager takes nothing.
    const comment = 'x'.repeat(512 * 1024);
    let bursts = 0;
    const tooSlow = () => logged.some((e) => e.msg === 'manager too slow, closing session');
    while (!tooSlow()) {
      if (++bursts > 64) throw new Error('the paused manager was never closed'); // 256 MiB: only a broken close gets here
      reader.events.length = 0;
      for (let i = 0; i < 8; i++) server.broadcast('users', 'update', { login: 100001, name: 'Slow', comment });
      await reader.waitFor(() => reader.events.length >= 8 || tooSlow(), 10_000, 'the reader to take a burst');
    }
    // Not before 64 MiB were waiting: at least 16 bursts of 4 MiB.
    expect(bursts).toBeGreaterThanOrEqual(16);
    expect(server.sessions.size).toBe(1);
    expect(reader.closed).toBe(false);
    await reader.ok('Ping');

    // Reading again, the slow manager gets what was queued and then the close frame.
    slow.ws.resume();
    await slow.waitForClose(20_000);
    expect(slow.closeCode).toBe(1013);
  }, 60_000);
});
