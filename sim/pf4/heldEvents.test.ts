/**
 * Events held while the server is frozen reach a pumping consumer in order and without losing what the coalesced
 * ticks moved: ticks of a symbol never go back in time, a command parked by the freeze announces its changes after
 * the held ones, and a symbol whose held ticks were coalesced is followed by its summary (symbolInfo), which carries
 * the day's high and low of the ticks the consumer never saw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { startSim, type RunningSim } from '../index.js';
import { ManagerClient, postControl } from '../../test/support/sim/managerClient.js';

const PASSWORD = 'held-password';
let sim: RunningSim;
const clients: ManagerClient[] = [];

beforeAll(async () => {
  sim = await startSim({
    config: {
      servers: [
        {
          name: 'busy-pf4',
          family: 'PF4',
          accounts: 10,
          trades: 0,
          symbols: 3,
          ticksPerSecond: 60,
          managers: [{ login: 1000, password: PASSWORD }],
        },
      ],
    },
  });
});
afterAll(async () => {
  for (const client of clients) client.close();
  await postControl(sim.port, 'busy-pf4/freeze', { on: false });
  await sim.close();
});

async function loggedIn(pump: boolean): Promise<ManagerClient> {
  const client = await ManagerClient.connect(sim.port, 'busy-pf4');
  clients.push(client);
  await client.ok('login', { login: 1000, password: PASSWORD, pump });
  if (pump) await client.waitForEvent((e) => e.event === 'resync' && e.op === 'end');
  return client;
}

type Rec = Record<string, any>;

const server = () => sim.tradingServers.get('busy-pf4')!;
/** Events the consumer took after its login's snapshot: what the server counts as sent live (it pumps alone). */
const liveEvents = (client: ManagerClient) =>
  client.events.length - client.events.findIndex((e) => e.event === 'resync' && e.op === 'end') - 1;
const parkedRequests = () =>
  [...server().sessions].reduce((n, session) => n + (session as unknown as { parked: unknown[] }).parked.length, 0);

describe('events held by a freeze', () => {
  it('keep their order, parked commands after them, and follow coalesced ticks with the symbol summary', async () => {
    // The commanding session connects first, so it thaws first: its parked tick must still queue behind the held ones.
    const commander = await loggedIn(false);
    const consumer = await loggedIn(true);
    const symbols = (await commander.ok<Rec[]>('SymbolsRequest')).map((s) => s.symbol as string);
    const first = consumer.events.length;
    await postControl(sim.port, 'busy-pf4/freeze', { on: true });
    // Frozen: the server sends nothing more; what it sent before is taken in full.
    const sent = server().counters.eventsSent;
    await consumer.waitFor(() => liveEvents(consumer) === sent, 5000, `the ${sent} events sent before the freeze`);
    const frozenAt = consumer.events.length;
    const ticksAtFreeze = server().state().ticksEmitted as number;
    const parked = commander.ok('SymbolSendTick', { symbol: symbols[0], bid: 1.2345, ask: 1.2347 });
    await expect.poll(parkedRequests, { timeout: 5000, interval: 10, message: 'the tick command parked' }).toBe(1);
    // Seven ticks over three symbols while frozen: some symbol's held ticks are coalesced.
    await expect
      .poll(() => server().state().ticksEmitted as number, {
        timeout: 5000,
        interval: 10,
        message: 'ticks while frozen',
      })
      .toBeGreaterThanOrEqual(ticksAtFreeze + 7);
    expect(server().counters.eventsSent, 'nothing sent while frozen').toBe(sent);
    expect(consumer.events.length, 'nothing reaches a consumer while frozen').toBe(frozenAt);
    await postControl(sim.port, 'busy-pf4/freeze', { on: false });
    expect(await parked).toBe(true);
    // The parked command's tick comes after every held event and summary.
    await consumer.waitForEvent((e) => e.event === 'ticks' && (e.record as Rec).bid === 1.2345);
    const released = consumer.events.slice(frozenAt);

    // Per symbol, the ticks a consumer sees never go back in time.
    const lastTime = new Map<string, number>();
    for (const event of consumer.events.slice(first)) {
      if (event.event !== 'ticks') continue;
      const { symbol, time } = event.record as Rec;
      expect(Date.parse(time), `tick of ${symbol} at ${time}`).toBeGreaterThanOrEqual(lastTime.get(symbol) ?? 0);
      lastTime.set(symbol, Date.parse(time));
    }

    // 60 ticks a second over 3 symbols for half a second: held ticks were coalesced, and summaries follow them.
    const summaries = released.filter((e) => e.event === 'symbolInfo');
    expect(summaries.length).toBeGreaterThan(0);
    for (const summary of summaries) {
      const info = summary.record as Rec;
      expect(summary.op).toBe('update');
      const at = released.indexOf(summary);
      const tick = released
        .slice(0, at)
        .reverse()
        .find((e: ManagerEvent) => e.event === 'ticks' && (e.record as Rec).symbol === info.symbol);
      // The summary is the state after the last tick released before it.
      expect(tick, `a tick of ${info.symbol} before its summary`).toBeDefined();
      expect(info).toMatchObject({
        bid: (tick!.record as Rec).bid,
        ask: (tick!.record as Rec).ask,
        lastTime: (tick!.record as Rec).time,
      });
      expect(info.high).toBeGreaterThanOrEqual(info.bid);
      expect(info.low).toBeLessThanOrEqual(info.bid);
    }
  });
});
