/**
 * A driver that throws where the kit calls it, and the process goes on: a snapshot row that does not convert or
 * serialise, a summary that throws while held events are released, observer hooks, per-session state, availability,
 * and a logger. Each failure is logged without the records or the password it may hold; a failure of a session's
 * stream closes that session with 1011, and the others go on. A throwing authenticate never has its text logged.
 */
import { describe, expect, it } from 'vitest';
import { CLOSE_CODES } from '../../shared/protocol.js';
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { KitClient, kitHarness, PASSWORD, until } from '../../test/support/bridge/kit.js';

const start = kitHarness();

const SECRET_ROW = 'row-content-not-for-logs';

describe('a failing snapshot stream', () => {
  it("closes the session with 1011 when toWire throws on a row, logging the error's class only", async () => {
    const { connect, server, logged } = await start({
      snapshot: () => [
        {
          kind: 'users',
          rows: [
            { login: 1, name: 'One' },
            { login: 2, name: SECRET_ROW },
          ],
          toWire: (row: { login: number; name: string }) => {
            if (row.login === 2) throw new RangeError(`cannot convert ${JSON.stringify(row)}`);
            return row;
          },
        },
      ],
    });
    const client = await connect();
    expect((await client.login()).result).toMatchObject({ server: 'tiny' });
    await client.waitFor(() => client.closed, 'the close');
    expect([client.closeCode, client.closeReason]).toEqual([CLOSE_CODES.snapshotFailed, 'the snapshot failed']);
    expect(logged.find((e) => e.msg === 'snapshot failed, closing session')).toMatchObject({
      kind: 'users',
      error: 'RangeError',
    });
    expect(JSON.stringify(logged)).not.toContain(SECRET_ROW);
    expect(server.sessions.size).toBe(0);
    // The server goes on: a session that does not pump is served.
    const other = await connect();
    expect((await other.login({ pump: false })).result).toMatchObject({ server: 'tiny' });
  });

  it('closes the session with 1011 when a row does not serialise', async () => {
    const loop: Record<string, unknown> = { login: 1, name: SECRET_ROW };
    loop.self = loop;
    const { connect, logged } = await start({ snapshot: () => [{ kind: 'users', rows: [loop] }] });
    const client = await connect();
    await client.login();
    await client.waitFor(() => client.closed, 'the close');
    expect(client.closeCode).toBe(CLOSE_CODES.snapshotFailed);
    expect(logged.find((e) => e.msg === 'snapshot failed, closing session')).toMatchObject({ error: 'TypeError' });
    expect(JSON.stringify(logged)).not.toContain(SECRET_ROW);
  });

  it('closes the session with 1011 when the summary of a coalesced key throws at the release, and releases the others', async () => {
    let broken = true;
    const { driver, server, connect, logged } = await start({
      coalesceKey: (kind, record) => (kind === 'ticks' ? (record as { symbol: string }).symbol : undefined),
      coalescedSummary: (symbol) => {
        if (broken) throw new Error(`no summary of ${symbol} ${SECRET_ROW}`);
        return { kind: 'users', op: 'update', record: { summaryOf: symbol } };
      },
    });
    const victim = await connect();
    await victim.login();
    await victim.resynced();
    server.hold();
    driver.emit('ticks', 'update', { symbol: 'A', bid: 1 });
    driver.emit('ticks', 'update', { symbol: 'A', bid: 2 });
    expect(() => server.release()).not.toThrow();
    await victim.waitFor(() => victim.closed, 'the close');
    expect([victim.closeCode, victim.closeReason]).toEqual([
      CLOSE_CODES.snapshotFailed,
      'the held events could not be sent',
    ]);
    expect(logged.find((e) => e.msg === 'releasing held events failed, closing session')).toMatchObject({
      error: 'Error',
    });
    expect(JSON.stringify(logged)).not.toContain(SECRET_ROW);

    broken = false;
    const reader = await connect();
    await reader.login();
    await reader.resynced();
    server.hold();
    driver.emit('ticks', 'update', { symbol: 'B', bid: 1 });
    driver.emit('ticks', 'update', { symbol: 'B', bid: 2 });
    server.release();
    await reader.waitFor(() => reader.live().length === 2, 'the released events');
    expect(reader.live().map((e) => e.record)).toEqual([{ symbol: 'B', bid: 2 }, { summaryOf: 'B' }]);
  });
});

