/**
 * The fault controls a drill or a broker test relies on: each is driven over the HTTP control channel and observed
 * from a real manager connection.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PF4_RESULT, PF5_RESULT } from '../shared/resultCodes.js';
import { startSim, type RunningSim } from './index.js';
import { ManagerClient, getState, postControl } from './testing/managerClient.js';

const PASSWORD = 'fault-password';
let sim: RunningSim;
const clients: ManagerClient[] = [];

async function loggedIn(server = 'demo-pf4', pump = false): Promise<ManagerClient> {
  const client = await ManagerClient.connect(sim.port, server);
  clients.push(client);
  await client.ok('login', { login: 1000, password: PASSWORD, pump });
  return client;
}

beforeAll(async () => {
  sim = await startSim({ managerPassword: PASSWORD });
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  // Leave every switch off for the next test.
  for (const server of sim.servers) {
    await postControl(sim.port, `${server}/delay`, { ms: 0 });
    await postControl(sim.port, `${server}/refuse-login`, { on: false });
    await postControl(sim.port, `${server}/freeze`, { on: false });
  }
});

afterAll(async () => {
  await sim.close();
});

async function connectWhenUp(server: string, timeoutMs = 3000): Promise<ManagerClient> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const client = await ManagerClient.connect(sim.port, server);
      clients.push(client);
      return client;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

describe('control channel', () => {
  it('reports counters in state', async () => {
    const client = await loggedIn();
    await client.ok('Ping');
    const state = await getState(sim.port, 'demo-pf4');
    expect(state).toMatchObject({ server: 'demo-pf4', family: 'PF4', up: true, users: 200, trades: 300, symbols: 12, groups: 5 });
    expect(state.connections).toBeGreaterThanOrEqual(1);
    expect(state.sessions).toBeGreaterThanOrEqual(1);
    expect(state.logins).toBeGreaterThanOrEqual(1);
    expect(state.commandsServed).toBeGreaterThanOrEqual(2);
    const pf5 = await getState(sim.port, 'demo-pf5');
    expect(pf5).toMatchObject({ family: 'PF5', users: 200, positions: 300 });
  });

  it('answers 404 for an unknown server or action and 400 naming the bad field', async () => {
    expect((await postControl(sim.port, 'nope/drop', {})).status).toBe(404);
    expect((await postControl(sim.port, 'demo-pf4/explode', {})).status).toBe(404);
    const bad = await postControl(sim.port, 'demo-pf4/delay', { ms: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^ms/);
    const badFreeze = await postControl(sim.port, 'demo-pf4/freeze', {});
    expect(badFreeze.status).toBe(400);
    expect(badFreeze.body.error).toMatch(/^on/);
    const res = await fetch(`http://127.0.0.1:${sim.port}/control/demo-pf4/drop`, { method: 'POST', body: '{not json' });
    expect(res.status).toBe(400);
  });
});

describe('faults', () => {
  it('drop closes every manager connection of that server only', async () => {
    const a = await loggedIn('demo-pf4');
    const b = await loggedIn('demo-pf4');
    const other = await loggedIn('demo-pf5');
    expect((await postControl(sim.port, 'demo-pf4/drop', {})).status).toBe(200);
    await a.waitForClose();
    await b.waitForClose();
    expect(other.closed).toBe(false);
    await other.ok('Ping');
    // The server itself is still there.
    await loggedIn('demo-pf4');
  });

  it('delay holds every answer at least the given time', async () => {
    const client = await loggedIn();
    await postControl(sim.port, 'demo-pf4/delay', { ms: 150 });
    const started = Date.now();
    await client.ok('Ping');
    expect(Date.now() - started).toBeGreaterThanOrEqual(145);
  });

  it('delay for one command leaves the others alone', async () => {
    const client = await loggedIn();
    await postControl(sim.port, 'demo-pf4/delay', { ms: 300, cmd: 'UsersRequest' });
    const order: string[] = [];
    const started = Date.now();
    const slow = client.ok('UsersRequest', { limit: 1 }).then(() => order.push('UsersRequest'));
    await client.ok('Ping').then(() => order.push('Ping'));
    await slow;
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(order).toEqual(['Ping', 'UsersRequest']);
  });

  it('refuse-login refuses logins with NoConnect / AuthServerBusy until switched off', async () => {
    await postControl(sim.port, 'demo-pf4/refuse-login', { on: true });
    await postControl(sim.port, 'demo-pf5/refuse-login', { on: true });
    const pf4 = await ManagerClient.connect(sim.port, 'demo-pf4');
    clients.push(pf4);
    expect((await pf4.fails('login', { login: 1000, password: PASSWORD })).code).toBe(PF4_RESULT.NoConnect);
    const pf5 = await ManagerClient.connect(sim.port, 'demo-pf5');
    clients.push(pf5);
    expect((await pf5.fails('login', { login: 1000, password: PASSWORD })).code).toBe(PF5_RESULT.AuthServerBusy);
    await postControl(sim.port, 'demo-pf4/refuse-login', { on: false });
    await pf4.ok('login', { login: 1000, password: PASSWORD, pump: false });
  });

  it('freeze stops answers without closing, and thawing answers what was asked', async () => {
    const client = await loggedIn();
    await postControl(sim.port, 'demo-pf4/freeze', { on: true });
    let answered = false;
    const pending = client.ok('Ping').then(() => { answered = true; });
    await new Promise((r) => setTimeout(r, 200));
    expect(answered).toBe(false);
    expect(client.closed).toBe(false);
    await postControl(sim.port, 'demo-pf4/freeze', { on: false });
    await pending;
    expect(answered).toBe(true);
  });

  it('freeze also holds the event stream', async () => {
    const client = await loggedIn('demo-pf4', true);
    await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
    await postControl(sim.port, 'demo-pf4/freeze', { on: true });
    await new Promise((r) => setTimeout(r, 50));
    const seen = client.events.length;
    await new Promise((r) => setTimeout(r, 400));
    expect(client.events.length).toBe(seen);
    await postControl(sim.port, 'demo-pf4/freeze', { on: false });
    await client.waitFor(() => client.events.length > seen, 3000, 'events after thaw');
  });

  it('restart drops connections, refuses new ones while down, then serves the same world', async () => {
    const client = await loggedIn();
    const before = await client.ok<{ items: unknown[] }>('UsersRequest', { limit: 3 });
    expect((await postControl(sim.port, 'demo-pf4/restart', { downMs: 400 })).status).toBe(200);
    await client.waitForClose();
    await expect(ManagerClient.connect(sim.port, 'demo-pf4')).rejects.toThrow(/503/);
    expect((await getState(sim.port, 'demo-pf4')).up).toBe(false);
    const again = await connectWhenUp('demo-pf4');
    await again.ok('login', { login: 1000, password: PASSWORD, pump: false });
    const after = await again.ok<{ items: unknown[] }>('UsersRequest', { limit: 3 });
    expect(after).toEqual(before);
  });

  it('SrvRestart answers true, then drops the connection, and the server comes back', async () => {
    const client = await loggedIn();
    expect(await client.ok('SrvRestart')).toBe(true);
    await client.waitForClose();
    expect(client.closeCode).toBe(1012);
    const again = await connectWhenUp('demo-pf4');
    await again.ok('login', { login: 1000, password: PASSWORD, pump: false });
    await again.ok('Ping');
  });
});
