/**
 * The bound on failed password checks, below the edge, against the real trading-server simulator: with the default
 * bound (5 failures per login per 60 s) the sixth failed check of one login is refused without reaching the trading
 * server, on both families, while other logins are still checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PF4_RESULT, PF5_RESULT } from '../shared/resultCodes.js';
import { startSim, type RunningSim } from '../sim/index.js';
import { startBroker, type RunningBroker } from './index.js';
import { eventually, failed, TestLink } from '../test/support/broker/linkClient.js';

const SECRET = 'password-checks-link-secret';
const PASSWORD = 'password-checks-manager-password';
const PF4_ID = '6a0c3d1e-2f4b-4c5d-8e6f-7a8b9c0d0014';
const PF5_ID = '6a0c3d1e-2f4b-4c5d-8e6f-7a8b9c0d0015';

let sim: RunningSim;
let broker: RunningBroker;
let link: TestLink;

/** Commands the simulated server answered with an error: each failed password check that reached it is one. */
const serverErrors = (name: string) => sim.tradingServers.get(name)!.counters.commandErrors;

beforeAll(async () => {
  sim = await startSim({ managerPassword: PASSWORD, seed: 11 });
  const server = (name: string) => `ws://127.0.0.1:${sim.port}/${name}`;
  broker = await startBroker({
    secret: SECRET,
    platforms: [
      { id: PF4_ID, family: 'PF4', server: server('demo-pf4'), login: 1000, password: PASSWORD },
      { id: PF5_ID, family: 'PF5', server: server('demo-pf5'), login: 1000, password: PASSWORD },
    ],
    session: { backoff: { baseMs: 50, capMs: 500 } },
  });
  link = await TestLink.open(broker.port, SECRET);
  await eventually(
    () => broker.platforms.get(PF4_ID)!.cache.ready && broker.platforms.get(PF5_ID)!.cache.ready,
    10_000,
  );
});
afterAll(async () => {
  await link?.close();
  await broker?.close();
  await sim?.close();
});

/** Two logins of the platform's cached accounts. */
function twoLogins(platform: string): [number, number] {
  const users = broker.platforms.get(platform)!.cache.table('users')!.page(undefined, 2).items;
  return [users[0].login as number, users[1].login as number];
}

describe('failed password checks through the broker', () => {
  it('PF4: refuses the sixth failed check of a login without asking the server, and still checks another login', async () => {
    const [login, other] = twoLogins(PF4_ID);
    const check = (who: number, password: string) =>
      link.call(PF4_ID, 'PF4.UserPasswordCheck', { login: who, body: password });
    const before = serverErrors('demo-pf4');
    for (let i = 1; i <= 5; i++) {
      const answer = failed(await check(login, `wrong-${i}`));
      expect(answer).toMatchObject({ data: false, error: { code: 'PF4Error', managerCode: PF4_RESULT.InvalidData } });
    }
    expect(serverErrors('demo-pf4')).toBe(before + 5);

    const sixth = failed(await check(login, 'wrong-6'));
    expect(sixth.error).toStrictEqual({
      code: 'PF4Error',
      managerCode: PF4_RESULT.TooFrequent,
      message: `too many failed password checks of login ${login}: at most 5 per 60 s; retry after ${sixth.retryAfterSeconds} s`,
    });
    // Whole seconds until the first failure leaves the 60 s window.
    expect(sixth.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(sixth.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(sixth.data).toBeUndefined();
    // The right password is refused too while the window lasts: the refusal reveals nothing about it.
    expect(failed(await check(login, `demo-${login}`)).error.managerCode).toBe(PF4_RESULT.TooFrequent);
    expect(serverErrors('demo-pf4')).toBe(before + 5);

    expect(failed(await check(other, 'wrong')).error.managerCode).toBe(PF4_RESULT.InvalidData);
    expect(serverErrors('demo-pf4')).toBe(before + 6);
    expect(await check(other, `demo-${other}`)).toMatchObject({ ok: true, data: true });
  });

  it('PF5: refuses the sixth failed check of a login with ErrFrequent, whichever password type it names', async () => {
    const [login, other] = twoLogins(PF5_ID);
    const check = (who: number, type: string, password: string) =>
      link.call(PF5_ID, 'PF5.UserPasswordCheck', { login: who, type, body: password });
    const before = serverErrors('demo-pf5');
    for (let i = 1; i <= 5; i++) {
      const answer = failed(await check(login, i % 2 ? 'Main' : 'Investor', `Wrong${i}xx`));
      expect(answer.error).toMatchObject({ code: 'PF5Error', managerCode: PF5_RESULT.UsrInvalidPassword });
    }
    const sixth = failed(await check(login, 'Investor', 'Wrong6xx'));
    expect(sixth.error).toMatchObject({ code: 'PF5Error', managerCode: PF5_RESULT.ErrFrequent });
    expect(sixth.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(serverErrors('demo-pf5')).toBe(before + 5);
    expect(await check(other, 'Main', `Demo${other}a`)).toMatchObject({ ok: true, data: true });
  });
});
