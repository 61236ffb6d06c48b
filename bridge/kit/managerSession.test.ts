/**
 * A manager session over the kit, seen from the broker's side of a real WebSocket with a tiny in-test driver: the
 * login (checked arguments, version negotiation, the answer built from the driver, refusals), dispatch (Ping, unknown
 * commands, result codes, the fixed internal-error message, async handlers, rights), the snapshot in the documented
 * order with change events held until its end, coalescing, the held-events and slow-consumer bounds, bad frames.
 */
import { describe, expect, it } from 'vitest';
import { CLOSE_CODES, RESYNC_CHUNK } from '../../shared/protocol.js';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';
import { CLOSE_SNAPSHOT_FAILED } from './managerSession.js';
import { KitClient, kitHarness, PASSWORD } from '../../test/support/bridge/kit.js';

const start = kitHarness();

describe('login', () => {
  it("answers with the driver's server, family, build, rights and capabilities, Ping among the commands", async () => {
    const { connect } = await start();
    const client = await connect();
    expect((await client.login({ pump: false, versions: [1] })).result).toEqual({
      version: 1,
      server: 'tiny',
      family: 'PF4',
      build: 7,
      rights: ['admin', 'manager'],
      capabilities: { commands: ['Boom', 'Count', 'Ping', 'Slow', 'UserGet'], events: ['users', 'ticks'] },
    });
  });

  it('takes a login without versions as version 1, and picks the newest common version', async () => {
    const { connect } = await start();
    expect(((await (await connect()).login({ pump: false })).result as { version: number }).version).toBe(1);
    expect(
      ((await (await connect()).login({ pump: false, versions: [1, 7] })).result as { version: number }).version,
    ).toBe(1);
  });

  it('refuses a login without a common version with the bad-arguments code naming both lists', async () => {
    const { connect } = await start();
    const client = await connect();
    expect((await client.login({ versions: [2, 3] })).error).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'none of the protocol versions 2, 3 is spoken here (1)',
    });
    // The session stays open and may log in again with a version it shares.
    expect((await client.login({ pump: false })).result).toMatchObject({ version: 1 });
  });

  it('names the field of a malformed login, never echoing the password', async () => {
    const { connect } = await start();
    const client = await connect();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ login: 'x' }, 'login must be an integer from 1 to 9007199254740991'],
      [{ login: 0 }, 'login must be an integer from 1 to 9007199254740991'],
      [{ password: 42 }, 'password must be a string of at most 1024 characters'],
      [{ pump: 'yes' }, 'pump must be a boolean'],
      [{ versions: [] }, 'versions must list the protocol versions the client speaks (1 to 16 integers of at least 1)'],
      [
        { versions: [0] },
        'versions must list the protocol versions the client speaks (1 to 16 integers of at least 1)',
      ],
    ];
    for (const [args, message] of cases) {
      expect((await client.login(args)).error, JSON.stringify(args)).toEqual({ code: PF4_RESULT.InvalidData, message });
    }
    const long = 'p'.repeat(1025);
    const error = (await client.login({ password: long })).error!;
    expect(error.message).not.toContain('ppp');
  });

  it("answers a refused login with the driver's code and message, and counts it", async () => {
    const refused: Array<[number, number]> = [];
    const { connect } = await start({ observe: { loginRefused: (login, code) => refused.push([login, code]) } });
    const client = await connect();
    expect((await client.login({ password: 'wrong' })).error).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'invalid manager login or password',
    });
    expect(refused).toEqual([[1000, PF4_RESULT.InvalidData]]);
  });

  it('takes an asynchronous authenticate', async () => {
    const { connect } = await start({
      authenticate: ({ password }) =>
        Promise.resolve(
          password === PASSWORD
            ? { ok: true, rights: ['admin'] }
            : { ok: false, code: 64, message: 'manager 1000 is disabled' },
        ),
    });
    const client = await connect();
    expect((await client.login({ password: 'other' })).error).toEqual({
      code: 64,
      message: 'manager 1000 is disabled',
    });
    expect((await client.login({ pump: false })).result).toMatchObject({ rights: ['admin'] });
  });

  it("refuses a second login, and every command before the first with the family's no-rights code", async () => {
    const { connect } = await start();
    const client = await connect();
    expect(await client.fails('Ping')).toEqual({
      code: PF4_RESULT.NotEnoughRights,
      message: 'Ping needs a logged-in manager session',
    });
    expect((await client.fails('UserGet', { login: 1 })).code).toBe(PF4_RESULT.NotEnoughRights);
    await client.login({ pump: false });
    expect((await client.login({ pump: false })).error).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'this session is already logged in',
    });
  });

  it('uses the PF5 codes for a PF5 driver', async () => {
    const { connect } = await start({ family: 'PF5', events: ['users'], snapshot: () => [] });
    const client = await connect();
    expect((await client.fails('Ping')).code).toBe(PF5_RESULT.ErrPermissions);
    await client.login({ pump: false });
    expect((await client.fails('Nope')).code).toBe(PF5_RESULT.ErrParams);
    expect((await client.fails('Boom')).code).toBe(PF5_RESULT.Error);
  });
});

