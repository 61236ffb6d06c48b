/**
 * The simulator's driver declares what its worlds push: the login's capability list names every change kind a world
 * emits (the kit sends only the kinds listed), PF5's margin-call notifications among them, and a pumping manager
 * receives them over the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoginResult } from '../../shared/protocol.js';
import { startSim, type RunningSim } from '../index.js';
import { ManagerClient } from '../../test/support/sim/managerClient.js';

const PASSWORD = 'driver-password';
let sim: RunningSim;
const clients: ManagerClient[] = [];

beforeAll(async () => {
  sim = await startSim({
    config: {
      servers: [
        {
          name: 'quiet-pf5',
          family: 'PF5',
          accounts: 10,
          trades: 0,
          ticksPerSecond: 0,
          managers: [{ login: 1000, password: PASSWORD }],
        },
      ],
    },
  });
});
afterAll(async () => {
  for (const client of clients) client.close();
  await sim.close();
});

describe("the simulator's capability list", () => {
  it("names PF5 margin-call events, and a pumping manager receives one when an account crosses its group's level", async () => {
    const client = await ManagerClient.connect(sim.port, 'quiet-pf5');
    clients.push(client);
    const login = await client.ok<LoginResult>('login', { login: 1000, password: PASSWORD });
    expect(login.capabilities.events).toEqual([
      'users',
      'positions',
      'orders',
      'deals',
      'ticks',
      'symbols',
      'groups',
      'margin',
    ]);
    await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end');

    const trader = (
      await client.ok<{ login: number }>('UserAdd', {
        record: { group: 'demo\\retail', leverage: 100, firstName: 'Mona' },
      })
    ).login;
    await client.ok('DealerBalance', { login: trader, type: 'Balance', amount: 2_000 });
    await client.ok('DealerSend', { login: trader, symbol: 'EURUSD', type: 'Buy', volume: 10_000 });
    // A margin-call level above the account's margin level puts it in the margin call.
    await client.ok('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 1_000_000 } });
    const call = await client.waitForEvent((e) => e.event === 'margin');
    expect(call).toMatchObject({
      op: 'add',
      record: { login: trader, group: 'demo\\retail', type: 'MarginCall', direction: 'Enter' },
    });
  });
});
