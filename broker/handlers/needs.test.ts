/**
 * Operations refused up front for what the trading server's login did not declare, through the registry's handlers on
 * a real platform (manager session and cache) against the broker's fake trading server with a narrowed capability
 * list: a handler that sends several commands sends none of them, an operation answered from the cache is refused
 * naming the event kind that fills its table, before the first login as after it; an operation whose needs were all
 * declared runs as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OperationError } from '../../shared/errors.js';
import { TICKET_TYPES } from '../../shared/catalog/v2/pf4/trades.js';
import { TradePlatform } from '../platforms/tradePlatform.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../../test/support/broker/fakeManagerServer.js';
import { declaredFirst } from './needs.js';
import { handlers } from './registry.js';

const servers: FakeManagerServer[] = [];
const platforms: TradePlatform[] = [];

afterEach(async () => {
  for (const platform of platforms.splice(0)) await platform.close();
  for (const server of servers.splice(0)) await server.close();
});

async function until(probe: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!probe()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A PF4 fake whose login declares neither `commands` nor `events`. */
async function serverWithout(commands: string[], events: string[] = []): Promise<FakeManagerServer> {
  const server = await FakeManagerServer.start('PF4');
  servers.push(server);
  const caps = server.declared.capabilities;
  caps.commands = caps.commands.filter((c) => !commands.includes(c));
  caps.events = caps.events.filter((e) => !events.includes(e));
  return server;
}

function platformOn(server: FakeManagerServer): TradePlatform {
  const platform = new TradePlatform(
    {
      id: 'a1b2c3d4-0000-4000-8000-00000000aa01',
      family: 'PF4',
      server: server.url,
      login: FAKE_MANAGER,
      password: FAKE_PASSWORD,
    },
    {},
    () => {},
  );
  platforms.push(platform);
  return platform;
}

async function failure(run: () => unknown): Promise<OperationError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof OperationError) return error;
    throw error;
  }
  throw new Error('the operation did not fail');
}

const shape = (e: OperationError) => ({
  code: e.code,
  managerCode: e.managerCode,
  message: e.message,
  notImplemented: e.notImplemented,
});
const inFiveSeconds = () => Date.now() + 5000;
/** A close of ticket 5000 naming its account: the handler reads the ticket (TradeRecordRequest) before the transaction. */
const closeOfAccount = { body: { tradeTransactionType: TICKET_TYPES[0], order: 5000, orderBy: 100000, volume: 10 } };
const NO_TRADE_TRANSACTION = {
  code: 'PF4Error',
  managerCode: null,
  notImplemented: true,
  message: 'the trading server does not implement TradeTransaction (not among the commands its login declared)',
};

describe('operations needing what the login did not declare', () => {
  it('refuses a handler sending several commands before its first one, once the session is up', async () => {
    const server = await serverWithout(['TradeTransaction']);
    const platform = platformOn(server);
    platform.start();
    await until(() => platform.state === 'up');
    const error = await failure(() =>
      handlers.get('PF4.TradeTransaction')!.run({ platform, args: closeOfAccount, deadline: inFiveSeconds() }),
    );
    expect(shape(error)).toStrictEqual(NO_TRADE_TRANSACTION);
    expect(server.received.map((r) => r.cmd)).toStrictEqual(['login']);
  });

  it('logs in first when no login declared anything yet, and refuses before the first command', async () => {
    const server = await serverWithout(['TradeTransaction']);
    const platform = platformOn(server);
    // Never started: the call itself logs in, as its first command would.
    const error = await failure(() =>
      handlers.get('PF4.TradeTransaction')!.run({
        platform,
        args: closeOfAccount,
        deadline: { sendBy: inFiveSeconds(), answerBy: inFiveSeconds() + 1000 },
      }),
    );
    expect(shape(error)).toStrictEqual(NO_TRADE_TRANSACTION);
    expect(server.received.map((r) => r.cmd)).toStrictEqual(['login']);
  });

  it('runs the same handler on a server that declared both commands', async () => {
    const server = await serverWithout([]);
    const platform = platformOn(server);
    platform.start();
    await until(() => platform.state === 'up');
    // The fake does not implement TradeRecordRequest: it answers bad data, which is the server's answer, sent.
    const error = await failure(() =>
      handlers.get('PF4.TradeTransaction')!.run({ platform, args: closeOfAccount, deadline: inFiveSeconds() }),
    );
    expect(error.notImplemented).toBe(false);
    expect(server.received.map((r) => r.cmd)).toStrictEqual(['login', 'TradeRecordRequest']);
  });

  it('refuses a cached read whose table is filled by an undeclared event kind, after the first snapshot as before it', async () => {
    const server = await serverWithout([], ['online']);
    const platform = platformOn(server);
    const online = handlers.get('PF4.OnlineGet')!;
    const refused = {
      code: 'PF4Error',
      managerCode: null,
      notImplemented: true,
      message: 'the trading server does not implement the online event (not among the event kinds its login declared)',
    };
    // Before any login: the read waits for the first snapshot, as it would, and is refused then.
    const early = failure(() => online.run({ platform, args: {}, deadline: inFiveSeconds() }));
    platform.start();
    expect(shape(await early)).toStrictEqual(refused);
    expect(platform.cache.ready).toBe(true);
    expect(shape(await failure(() => online.run({ platform, args: {}, deadline: inFiveSeconds() })))).toStrictEqual(
      refused,
    );
    // A table whose kind was declared answers from the cache.
    const user = await handlers
      .get('PF4.UserRecordGet')!
      .run({ platform, args: { login: 100003 }, deadline: inFiveSeconds() });
    expect(JSON.parse(user.json!)).toMatchObject({ login: 100003, name: 'User 100003' });
    expect(server.received.map((r) => r.cmd)).toStrictEqual(['login']);
  });

  it('leaves a handler that needs nothing as it is', () => {
    const run = () => ({ data: 1 });
    expect(declaredFirst({ commands: [], events: [] }, run)).toBe(run);
  });
});