describe('commands', () => {
  it('answers Ping with the time, itself', async () => {
    const { connect } = await start();
    const client = await connect();
    await client.login({ pump: false });
    const { time } = await client.ok<{ time: string }>('Ping');
    expect(new Date(time).toISOString()).toBe(time);
  });

  it('answers a command outside the capability list with the bad-arguments code and "unknown command"', async () => {
    const { connect } = await start();
    const client = await connect();
    await client.login({ pump: false });
    expect(await client.fails('NoSuchThing')).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'unknown command NoSuchThing',
    });
    // Names an object has of its own are not commands either.
    expect(await client.fails('constructor')).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'unknown command constructor',
    });
    expect(await client.fails('')).toEqual({ code: PF4_RESULT.InvalidData, message: 'cmd must be a non-empty string' });
  });

  it("answers a handler's result, its result code, and a fixed message for anything else", async () => {
    const logged: Array<Record<string, unknown>> = [];
    const { connect } = await start({ log: (entry) => logged.push(entry) });
    const client = await connect();
    await client.login({ pump: false });
    expect(await client.ok('UserGet', { login: 2 })).toEqual({ login: 2, name: 'Two' });
    expect(await client.fails('UserGet', { login: 9 })).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'login 9 not found',
    });
    expect(await client.fails('Boom')).toEqual({
      code: PF4_RESULT.UnhandledException,
      message: 'internal error in Boom',
    });
    expect(logged.find((e) => e.msg === 'command failed')).toMatchObject({ cmd: 'Boom' });
    expect((await client.call('UserGet', [] as unknown as Record<string, unknown>)).error).toEqual({
      code: PF4_RESULT.InvalidData,
      message: 'args must be an object',
    });
  });

  it('answers asynchronous handlers, each request once, with per-session state', async () => {
    const { connect } = await start();
    const client = await connect();
    await client.login({ pump: false });
    const answers = await Promise.all([
      client.ok('Slow', { value: 'a' }),
      client.ok('Count'),
      client.ok('Count'),
      client.ok('Slow'),
    ]);
    expect(answers).toEqual([{ echoed: 'a' }, 1, 2, { echoed: null }]);
    const other = await connect();
    await other.login({ pump: false });
    expect(await other.ok('Count')).toBe(1);
    const answerFrames = client.frames.filter((f) => !f.startsWith('{"event"'));
    expect(answerFrames).toHaveLength(5);
    for (const frame of answerFrames) expect(frame).toMatch(/^\{"id":\d+,"(result|error)"/);
  });

  it('refuses a command authorize refuses, and drops the connection with 1008 where it says so', async () => {
    const { connect } = await start({
      authorize: (cmd, _args, session) => {
        if (session.rights.has(cmd)) return undefined;
        return cmd === 'Count'
          ? { message: 'Count needs the Count right', drop: true }
          : { message: `${cmd} needs the ${cmd} right` };
      },
    });
    const client = await connect();
    await client.login({ pump: false });
    expect(await client.fails('UserGet', { login: 1 })).toEqual({
      code: PF4_RESULT.NotEnoughRights,
      message: 'UserGet needs the UserGet right',
    });
    const dropped = client.call('Count');
    await client.waitFor(() => client.closed, 'the close');
    expect([client.closeCode, client.closeReason]).toEqual([CLOSE_CODES.rightDropped, 'Count needs the Count right']);
    expect(await Promise.race([dropped, new Promise((r) => setImmediate(() => r('unanswered')))])).toBe('unanswered');
  });

  it('holds a request its gate holds, and swallows one it refuses', async () => {
    let open: () => void = () => {};
    const { connect } = await start({
      gate: (request) => {
        if (request.cmd === 'Slow') return false;
        if (request.cmd === 'Count')
          return new Promise<boolean>((resolve) => {
            open = () => resolve(true);
          });
        return undefined;
      },
    });
    const client = await connect();
    await client.login({ pump: false });
    const held = client.ok('Count');
    void client.call('Slow');
    expect(await client.ok('UserGet', { login: 1 })).toEqual({ login: 1, name: 'One' });
    open();
    expect(await held).toBe(1);
    expect(client.frames.some((f) => f.startsWith('{"id":3,'))).toBe(false);
  });
});

