/**
 * The bounds a bridged server keeps on its connections (limits.ts), seen from the broker's side of a real WebSocket:
 * the login deadline, refused logins per connection, sessions per server, requests in flight per session, the bytes
 * of held change events, and the deadline of a snapshot its peer stopped reading; and the limits a server refuses to
 * be built with.
 */
import { describe, expect, it } from 'vitest';
import { CLOSE_CODES, RESYNC_CHUNK } from '../../shared/protocol.js';
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { BridgedServer } from './bridgedServer.js';
import { DEFAULT_LIMITS } from './limits.js';
import { KitClient, kitHarness, tinyDriver, until } from '../../test/support/bridge/kit.js';

const start = kitHarness();

describe('the login deadline', () => {
  it('closes a connection that has not logged in within it, and leaves a logged-in one open', async () => {
    const { connect, server, logged } = await start({}, { loginDeadlineMs: 50 });
    const manager = await connect();
    await manager.login({ pump: false });
    const idle = await connect();
    await idle.waitFor(() => idle.closed, 'the idle connection to close');
    expect([idle.closeCode, idle.closeReason]).toEqual([CLOSE_CODES.loginPolicy, 'no login within 50 ms']);
    expect(logged.find((e) => e.msg === 'no login within the deadline, closing')).toMatchObject({
      server: 'tiny',
      deadlineMs: 50,
    });
    // The manager's own deadline has passed as well: a logged-in session is not bound by it.
    expect(await manager.ok('Ping')).toMatchObject({ time: expect.any(String) });
    expect(server.sessions.size).toBe(1);
  });
});

describe('refused logins', () => {
  it('closes the connection after the answer to its third refused login; malformed logins do not count', async () => {
    const { connect, logged } = await start();
    const client = await connect();
    for (let i = 0; i < 4; i++) expect((await client.login({ pump: 'no' })).error?.code).toBe(PF4_RESULT.InvalidData);
    for (let i = 1; i <= 2; i++) {
      expect((await client.login({ password: `guess-${i}` })).error).toEqual({
        code: PF4_RESULT.InvalidData,
        message: 'invalid manager login or password',
      });
    }
    expect(client.closed).toBe(false);
    const third = await client.login({ password: 'guess-3' });
    expect(third.error).toEqual({ code: PF4_RESULT.InvalidData, message: 'invalid manager login or password' });
    await client.waitFor(() => client.closed, 'the close');
    expect([client.closeCode, client.closeReason]).toEqual([CLOSE_CODES.loginPolicy, 'too many refused logins']);
    expect(logged.find((e) => e.msg === 'too many refused logins, closing')).toMatchObject({ refused: 3 });
    expect(JSON.stringify(logged)).not.toContain('guess-');
  });

  it('takes a configured bound, and a good login after fewer refusals', async () => {
    const { connect } = await start({}, { maxFailedLogins: 1 });
    const once = await connect();
    await once.login({ password: 'wrong' });
    await once.waitFor(() => once.closed, 'the close');
    expect(once.closeCode).toBe(CLOSE_CODES.loginPolicy);

    const { connect: connectDefault } = await start({ name: 'other' });
    const client = await connectDefault();
    await client.login({ password: 'wrong' });
    expect((await client.login({ pump: false })).result).toMatchObject({ server: 'other' });
  });
});

describe('sessions per server', () => {
  it('refuses an upgrade past maxSessions with 503, and takes one again once a session ends', async () => {
    const { connect, server, port, logged } = await start({}, { maxSessions: 2 });
    const first = await connect();
    await connect();
    await expect(KitClient.connect(port, 'tiny')).rejects.toThrow('upgrade refused with 503');
    expect(logged.find((e) => e.msg === 'manager connection refused: too many sessions')).toMatchObject({
      server: 'tiny',
      maxSessions: 2,
    });
    first.close();
    await until(() => server.sessions.size === 1, 'the first session to end');
    const again = await connect();
    expect((await again.login({ pump: false })).result).toMatchObject({ server: 'tiny' });
  });
});

