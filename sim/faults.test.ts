/**
 * The fault controls a drill or a broker test relies on: each is driven over the HTTP control channel and observed
 * from a real manager connection. The simulator runs in this process: answer delays are measured on fake timers (its
 * I/O stays real), and what a frozen server holds back is read from the server itself rather than waited out.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'node:http';
import { PF4_RESULT, PF5_RESULT } from '../shared/resultCodes.js';
import { startSim, type RunningSim } from './index.js';
import { ManagerClient, getState, postControl } from '../test/support/sim/managerClient.js';

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
  vi.useRealTimers(); // a test that hung under fake timers must not leave them to the next
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

/** One turn of the event loop (not faked), so real I/O can progress while timers are fake. */
const ioTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Spins the (real) event loop until `probe` holds; the bound only fails a hung test. */
async function until(probe: () => boolean | Promise<boolean>, what: string, boundMs = 5000): Promise<void> {
  const end = performance.now() + boundMs;
  while (!(await probe())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await ioTurn();
  }
}

/**
 * A control request over node:http on a connection of its own, so no HTTP client keeps timers of its own around the
 * fake clock (the only timers started under it are then the simulator's).
 */
function control(path: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: sim.port,
        path: `/control/${path}`,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', connection: 'close' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Runs `body` with setTimeout faked for the whole process, simulator included; sockets and HTTP stay real. */
async function onFakeTimers(body: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    await body();
  } finally {
    vi.useRealTimers();
  }
}

/** The requests a frozen server has taken from its manager connections and holds unanswered. */
const parkedRequests = (server: string) =>
  [...sim.tradingServers.get(server)!.sessions].reduce(
    (n, session) => n + (session as unknown as { parked: unknown[] }).parked.length,
    0,
  );

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
    expect(state).toMatchObject({
      server: 'demo-pf4',
      family: 'PF4',
      up: true,
      users: 200,
      trades: 300,
      symbols: 12,
      groups: 5,
    });
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
    const res = await fetch(`http://127.0.0.1:${sim.port}/control/demo-pf4/drop`, {
      method: 'POST',
      body: '{not json',
    });
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

  it('delay holds every answer for the given time', async () => {
    const client = await loggedIn();
    expect(await control('demo-pf4/delay', { ms: 150 })).toBe(200);
    await onFakeTimers(async () => {
      let answered = false;
      const ping = client.ok('Ping').then(() => {
        answered = true;
      });
      // The server has the Ping once its hold (the only timer started since the clock was faked) is pending.
      await until(() => vi.getTimerCount() === 1, 'the server to hold the answer');
      await vi.advanceTimersByTimeAsync(149);
      expect(vi.getTimerCount()).toBe(1);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(vi.getTimerCount()).toBe(0);
      await ping;
      expect(answered).toBe(true);
    });
  });

  it('delay for one command leaves the others alone', async () => {
    const client = await loggedIn();
    expect(await control('demo-pf4/delay', { ms: 300, cmd: 'UsersRequest' })).toBe(200);
    await onFakeTimers(async () => {
      const order: string[] = [];
      const slow = client.ok('UsersRequest', { limit: 1 }).then(() => order.push('UsersRequest'));
      await until(() => vi.getTimerCount() === 1, 'the server to hold UsersRequest');
      // Ping is answered at once, with no hold of its own, while UsersRequest is still held.
      await client.ok('Ping').then(() => order.push('Ping'));
      expect(vi.getTimerCount()).toBe(1);
      expect(order).toEqual(['Ping']);
      await vi.advanceTimersByTimeAsync(299);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      await slow;
      expect(order).toEqual(['Ping', 'UsersRequest']);
    });
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
    const served = (await getState(sim.port, 'demo-pf4')).commandsServed as number;
    let answered = false;
    const pending = client.ok('Ping').then(() => {
      answered = true;
    });
    // The server has taken the Ping and holds it: not answered, not counted as served, the connection open.
    await until(() => parkedRequests('demo-pf4') === 1, 'the frozen server to hold the Ping');
    expect((await getState(sim.port, 'demo-pf4')).commandsServed).toBe(served);
    expect(answered).toBe(false);
    expect(client.closed).toBe(false);
    await postControl(sim.port, 'demo-pf4/freeze', { on: false });
    await pending;
    expect(answered).toBe(true);
    expect(parkedRequests('demo-pf4')).toBe(0);
  });

  it('freeze also holds the event stream', async () => {
    const client = await loggedIn('demo-pf4', true);
    await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
    await postControl(sim.port, 'demo-pf4/freeze', { on: true });
    const frozen = await getState(sim.port, 'demo-pf4');
    // The feed goes on ticking while frozen; none of those ticks is sent to the manager until the thaw.
    let now = frozen;
    await until(async () => {
      now = await getState(sim.port, 'demo-pf4');
      return now.ticksEmitted >= frozen.ticksEmitted + 5;
    }, 'ticks while frozen');
    expect(now.eventsSent).toBe(frozen.eventsSent);
    const seen = client.events.length;
    await postControl(sim.port, 'demo-pf4/freeze', { on: false });
    await client.waitFor(() => client.events.length > seen, 3000, 'events after thaw');
    expect((await getState(sim.port, 'demo-pf4')).eventsSent).toBeGreaterThan(frozen.eventsSent);
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