describe('the snapshot', () => {
  it('streams the parts in the documented order, in chunks, with held events released after end in order', async () => {
    const users = Array.from({ length: RESYNC_CHUNK + 1 }, (_, i) => ({ login: i + 1, name: `u${i + 1}` }));
    let emitDuringSnapshot: () => void = () => {};
    const { driver, connect } = await start({
      events: ['users', 'ticks', 'symbols'],
      // Out of order on purpose, with a change reported while the snapshot is read.
      snapshot: () => {
        emitDuringSnapshot();
        return [
          { kind: 'symbols', rows: [{ symbol: 'EURUSD' }] },
          { kind: 'users', rows: users, toWire: (u: { login: number }) => ({ login: u.login }) },
        ];
      },
    });
    emitDuringSnapshot = () => driver.emit('users', 'update', { login: 1, name: 'during' });
    const client = await connect();
    expect((await client.login()).result).toMatchObject({ server: 'tiny' });
    driver.emit('ticks', 'update', { symbol: 'EURUSD', bid: 1 });
    await client.resynced();
    await client.waitFor(() => client.live().length === 2, 'the held events');
    const summary = client.events.map((e) =>
      e.event === 'resync'
        ? `${e.op}${e.op === 'chunk' ? ` ${(e.record as { kind: string }).kind} ${(e.record as { items: unknown[] }).items.length}` : ''}`
        : `${e.event} ${e.op}`,
    );
    expect(summary).toEqual([
      'begin',
      `chunk users ${RESYNC_CHUNK}`,
      'chunk users 1',
      'chunk symbols 1',
      'end',
      'users update',
      'ticks update',
    ]);
    expect(client.events[0].record).toEqual({ server: 'tiny', family: 'PF4' });
    expect(client.events[4].record).toEqual({ counts: { users: RESYNC_CHUNK + 1, symbols: 1 } });
    expect((client.events[1].record as { items: unknown[] }).items[0]).toEqual({ login: 1 });
    // The login's answer came before the snapshot's first frame.
    expect(client.frames[0]).toMatch(/^\{"id":1,"result"/);
  });

  it('takes an asynchronous snapshot, holding what changes while it is read, and closes with 1011 when it fails', async () => {
    let finish: (rows: unknown[]) => void = () => {};
    let taken = 0;
    const { driver, connect } = await start({
      snapshot: () =>
        taken++ === 0
          ? new Promise((resolve) => {
              finish = (rows) => resolve([{ kind: 'users', rows }]);
            })
          : Promise.reject(new Error('the server went away')),
    });
    const client = await connect();
    await client.login();
    driver.emit('users', 'update', { login: 1, name: 'while reading' });
    await client.ok('Ping');
    expect(client.events).toEqual([]);
    finish([{ login: 1, name: 'One' }]);
    await client.resynced();
    await client.waitFor(() => client.live().length === 1, 'the held event');
    expect(client.events.map((e) => `${e.event} ${e.op}`)).toEqual([
      'resync begin',
      'resync chunk',
      'resync end',
      'users update',
    ]);

    const failing = await connect();
    expect((await failing.login()).result).toMatchObject({ server: 'tiny' });
    await failing.waitFor(() => failing.closed, 'the close');
    expect([failing.closeCode, failing.closeReason]).toEqual([CLOSE_SNAPSHOT_FAILED, 'the snapshot failed']);
  });

  it('fails a login whose snapshot holds a kind the server does not push', async () => {
    const { connect } = await start({ snapshot: () => [{ kind: 'trades', rows: [] }] });
    const client = await connect();
    expect((await client.login()).error).toEqual({
      code: PF4_RESULT.UnhandledException,
      message: 'internal error in login',
    });
    expect((await client.fails('Ping')).code).toBe(PF4_RESULT.NotEnoughRights);
  });

  it('sends nothing unasked to a session that logged in with pump false', async () => {
    const { driver, connect } = await start();
    const client = await connect();
    await client.login({ pump: false });
    driver.emit('users', 'update', { login: 1, name: 'x' });
    await client.ok('Ping');
    expect(client.events).toEqual([]);
  });
});

describe('holding change events', () => {
  it("coalesces held events of a key to the last, followed by the driver's summary, other events first in order", async () => {
    const { driver, server, connect } = await start({
      coalesceKey: (kind, record) => (kind === 'ticks' ? (record as { symbol: string }).symbol : undefined),
      coalescedSummary: (symbol) => ({ kind: 'users', op: 'update', record: { summaryOf: symbol } }),
    });
    const client = await connect();
    await client.login();
    await client.resynced();
    server.hold();
    driver.emit('ticks', 'update', { symbol: 'A', bid: 1 });
    driver.emit('users', 'update', { login: 1, name: 'first' });
    driver.emit('ticks', 'update', { symbol: 'B', bid: 10 });
    driver.emit('ticks', 'update', { symbol: 'A', bid: 2 });
    driver.emit('users', 'update', { login: 2, name: 'second' });
    driver.emit('ticks', 'update', { symbol: 'A', bid: 3 });
    await client.ok('Ping');
    expect(client.live()).toEqual([]);
    server.release();
    await client.waitFor(() => client.live().length === 5, 'the released events');
    expect(client.live().map((e) => e.record)).toEqual([
      { login: 1, name: 'first' },
      { login: 2, name: 'second' },
      { symbol: 'A', bid: 3 },
      { symbol: 'B', bid: 10 },
      { summaryOf: 'A' },
    ]);
  });

  it('closes a session holding more events than its bound with 1013', async () => {
    const { driver, server, connect } = await start({}, { maxHeldEvents: 3 });
    const client = await connect();
    await client.login();
    await client.resynced();
    server.hold();
    for (let i = 0; i < 3; i++) driver.emit('users', 'update', { login: 1, name: `n${i}` });
    await client.ok('Ping');
    expect(client.closed).toBe(false);
    driver.emit('users', 'update', { login: 1, name: 'one too many' });
    await client.waitFor(() => client.closed, 'the close');
    expect([client.closeCode, client.closeReason]).toEqual([CLOSE_CODES.tooSlow, 'too many pending events']);
    expect(server.sessions.size).toBe(0);
  });

  it('closes a pumping session that stops reading once more than its bound waits, and leaves a reading one alone', async () => {
    const logged: string[] = [];
    const { driver, server, connect } = await start(
      { log: (e) => logged.push(e.msg as string) },
      { maxBuffered: 1024 * 1024 },
    );
    const slow = await connect();
    const reader = await connect();
    for (const client of [slow, reader]) {
      await client.login();
      await client.resynced();
    }
    slow.ws.pause();
    const name = 'x'.repeat(256 * 1024);
    for (let burst = 0; !logged.includes('manager too slow, closing session'); burst++) {
      if (burst > 256) throw new Error('the paused session was never closed'); // 64 MiB: only a broken bound gets here
      const seen = reader.live().length;
      for (let i = 0; i < 4; i++) driver.emit('users', 'update', { login: 1, name });
      await reader.waitFor(() => reader.live().length >= seen + 4, 'the reader to take a burst');
    }
    expect(server.sessions.size).toBe(1);
    expect(await reader.ok('Ping')).toMatchObject({ time: expect.any(String) });
    slow.ws.resume();
    await slow.waitFor(() => slow.closed, 'the close', 20_000);
    expect([slow.closeCode, slow.closeReason]).toEqual([CLOSE_CODES.tooSlow, 'consumer too slow']);
  });
});

describe('frames and closes', () => {
  it('closes with 1007 on a frame that is not JSON text, a binary frame, and a request without a numeric id', async () => {
    const { connect } = await start();
    const sends: Array<[string, (c: KitClient) => void]> = [
      ['not JSON', (c) => c.ws.send('{not json')],
      ['binary', (c) => c.ws.send(Buffer.from('{"id":1,"cmd":"Ping"}'))],
      ['no id', (c) => c.ws.send('{"cmd":"Ping"}')],
      ['not an object', (c) => c.ws.send('[1]')],
    ];
    for (const [what, send] of sends) {
      const client = await connect();
      send(client);
      await client.waitFor(() => client.closed, what);
      expect(client.closeCode, what).toBe(CLOSE_CODES.badFrame);
    }
  });

  it('closes every session with 1012 for a restart', async () => {
    const closed: number[] = [];
    const { server, connect } = await start({ closeSession: () => closed.push(1) });
    const a = await connect();
    const b = await connect();
    await a.login({ pump: false });
    server.restart();
    await a.waitFor(() => a.closed, 'a to close');
    await b.waitFor(() => b.closed, 'b to close');
    expect([a.closeCode, b.closeCode]).toEqual([CLOSE_CODES.restart, CLOSE_CODES.restart]);
    expect(closed).toEqual([1, 1]);
  });
});