describe('requests in flight', () => {
  it("answers a request past maxInFlight with the family's too-frequent code, and takes more once answers are out", async () => {
    const opened: Array<() => void> = [];
    const { connect } = await start(
      {
        gate: (request) =>
          request.cmd === 'Count' ? new Promise<boolean>((resolve) => opened.push(() => resolve(true))) : undefined,
      },
      { maxInFlight: 2 },
    );
    const client = await connect();
    await client.login({ pump: false });
    const held = [client.ok('Count'), client.ok('Count')];
    expect(await client.fails('UserGet', { login: 1 })).toEqual({
      code: PF4_RESULT.TooFrequent,
      message: 'more than 2 requests in flight on this session: wait for answers before sending more',
    });
    for (const open of opened.splice(0)) open();
    expect(await Promise.all(held)).toEqual([1, 2]);
    expect(await client.ok('UserGet', { login: 1 })).toEqual({ login: 1, name: 'One' });
  });

  it('counts a request its gate swallowed as answered', async () => {
    const { connect } = await start(
      { gate: (request) => (request.cmd === 'Slow' ? false : undefined) },
      { maxInFlight: 1 },
    );
    const client = await connect();
    await client.login({ pump: false });
    void client.call('Slow');
    void client.call('Slow');
    expect(await client.ok('UserGet', { login: 2 })).toEqual({ login: 2, name: 'Two' });
  });
});

describe('held event bytes', () => {
  it('closes a session holding more bytes of events than maxHeldBytes with 1013, a coalesced key counted at its last', async () => {
    const { driver, server, connect } = await start(
      {
        coalesceKey: (kind, record) => (kind === 'ticks' ? (record as { symbol: string }).symbol : undefined),
      },
      { maxHeldBytes: 2000 },
    );
    const client = await connect();
    await client.login();
    await client.resynced();
    server.hold();
    const name = 'n'.repeat(700);
    for (let i = 0; i < 10; i++) driver.emit('ticks', 'update', { symbol: 'EURUSD', bid: i, name });
    driver.emit('users', 'update', { login: 1, name });
    await client.ok('Ping');
    expect(client.closed).toBe(false);
    driver.emit('users', 'update', { login: 2, name });
    await client.waitFor(() => client.closed, 'the close');
    expect([client.closeCode, client.closeReason]).toEqual([CLOSE_CODES.tooSlow, 'too many pending event bytes']);
  });
});

describe('a snapshot its peer stopped reading', () => {
  it('closes the session with 1013 once the socket has not drained for snapshotStallMs', async () => {
    const wide = 'w'.repeat(2048);
    // 40 MB on the wire, more than the kernel's socket buffers take; the rows share one string, so memory stays small.
    const users = Array.from({ length: 4 * RESYNC_CHUNK }, (_, i) => ({ login: i + 1, name: wide }));
    const { connect, server, logged } = await start(
      { snapshot: () => [{ kind: 'users', rows: users }] },
      { resyncHighWater: 1024, snapshotStallMs: 100 },
    );
    const client = await connect();
    const answer = client.login();
    client.ws.pause();
    await until(
      () => logged.some((e) => e.msg === 'snapshot not read, closing session'),
      'the stalled snapshot to be given up',
      20_000,
    );
    expect(server.sessions.size).toBe(0);
    expect(logged.find((e) => e.msg === 'snapshot not read, closing session')).toMatchObject({ stallMs: 100 });
    client.ws.resume();
    expect((await answer).result).toMatchObject({ server: 'tiny' });
    await client.waitFor(() => client.closed, 'the close', 20_000);
    expect([client.closeCode, client.closeReason]).toEqual([CLOSE_CODES.tooSlow, 'the snapshot is not being read']);
    expect(client.events.some((e) => e.event === 'resync' && e.op === 'end')).toBe(false);
  });
});

describe('limits', () => {
  it('has a default for every bound', () => {
    expect(DEFAULT_LIMITS).toEqual({
      resyncHighWater: 4 * 1024 * 1024,
      maxBuffered: 64 * 1024 * 1024,
      maxHeldEvents: 1_000_000,
      maxHeldBytes: 256 * 1024 * 1024,
      snapshotStallMs: 60_000,
      loginDeadlineMs: 10_000,
      maxFailedLogins: 3,
      maxSessions: 64,
      maxInFlight: 256,
    });
  });

  it('refuses a limit that is not a positive integer, or not a limit, naming it', () => {
    expect(() => new BridgedServer(tinyDriver(), { limits: { maxSessions: 0 } })).toThrow(
      'limits.maxSessions must be an integer of at least 1',
    );
    expect(() => new BridgedServer(tinyDriver(), { limits: { loginDeadlineMs: 1.5 } })).toThrow(
      'limits.loginDeadlineMs must be an integer of at least 1',
    );
    expect(() => new BridgedServer(tinyDriver(), { limits: { maxInflight: 3 } as never })).toThrow(
      /^limits\.maxInflight is not a session limit \(resyncHighWater, /,
    );
    expect(new BridgedServer(tinyDriver(), { limits: { maxSessions: undefined } }).limits.maxSessions).toBe(64);
  });
});
