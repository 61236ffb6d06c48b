/**
 * The refusal of an operation whose manager command the trading server's login did not declare, as a client sees it
 * through the edge: the real worker in workerd in front of a real broker (in this process) whose trading server is
 * the broker's fake, declaring every command but `AdmBalanceCheck`. v2 answers the platform family's error with no
 * manager code and the message naming the command; v1 answers 501 with its general error body carrying the message;
 * the command never reaches the trading server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type RunningBroker } from '../../broker/index.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../support/broker/fakeManagerServer.js';
import { PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { until } from '../support/until.js';

/** The secret startTestEdge gives the edge for its broker links. */
const BROKER_SECRET = 'test-broker-secret';
const MESSAGE = 'the trading server does not implement AdmBalanceCheck (not among the commands its login declared)';

let fake: FakeManagerServer;
let broker: RunningBroker;
let edge: TestEdge;
let token: string;

beforeAll(async () => {
  fake = await FakeManagerServer.start('PF4');
  fake.declared.capabilities.commands = fake.declared.capabilities.commands.filter((c) => c !== 'AdmBalanceCheck');
  broker = await startBroker({
    secret: BROKER_SECRET,
    platforms: [{ id: PF4_A, family: 'PF4', server: fake.url, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
  });
  await until(() => broker.platforms.get(PF4_A)!.session.up, "the broker's session up", 10_000);
  edge = await startTestEdge({ vars: { BROKER_URL: `http://127.0.0.1:${broker.port}` } });
  token = await edge.token();
}, 60_000);

afterAll(async () => {
  await edge?.close();
  await broker?.close();
  await fake?.close();
});

const get = async (path: string) => {
  const res = await fetch(new URL(path, edge.url), { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('an operation needing a command the trading server did not declare', () => {
  it("v2: the family's error without a manager code, naming the command", async () => {
    const res = await get(`/api/v2/PF4/${PF4_A}/AdmBalanceCheck/100001`);
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({
      data: null,
      error: { code: 'PF4Error', managerCode: null, message: MESSAGE },
      meta: { activityId: expect.any(String) },
    });
    expect(fake.count('AdmBalanceCheck')).toBe(0);
  });

  it('v1: 501 with the general error body carrying the message', async () => {
    const res = await get(`/api/PF4/${PF4_A}/AdmBalanceCheck/100001`);
    expect(res).toStrictEqual({
      status: 501,
      body: { errorType: 'PF4Error', errorCode: 'PF4Error', errorDescription: MESSAGE },
    });
    expect(fake.count('AdmBalanceCheck')).toBe(0);
  });

  it('leaves a declared command as it was: sent, and answered by the trading server', async () => {
    // The fake answers UserRecordRequest for a known login.
    const res = await get(`/api/v2/PF4/${PF4_A}/UserRecordRequest/100001`);
    expect(res.body).toMatchObject({ data: { login: 100001 }, error: null });
    expect(fake.count('UserRecordRequest')).toBeGreaterThanOrEqual(1);
  });
});
