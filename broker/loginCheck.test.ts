/**
 * What an operator and an edge see of the broker's check of a trading server's login answer, on a whole broker
 * in-process against the fake trading server: a server of another family keeps its platform down with the difference
 * named in `/healthz`, counted by reason in `/metrics` and logged at error level, and calls fail `NoConnect` with it
 * (nothing but logins sent); once the server answers as registered the platform comes up with the usual backoff and
 * `/healthz` shows what it declared (`?commands` lists the commands, and nothing shows the password); an operation
 * needing an undeclared command is answered, on the link, refused and marked not implemented.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker, type RunningBroker } from './index.js';
import type { LogFields, Logger, LogLevel } from './observability/log.js';
import {
  FAKE_BUILD,
  FAKE_MANAGER,
  FAKE_PASSWORD,
  FAKE_RIGHTS,
  FakeManagerServer,
} from '../test/support/broker/fakeManagerServer.js';
import { eventually, failed, TestLink } from '../test/support/broker/linkClient.js';

const SECRET = 'login-check-link-secret';
const PLATFORM = '5c4d3e2f-1a0b-4c9d-8e7f-60504030201a';
const FAST = { backoff: { baseMs: 20, capMs: 100 }, pingIntervalMs: 1000 };

const fakes: FakeManagerServer[] = [];
const brokers: RunningBroker[] = [];
const links: TestLink[] = [];
afterEach(async () => {
  for (const link of links.splice(0)) await link.close();
  for (const broker of brokers.splice(0)) await broker.close();
  for (const fake of fakes.splice(0)) await fake.close();
});

/** A metric's value from the exposition text, by name and label fragments. */
function metric(text: string, name: string, ...labels: string[]): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((f) => l.includes(f)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function brokerOn(fake: FakeManagerServer, log?: Logger): Promise<RunningBroker> {
  const broker = await startBroker({
    secret: SECRET,
    session: FAST,
    ...(log ? { log } : {}),
    platforms: [
      {
        id: PLATFORM,
        family: 'PF4',
        server: fake.url,
        login: FAKE_MANAGER,
        password: FAKE_PASSWORD,
        minBuild: 1000,
        requiredRights: ['trades'],
      },
    ],
  });
  brokers.push(broker);
  return broker;
}

const health = async (broker: RunningBroker, query = '') => {
  const res = await fetch(`http://127.0.0.1:${broker.port}/healthz${query}`);
  return {
    status: res.status,
    text: await res.clone().text(),
    body: (await res.json()) as { status: string; platforms: Record<string, Record<string, unknown>> },
  };
};

describe('a trading server whose login answer does not fit the platform', () => {
  it('keeps the platform down naming the difference in /healthz and /metrics, and comes up once the server is fixed', async () => {
    const fake = await FakeManagerServer.start('PF4');
    fakes.push(fake);
    fake.declared.family = 'PF5';
    const logged: Array<{ level: LogLevel; fields: LogFields }> = [];
    const log = Object.assign(
      (level: LogLevel, fields: LogFields) => {
        logged.push({ level, fields });
      },
      { minLevel: 'info' as const },
    );
    const broker = await brokerOn(fake, log);
    const difference = "the trading server's family is PF5; the platform is registered as PF4";

    const down = await eventually(async () => {
      const h = await health(broker);
      return h.body.platforms[PLATFORM].lastError === difference ? h : undefined;
    }, 10_000);
    expect(down.status).toBe(503);
    expect(down.body).toStrictEqual({
      status: 'degraded',
      platforms: { [PLATFORM]: { family: 'PF4', up: false, since: expect.any(String), lastError: difference } },
    });
    const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    expect(
      metric(metrics, 'broker_login_refusals_total', `platform="${PLATFORM}"`, 'reason="family"'),
    ).toBeGreaterThanOrEqual(1);
    expect(metric(metrics, 'broker_session_up', `platform="${PLATFORM}"`)).toBe(0);
    expect(logged.find((l) => l.fields.msg === 'manager login answer refused')).toStrictEqual({
      level: 'error',
      fields: {
        msg: 'manager login answer refused',
        platform: PLATFORM,
        server: fake.url,
        reasons: ['family'],
        error: difference,
      },
    });

    // A call while down fails as on any down session, carrying the difference, and sends nothing but a login.
    const link = await TestLink.open(broker.port, SECRET);
    links.push(link);
    const call = failed(await link.call(PLATFORM, 'ServerTime', {}, 3000));
    expect(call.error).toStrictEqual({
      code: 'NoConnect',
      managerCode: null,
      message: `manager login answer refused: ${difference}`,
    });
    expect(new Set(fake.received.map((r) => r.cmd))).toStrictEqual(new Set(['login']));
    expect(fake.logins).toBeGreaterThanOrEqual(2);

    // The bridge redeployed: the next login (backoff) is accepted.
    fake.declared.family = 'PF4';
    const up = await eventually(async () => {
      const h = await health(broker);
      return h.status === 200 ? h : undefined;
    }, 10_000);
    expect(up.body.platforms[PLATFORM]).toStrictEqual({
      family: 'PF4',
      up: true,
      since: expect.any(String),
      lastError: null,
      tradingServer: {
        version: 1,
        server: 'fake',
        family: 'PF4',
        build: FAKE_BUILD,
        rights: [...FAKE_RIGHTS],
        events: fake.declared.capabilities.events,
        commandCount: fake.declared.capabilities.commands.length,
      },
    });
    const listed = await health(broker, '?commands');
    expect((listed.body.platforms[PLATFORM].tradingServer as { commands: string[] }).commands).toStrictEqual(
      fake.declared.capabilities.commands,
    );
    expect(listed.text).not.toContain(FAKE_PASSWORD);
  });

  it('refuses a build under minBuild and rights short of requiredRights, naming both', async () => {
    const fake = await FakeManagerServer.start('PF4');
    fakes.push(fake);
    fake.declared.build = 900;
    fake.declared.rights = ['admin'];
    const broker = await brokerOn(fake);
    const difference =
      "the trading server's build is 900; the platform requires at least build 1000 (minBuild); " +
      `manager ${FAKE_MANAGER} lacks the right trades that the platform requires (requiredRights)`;
    await eventually(
      async () => (await health(broker)).body.platforms[PLATFORM].lastError === difference || undefined,
      10_000,
    );
    const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    expect(
      metric(metrics, 'broker_login_refusals_total', `platform="${PLATFORM}"`, 'reason="build"'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metric(metrics, 'broker_login_refusals_total', `platform="${PLATFORM}"`, 'reason="rights"'),
    ).toBeGreaterThanOrEqual(1);
    expect(metric(metrics, 'broker_login_refusals_total', `platform="${PLATFORM}"`, 'reason="family"')).toBeUndefined();
  });
});

describe('an operation needing an undeclared command, on the link', () => {
  it("is refused with the family's error, no manager code, marked not implemented, and nothing is sent", async () => {
    const fake = await FakeManagerServer.start('PF4');
    fakes.push(fake);
    fake.declared.capabilities.commands = fake.declared.capabilities.commands.filter((c) => c !== 'UserRecordNew');
    const broker = await brokerOn(fake);
    await eventually(async () => (await health(broker)).status === 200 || undefined, 10_000);
    const link = await TestLink.open(broker.port, SECRET);
    links.push(link);
    const answer = failed(
      await link.call(PLATFORM, 'PF4.UserRecordNew', { body: { name: 'New', group: 'demo' } }, 3000),
    );
    expect(answer).toStrictEqual({
      id: expect.any(Number),
      ok: false,
      notImplemented: true,
      error: {
        code: 'PF4Error',
        managerCode: null,
        message: 'the trading server does not implement UserRecordNew (not among the commands its login declared)',
      },
    });
    expect(fake.count('UserRecordNew')).toBe(0);
  });
});
