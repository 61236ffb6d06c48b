/**
 * A new snapshot started by the server in mid-session (`BridgedServer.resync`, `Session.resync`): streamed to every
 * pumping session with the login's framing, change events raised from its start held until its end; never begun
 * before the previous snapshot's end nor while the server holds events (it starts once they are sent); a session
 * that does not pump is left alone; a failure closes the session with 1011.
 */
import { describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { CLOSE_CODES } from '../../shared/protocol.js';
import { kitHarness } from '../../test/support/bridge/kit.js';

const start = kitHarness();

/** Each frame as `begin`, `chunk <kind> <logins>`, `end <counts>` or `<kind> <op> <login>`. */
function summary(events: ManagerEvent[]): string[] {
  return events.map((e) => {
    const record = e.record as Record<string, unknown>;
    if (e.event !== 'resync') return `${e.event} ${e.op} ${String(record.login ?? record.symbol)}`;
    if (e.op === 'chunk')
      return `chunk ${String(record.kind)} ${(record.items as Array<{ login: number }>).map((u) => `${u.login}:${(u as { name?: string }).name}`).join(',')}`;
    if (e.op === 'end') return `end ${JSON.stringify(record.counts)}`;
    return e.op;
  });
}

const ends = (events: ManagerEvent[]) => events.filter((e) => e.event === 'resync' && e.op === 'end').length;

describe('BridgedServer.resync', () => {
  it('streams a fresh snapshot to every pumping session, holding what changes from its start until its end', async () => {
    let during: () => void = () => {};
    const { driver, server, connect } = await start({
      snapshot: () => {
        during();
        return [{ kind: 'users', rows: driver.users.map((u) => ({ ...u })) }];
      },
    });
    const pumping = await connect();
    const quiet = await connect();
    await pumping.login();
    await quiet.login({ pump: false });
    await pumping.resynced();
    // The server behind the bridge lost state the bridge never heard of: a second account came and the first renamed.
    driver.users.splice(0, 2, { login: 1, name: 'Renamed' }, { login: 3, name: 'Three' });
    during = () => {
      during = () => {};
      driver.emit('users', 'update', { login: 3, name: 'while taken' });
    };
    expect(server.resync()).toBe(1);
    driver.emit('users', 'update', { login: 1, name: 'after' });
    await pumping.waitFor(() => summary(pumping.events).length === 8, 'the second snapshot and the held events');
    expect(summary(pumping.events)).toEqual([
      'begin',
      'chunk users 1:One,2:Two',
      'end {"users":2}',
      'begin',
      'chunk users 1:Renamed,3:Three',
      'end {"users":2}',
      'users update 3',
      'users update 1',
    ]);
    expect(pumping.events[3].record).toEqual({ server: 'tiny', family: 'PF4' });
    expect(quiet.events).toEqual([]);
    expect(await quiet.ok('Ping')).toMatchObject({ time: expect.any(String) });
  });

  it('begins a snapshot asked for while one streams only after its end', async () => {
    let finish: () => void = () => {};
    let taken = 0;
    const { server, connect } = await start({
      snapshot: () => {
        taken++;
        if (taken > 1) return [{ kind: 'users', rows: [{ login: 9, name: `take${taken}` }] }];
        return new Promise((resolve) => {
          finish = () => resolve([{ kind: 'users', rows: [{ login: 1, name: 'take1' }] }]);
        });
      },
    });
    const client = await connect();
    await client.login();
    expect(server.resync()).toBe(1);
    expect(server.resync()).toBe(1);
    await client.ok('Ping');
    expect(client.events).toEqual([]);
    finish();
    await client.waitFor(() => ends(client.events) === 2, 'the second end');
    await client.ok('Ping');
    expect(summary(client.events)).toEqual([
      'begin',
      'chunk users 1:take1',
      'end {"users":1}',
      'begin',
      'chunk users 9:take2',
      'end {"users":1}',
    ]);
    expect(taken).toBe(2);
  });

  it('begins a snapshot asked for while the server holds events once they are sent', async () => {
    const { driver, server, connect } = await start();
    const client = await connect();
    await client.login();
    await client.resynced();
    server.hold();
    driver.emit('users', 'update', { login: 2, name: 'held' });
    server.resync();
    await client.ok('Ping');
    expect(client.live()).toEqual([]);
    server.release();
    await client.waitFor(() => ends(client.events) === 2, 'the second end');
    expect(summary(client.events).slice(3)).toEqual([
      'users update 2',
      'begin',
      'chunk users 1:One,2:Two',
      'end {"users":2,"ticks":0}',
    ]);
  });

  it("is a session's own too: false for one that does not pump", async () => {
    const { server, connect } = await start();
    const pumping = await connect();
    const quiet = await connect();
    await pumping.login();
    await quiet.login({ pump: false });
    await pumping.resynced();
    const [first, second] = [...server.sessions];
    expect([first.resync(), second.resync()]).toEqual([true, false]);
    await pumping.waitFor(() => ends(pumping.events) === 2, 'the second end');
    await quiet.ok('Ping');
    expect(quiet.events).toEqual([]);
  });

  it('closes a session with 1011 when the new snapshot cannot be taken', async () => {
    let taken = 0;
    const { server, connect, logged } = await start({
      snapshot: () => {
        if (taken++ > 0) throw new Error('the link is down again');
        return [{ kind: 'users', rows: [] }];
      },
    });
    const client = await connect();
    await client.login();
    await client.resynced();
    server.resync();
    await client.waitFor(() => client.closed, 'the close');
    expect([client.closeCode, client.closeReason]).toEqual([CLOSE_CODES.snapshotFailed, 'the snapshot failed']);
    expect(logged.find((e) => e.msg === 'snapshot failed, closing session')).toMatchObject({ error: 'Error' });
  });
});
