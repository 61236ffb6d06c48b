/**
 * A fleet of three real brokers, each platform served by its own ordered pair: PF4 by A then B, PF5 by B then C (A's
 * platforms file names PF4 only, C's PF5 only and as a cold standby, B's both). Brokers are killed one after another
 * with SIGKILL, and each loss spreads the platforms over the survivors:
 * - B killed: PF4 stays on A (it only lost its standby) and answers throughout; PF5 moves to C, which logs in to it
 *   then (it was asleep), within the takeover window, then answers every read, with the same records as before (PF4's
 *   groups, PF5's EURUSD symbol); C counts the link object's failover notice.
 * - B started again, then A killed: PF4 moves to B (C does not serve it); PF5 stays on C.
 * - C stopped with SIGTERM: it drains, and PF5 moves to B without a single read answered with an error.
 * One link object per platform (LINKS_PER_PLATFORM=1) and a failback hold-down longer than the test, so every move
 * is counted once, on the broker moved to.
 */
import { describe, expect, it } from 'vitest';
import { signalBroker } from '../../launcher/brokerSignal.js';
import { brokerMetric, stackForFile, type Envelope } from './support.js';

const A = 0,
  B = 1,
  C = 2;
const s = stackForFile({
  brokers: [{ platforms: ['pf4'] }, { platforms: ['pf4', 'pf5'] }, { platforms: ['pf5'], standby: { pf5: 'cold' } }],
  platformBrokers: { pf4: [A, B], pf5: [B, C] },
  edgeVars: { LINKS_PER_PLATFORM: '1', BROKER_FAILBACK_SECONDS: '3600' },
});

/** How long a platform may take to answer from its next broker after a loss (a heartbeat timeout and a connect). */
const TAKEOVER_MS = 8_000;

/** Reads `path` until it answers without an error or the takeover window ends; the answer and the errors seen. */
async function answeredWithin(path: string, ms = TAKEOVER_MS) {
  const until = Date.now() + ms;
  const errors: string[] = [];
  for (;;) {
    const res = await s.client.get<Envelope>(path);
    if (res.status === 200 && res.body.error === null) return { data: res.body.data, errors };
    errors.push(`${res.status} ${res.body.error?.code ?? JSON.stringify(res.body)}`);
    if (Date.now() > until) throw new Error(`${path} not answered within ${ms} ms: ${errors.slice(-3).join('; ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `count` reads of `path` in a row, each answered without an error; their data. */
async function steadyReads(path: string, count = 5) {
  const answers = [];
  for (let i = 0; i < count; i++) {
    const res = await s.client.get<Envelope>(path);
    expect(res.body.error, `${path} read ${i + 1} of ${count}`).toBeNull();
    answers.push(res.body.data);
  }
  return answers;
}

/** A broker's own /healthz body. */
const brokerHealth = (i: number) =>
  fetch(`${s.client.stack.brokerUrls[i]}/healthz`).then(
    (r) =>
      r.json() as Promise<{
        platforms: Record<string, { up: boolean; standby?: 'cold'; asleep?: boolean }>;
      }>,
  );

/** Failover notices from link objects each broker counted (null: the broker is down). */
const linkFailovers = () =>
  Promise.all(s.client.stack.brokerUrls.map((url) => brokerMetric(url, 'broker_failovers_total', { kind: 'link' })));

describe('a fleet of brokers, each platform served by an ordered pair', () => {
  it('spreads the platforms over the surviving brokers as brokers are lost, reads answered with the same records', async () => {
    const { stack } = s.client;
    const pf4Path = `${s.client.v2pf4}/GroupsGet`;
    const pf5Path = `${s.client.v2pf5}/SymbolGet/EURUSD`;
    const pf4Groups = (await steadyReads(pf4Path, 1))[0];
    const pf5Symbol = (await steadyReads(pf5Path, 1))[0];
    expect((pf4Groups as Array<{ group: string }>).length).toBeGreaterThan(0);
    expect((pf4Groups as Array<{ group: string }>).every((g) => typeof g.group === 'string' && g.group !== '')).toBe(
      true,
    );
    expect(pf5Symbol).toMatchObject({ symbol: 'EURUSD' });
    // Each platform went to the first broker of its pair: nobody moved, and C's cold standby never logged in.
    expect(await linkFailovers()).toEqual([0, 0, 0]);
    expect((await brokerHealth(C)).platforms[stack.platforms.pf5]).toMatchObject({
      up: false,
      standby: 'cold',
      asleep: true,
    });

    // B lost: PF4 (on A) answers throughout; PF5 moves to C.
    const killB = await signalBroker(stack, B, 'SIGKILL');
    expect(killB.exited).toBe('signal SIGKILL');
    expect(await steadyReads(pf4Path)).toEqual(Array(5).fill(pf4Groups));
    const pf5After = await answeredWithin(pf5Path);
    expect(pf5After.data).toEqual(pf5Symbol);
    expect(await steadyReads(pf5Path)).toEqual(Array(5).fill(pf5Symbol));
    expect(await linkFailovers()).toEqual([0, null, 1]);
    expect((await brokerHealth(C)).platforms[stack.platforms.pf5]).toMatchObject({
      up: true,
      standby: 'cold',
      asleep: false,
    });
    const reasonsOnC = await Promise.all(
      ['lost', 'hung', 'unreachable'].map((reason) =>
        brokerMetric(stack.brokerUrls[C], 'broker_failovers_total', { kind: 'link', reason }),
      ),
    );
    expect(reasonsOnC.reduce((a, b) => a! + b!, 0)).toBe(1);

    // B back (PF4's standby again, PF5's preferred broker, which it keeps away from for the hold-down), then A lost:
    // PF4 moves to B; PF5 stays on C.
    await stack.restartBroker(B);
    const bReady = await answeredReady(stack.brokerUrls[B]);
    expect(bReady).toBe(true);
    await signalBroker(stack, A, 'SIGKILL');
    expect(await steadyReads(pf5Path)).toEqual(Array(5).fill(pf5Symbol));
    const pf4After = await answeredWithin(pf4Path);
    expect(pf4After.data).toEqual(pf4Groups);
    expect(await steadyReads(pf4Path)).toEqual(Array(5).fill(pf4Groups));
    expect(await linkFailovers()).toEqual([null, 1, 1]);

    // C drains (SIGTERM): PF5 moves to B at once, every read answered meanwhile.
    const stopped = stack.stopBroker(C, 'SIGTERM');
    let exited = false;
    void stopped.then(() => {
      exited = true;
    });
    const duringDrain = [];
    while (!exited) duringDrain.push(...(await steadyReads(pf5Path, 1)));
    await stopped;
    expect(duringDrain.length).toBeGreaterThan(0);
    expect(duringDrain).toEqual(Array(duringDrain.length).fill(pf5Symbol));
    expect(await steadyReads(pf5Path)).toEqual(Array(5).fill(pf5Symbol));
    expect(await linkFailovers()).toEqual([null, 2, null]);
    expect(
      await brokerMetric(stack.brokerUrls[B], 'broker_failovers_total', { kind: 'link', reason: 'draining' }),
    ).toBe(1);
  }, 40_000);
});

/** Waits (up to 10 s) for a broker's /readyz to answer 200. */
async function answeredReady(url: string): Promise<boolean> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
