/**
 * A broker whose platform file registers a platform under another family than its trading server's, across real
 * processes: the simulator's `demo-pf4` server is made a PF5 server, and the launcher's broker registers it as the PF4
 * demo platform. The broker refuses the login answer: the platform stays down with the difference named in the
 * broker's `/healthz`, counted in `/metrics` by reason and logged at error level, its calls fail `NoConnect` with it
 * through the edge (v2 envelope, v1 503); the PF5 platform beside it is up and shows what its server declared.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerMetric } from '../support/brokerMetric.js';
import { eventually, startClient, type Client, type Envelope } from './support.js';

const PASSWORD = randomBytes(18).toString('base64url');
process.env.SIM_MANAGER_PASSWORD = PASSWORD;
const managers = [{ login: 1000, password: PASSWORD }];
const DIFFERENCE = "the trading server's family is PF5; the platform is registered as PF4";

let c: Client;
beforeAll(async () => {
  // Not waited healthy: the PF4 platform never comes up.
  c = await startClient({
    simConfig: {
      servers: [
        { name: 'demo-pf4', family: 'PF5', ticksPerSecond: 0, managers },
        { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
      ],
    },
  });
}, 90_000);
afterAll(async () => {
  await c?.stack.close();
});

type BrokerHealth = { status: string; platforms: Record<string, Record<string, unknown>> };
const brokerHealth = async () => {
  const res = await fetch(`${c.stack.brokerUrl}/healthz`);
  return { status: res.status, text: await res.clone().text(), body: (await res.json()) as BrokerHealth };
};

describe('a platform registered as PF4 at a PF5 trading server', () => {
  it("stays down with the difference named in the broker's /healthz, /metrics and log", async () => {
    const { pf4, pf5 } = c.stack.platforms;
    const health = await eventually(
      async () => {
        const h = await brokerHealth();
        return h.body.platforms[pf4]?.lastError === DIFFERENCE && h.body.platforms[pf5]?.up === true ? h : undefined;
      },
      20_000,
      100,
    );
    expect(health, "the broker's health").toBeDefined();
    expect(health!.status).toBe(503);
    expect(health!.body.status).toBe('degraded');
    expect(health!.body.platforms[pf4]).toStrictEqual({
      family: 'PF4',
      up: false,
      since: expect.any(String),
      lastError: DIFFERENCE,
    });
    expect(health!.body.platforms[pf5]).toMatchObject({
      family: 'PF5',
      up: true,
      lastError: null,
      tradingServer: {
        version: 1,
        server: 'demo-pf5',
        family: 'PF5',
        build: expect.any(Number),
        commandCount: expect.any(Number),
      },
    });
    expect((health!.body.platforms[pf5].tradingServer as { events: string[] }).events).toContain('positions');
    expect(health!.text).not.toContain(PASSWORD);

    expect(
      await brokerMetric(c.stack.brokerUrl, 'broker_login_refusals_total', { platform: pf4, reason: 'family' }),
    ).toBeGreaterThanOrEqual(1);
    expect(await brokerMetric(c.stack.brokerUrl, 'broker_login_refusals_total', { platform: pf5 })).toBe(0);
    expect(await brokerMetric(c.stack.brokerUrl, 'broker_session_up', { platform: pf4 })).toBe(0);
    const refused = c.logLines.find(
      (line) => line.startsWith('broker ') && line.includes('manager login answer refused'),
    );
    expect(refused, "the broker's log line").toBeDefined();
    expect(JSON.parse(refused!.slice('broker '.length))).toMatchObject({
      level: 'error',
      platform: pf4,
      reasons: ['family'],
      error: DIFFERENCE,
    });
  });

  it('fails its calls NoConnect with the difference through the edge, v2 and v1', async () => {
    const v2 = await c.get<Envelope>(`${c.v2pf4}/ServerTime`);
    expect(v2.status).toBe(200);
    expect(v2.body.error).toStrictEqual({
      code: 'NoConnect',
      managerCode: null,
      message: `manager login answer refused: ${DIFFERENCE}`,
    });
    const v1 = await c.get(`${c.v1pf4}/ServerTime`);
    expect(v1.status).toBe(503);
    expect(v1.body).toStrictEqual({
      errorType: 'NoConnect',
      errorCode: 'NoConnect',
      errorDescription: `manager login answer refused: ${DIFFERENCE}`,
    });
    // The PF5 platform answers.
    const pf5 = await c.get<Envelope>(`${c.v2pf5}/ServerTime`);
    expect(pf5.body.error).toBeNull();
  });
});
