/**
 * Regions end to end (simulator, broker, edge in workerd; docs/regions.md): a caller in another region than the
 * platform's home has its cached reads answered by that region's link objects, whose replica follows the trading
 * server's changes over their own broker link, and its stream served by that region's stream object, while its live
 * reads go to the home region's links.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { objectCall } from '../../launcher/edge.js';
import { DEFAULT_LINKS_PER_PLATFORM, pickLink } from '../../workers/gateway/names.js';
import type { ReplicaStats } from '../../workers/gateway/edgeReplica.js';
import { streamObjectName } from '../../workers/streams/fanout.js';
import { SseReader } from '../support/sse.js';
import { eventually, stackAndManagerForFile } from './support.js';

const setup = stackAndManagerForFile();
const FAR = { 'x-gateway-region': 'apac' };

/** A trace id, and the headers of a call from the far region that make the edge use it. */
function farTrace(): { traceId: string; headers: Record<string, string> } {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, headers: { ...FAR, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } };
}

async function linkStats(region: 'apac' | 'weur', traceId: string) {
  const c = setup.client;
  const name = pickLink(c.stack.platforms.pf4, region, traceId, DEFAULT_LINKS_PER_PLATFORM);
  return objectCall<{ calls: number; replica: ReplicaStats | null }>(c.stack.edge.miniflare, 'LINKS', name, 'stats');
}

describe('a caller in another region than the home', () => {
  it("reads a change made on the trading server from its own region's replica", async () => {
    const c = setup.client;
    const login = (await c.get(`${c.v2pf4}/UsersRequest?limit=1`)).body.data[0].login as number;
    const path = `${c.v2pf4}/UserRecordGet/${login}`;
    const t = farTrace();
    const synced = await eventually(async () => {
      const answer = await c.get(path, t.headers);
      expect(answer.headers.get('x-gateway-region')).toBe('apac');
      return (await linkStats('apac', t.traceId)).replica?.inSync === true;
    }, 20_000);
    expect(synced, 'the apac link object holds an in-sync replica').toBe(true);

    const homeBefore = (await linkStats('weur', t.traceId)).calls;
    const name = `Far ${randomBytes(4).toString('hex')}`;
    await setup.manager.ok('UserRecordUpdate', { login, record: { name } });
    const answered = async () => (await linkStats('apac', t.traceId)).replica?.answered ?? 0;
    let last: any;
    const seen = await eventually(
      async () => {
        const before = await answered();
        last = (await c.get(path, t.headers)).body;
        return last.data?.name === name && (await answered()) === before + 1;
      },
      10_000,
      10,
    );
    expect(seen, `last answer: ${JSON.stringify(last)}`).toBe(true);
    expect(last.error).toBeNull();
    // The home region's link of the same trace took none of these reads; a live read goes there.
    expect((await linkStats('weur', t.traceId)).calls).toBe(homeBefore);
    const live = await c.get(`${c.v2pf4}/UserRecordRequest/${login}`, t.headers);
    expect(live.body.data).toStrictEqual(last.data);
    expect((await linkStats('weur', t.traceId)).calls).toBe(homeBefore + 1);
  });

  it("reads its own write through its region's replica by sending back the write's position", async () => {
    const c = setup.client;
    const login = (await c.get(`${c.v2pf4}/UsersRequest?limit=2`)).body.data[1].login as number;
    const path = `${c.v2pf4}/UserRecordGet/${login}`;
    const t = farTrace();
    const synced = await eventually(async () => {
      await c.get(path, t.headers);
      return (await linkStats('apac', t.traceId)).replica?.inSync === true;
    }, 20_000);
    expect(synced, 'the apac link object holds an in-sync replica').toBe(true);
    for (let i = 0; i < 5; i++) {
      const name = `Own ${i} ${randomBytes(3).toString('hex')}`;
      const written = await c.post(`${c.v2pf4}/UserRecordUpdate/${login}`, { name }, t.headers);
      expect(written.body.error).toBeNull();
      const position = written.headers.get('x-gateway-position');
      expect(position).toMatch(/^\d+-\d+$/);
      const before = (await linkStats('apac', t.traceId)).replica!.answered;
      const read = await c.get(path, { ...t.headers, 'x-gateway-position': position! });
      // At once, with no polling: the region's replica answered only once it had reached the write.
      expect(read.body.data.name).toBe(name);
      expect((await linkStats('apac', t.traceId)).replica!.answered).toBe(before + 1);
      const [epoch, count] = read.headers.get('x-gateway-position')!.split('-').map(Number);
      const [wEpoch, wCount] = position!.split('-').map(Number);
      expect(epoch).toBe(wEpoch);
      expect(count).toBeGreaterThanOrEqual(wCount);
    }
  });

  it("is served its stream by its region's stream object", async () => {
    const c = setup.client;
    const url = `${c.stack.edgeUrl}${c.v2pf4}/Stream?ticks=EURUSD`;
    const sse = await SseReader.open(url, c.token, undefined, FAR);
    try {
      expect(sse.status).toBe(200);
      await eventually(() => Promise.resolve(sse.of('ticks').length >= 2), 15_000);
      expect(JSON.parse(sse.of('status').at(-1)!.data)).toEqual({ connected: true });
      const stats = (region: 'apac' | 'weur') =>
        objectCall<{ sse: number }>(
          c.stack.edge.miniflare,
          'STREAMS',
          streamObjectName(c.stack.platforms.pf4, region, 0),
          'stats',
        );
      expect([(await stats('apac')).sse, (await stats('weur')).sse]).toEqual([1, 0]);
    } finally {
      await sse.close();
    }
  });
});