describe('driver hooks that throw', () => {
  it('logs a throwing observer hook and goes on', async () => {
    const boom = () => {
      throw new Error('counter broke');
    };
    const { driver, connect, logged } = await start({
      observe: { loggedIn: boom, loginRefused: boom, answered: boom, eventSent: boom },
    });
    const client = await connect();
    expect((await client.login({ password: 'wrong' })).error?.code).toBe(PF4_RESULT.InvalidData);
    expect((await client.login()).result).toMatchObject({ server: 'tiny' });
    await client.resynced();
    driver.emit('users', 'update', { login: 1, name: 'live' });
    await client.waitFor(() => client.live().length === 1, 'the live event');
    expect(await client.ok('UserGet', { login: 1 })).toEqual({ login: 1, name: 'One' });
    const hooks = new Set(logged.filter((e) => e.msg === 'observer hook failed').map((e) => e.hook));
    expect([...hooks].sort()).toEqual(['answered', 'eventSent', 'loggedIn', 'loginRefused']);
    expect(logged.find((e) => e.msg === 'observer hook failed')).toMatchObject({ server: 'tiny', error: 'Error' });
  });

  it('answers a command whose result does not serialise with the fixed internal error', async () => {
    const { connect, logged } = await start({
      commands: {
        Loop: () => {
          const loop: Record<string, unknown> = {};
          loop.self = loop;
          return loop;
        },
        LoopLater: () => {
          const loop: unknown[] = [];
          loop.push(loop);
          return Promise.resolve(loop);
        },
      },
    });
    const client = await connect();
    await client.login({ pump: false });
    expect(await client.fails('Loop')).toEqual({
      code: PF4_RESULT.UnhandledException,
      message: 'internal error in Loop',
    });
    expect(await client.fails('LoopLater')).toEqual({
      code: PF4_RESULT.UnhandledException,
      message: 'internal error in LoopLater',
    });
    expect(logged.filter((e) => e.msg === 'command failed').map((e) => e.cmd)).toEqual(['Loop', 'LoopLater']);
    expect(await client.ok('Ping')).toMatchObject({ time: expect.any(String) });
  });

  it('closes a connection whose openSession throws with 1011, keeping no session of it', async () => {
    const { connect, server, logged } = await start({
      openSession: () => {
        throw new Error('no state');
      },
    });
    const client = await connect();
    await client.waitFor(() => client.closed, 'the close');
    expect([client.closeCode, client.closeReason]).toEqual([
      CLOSE_CODES.snapshotFailed,
      'the session could not be opened',
    ]);
    expect(server.sessions.size).toBe(0);
    expect(logged.find((e) => e.msg === 'opening a session failed, closing')).toMatchObject({ error: 'Error' });
  });

  it('logs a throwing closeSession, and refuses upgrades with 503 while available throws', async () => {
    let up: () => boolean = () => true;
    const { connect, server, port, logged } = await start({
      closeSession: () => {
        throw new Error('gone');
      },
      available: () => up(),
    });
    const client = await connect();
    await client.login({ pump: false });
    client.close();
    await until(() => server.sessions.size === 0, 'the session to end');
    expect(logged.find((e) => e.msg === 'closing a session failed')).toMatchObject({ error: 'Error' });
    up = () => {
      throw new Error('status unknown');
    };
    await expect(KitClient.connect(port, 'tiny')).rejects.toThrow('upgrade refused with 503');
    expect(logged.find((e) => e.msg === "the driver's availability check failed")).toMatchObject({ error: 'Error' });
  });

  it("goes on when the driver's logger throws", async () => {
    const { connect } = await start({
      log: () => {
        throw new Error('disk full');
      },
    });
    const client = await connect();
    expect((await client.login({ password: 'wrong' })).error?.code).toBe(PF4_RESULT.InvalidData);
    expect(await client.fails('UserGet', { login: 9 })).toMatchObject({ code: PF4_RESULT.NotEnoughRights });
  });
});

describe('a throwing authenticate', () => {
  class DirectoryError extends Error {}

  it('is answered with the fixed internal error and logged by its class only, never with the password', async () => {
    const { connect, logged } = await start({
      authenticate: ({ login, password }) => {
        if (password === PASSWORD) throw new DirectoryError(`bind as ${login} with ${password} failed`);
        return Promise.reject(new Error(`lookup of ${password} timed out`));
      },
    });
    const client = await connect();
    expect((await client.login()).error).toEqual({
      code: PF4_RESULT.UnhandledException,
      message: 'internal error in login',
    });
    expect((await client.login({ password: 'async-secret' })).error).toEqual({
      code: PF4_RESULT.UnhandledException,
      message: 'internal error in login',
    });
    const failures = logged.filter((e) => e.msg === 'command failed');
    expect(failures).toEqual([
      { msg: 'command failed', server: 'tiny', cmd: 'login', error: 'DirectoryError' },
      { msg: 'command failed', server: 'tiny', cmd: 'login', error: 'Error' },
    ]);
    const text = JSON.stringify(logged);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('async-secret');
  });

  it('keeps the password out of every log line of a session: refused, granted, failed commands, closes', async () => {
    const { connect, logged } = await start({}, { maxFailedLogins: 2 });
    const client = await connect();
    await client.login({ password: `${PASSWORD}-wrong` });
    await client.login({ password: `${PASSWORD}-wrong` });
    await client.waitFor(() => client.closed, 'the close');
    const again = await connect();
    await again.login();
    await again.fails('Boom');
    again.ws.send('{not json');
    await again.waitFor(() => again.closed, 'the close');
    expect(logged.length).toBeGreaterThan(3);
    expect(JSON.stringify(logged)).not.toContain(PASSWORD);
  });
});
