/**
 * Read your writes (docs/regions.md), in real workerd against a scripted broker: an answer names the change-stream
 * position of the cache that made it in `X-Gateway-Position`; a cached read that sends a position back is answered by
 * the replica once it has reached it (waiting for the change stream within the budget), by the broker when the
 * replica does not reach it in time or cannot judge it (another epoch); a position that is not one is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectCall } from '../../launcher/edge.js';
import { REPLICATE_OP } from '../../shared/replication.js';
import { PF4_A, startTestEdge, type TestEdge } from '../support/edge.js';
import { until } from '../support/until.js';
import { linkName } from '../../workers/gateway/names.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';

let edge: TestEdge;
let broker: FakeBroker;
let token: string;

beforeAll(async () => {
  broker = await startFakeBroker();
  broker.script.set(REPLICATE_OP, {
    reply: (frame) => ({ ok: true, data: { rep: (frame.args as { rep: number }).rep, tables: ['users'] } }),
  });
  // One link object per platform, so every read meets the same replica.
  edge = await startTestEdge({ vars: { BROKER_URL: broker.url, LINKS_PER_PLATFORM: '1' } });
  token = await edge.token();
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await fetch(new URL(path, edge.url), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, position: res.headers.get('x-gateway-position'), body: await res.json() };
}
const v2 = `/api/v2/PF4/${PF4_A}`;
const read = (position?: string) =>
  call('GET', `${v2}/UserRecordGet/5`, position === undefined ? {} : { 'x-gateway-position': position });
const brokerReads = () => broker.framesFor('PF4.UserRecordGet').length;
const linkStats = () =>
  objectCall<{ positionWaits: number; replica: { inSync: boolean; position: string | null } | null }>(
    edge.miniflare,
    'LINKS',
    linkName(PF4_A, 'weur', 0),
    'stats',
  );

let rep = 0;
const push = (seq: number, body: Record<string, unknown>) => broker.push({ rep, seq, ...body });

describe('positions', () => {
  it("names the broker's position on a write's answer and on a read the broker answered", async () => {
    broker.script.set('PF4.UserRecordNew', { reply: { ok: true, pos: '100-3', data: { login: 5, name: 'new' } } });
    broker.script.set('PF4.UserRecordGet', {
      reply: { ok: true, pos: '100-3', data: { login: 5, name: 'from the broker' } },
      binary: true,
    });
    const written = await call('POST', `${v2}/UserRecordNew`, {}, { group: 'demo', name: 'new' });
    expect(written).toMatchObject({ status: 200, position: '100-3', body: { data: { login: 5, name: 'new' } } });
    // A binary answer frame, its position read from the frame's head without parsing its data.
    expect(await read()).toMatchObject({ position: '100-3', body: { data: { name: 'from the broker' } } });
    const asked = await until(() => broker.replicateFrames[0], 'replication request');
    rep = (asked.args as { rep: number }).rep;
  });

  it("answers from the replica a read whose position it has reached, naming the replica's", async () => {
    push(0, { begin: { tables: ['users'] } });
    push(1, { table: 'users', rows: [[5, '{"login":5,"name":"replicated"}']] });
    push(2, { end: true, pos: '100-5' });
    await until(async () => (await linkStats()).replica?.position === '100-5', 'the replica at 100-5');
    const before = brokerReads();
    expect(await read('100-5')).toMatchObject({ position: '100-5', body: { data: { name: 'replicated' } } });
    expect(await read('100-4')).toMatchObject({ position: '100-5', body: { data: { name: 'replicated' } } });
    expect(await read()).toMatchObject({ position: '100-5', body: { data: { name: 'replicated' } } });
    expect(brokerReads()).toBe(before);
  });

  it('waits for the change stream to bring a position the replica has not reached yet', async () => {
    const before = brokerReads();
    const waiting = read('100-7');
    await until(async () => (await linkStats()).positionWaits === 1, 'the read waiting for 100-7');
    push(3, { changes: [['users', 5, '{"login":5,"name":"written"}']], pos: '100-7' });
    expect(await waiting).toMatchObject({ position: '100-7', body: { data: { name: 'written' }, error: null } });
    expect(brokerReads()).toBe(before);
  });

  it('leaves the read to the broker when the replica does not reach the position in time, or cannot judge it', async () => {
    broker.script.set('PF4.UserRecordGet', {
      reply: { ok: true, pos: '100-9', data: { login: 5, name: 'from the broker' } },
    });
    const before = brokerReads();
    expect(await read('100-9')).toMatchObject({ position: '100-9', body: { data: { name: 'from the broker' } } });
    expect(brokerReads()).toBe(before + 1);
    expect((await linkStats()).positionWaits).toBe(2);
    // Another epoch (a resync, another broker): the broker answers at once, with no wait.
    expect(await read('200-1')).toMatchObject({ position: '100-9', body: { data: { name: 'from the broker' } } });
    expect(brokerReads()).toBe(before + 2);
    expect((await linkStats()).positionWaits).toBe(2);
  });

  it('refuses a position that is not one, naming the header and the rule', async () => {
    const rule = 'must be a change-stream position as an answer gave it (<epoch>-<count>, digits)';
    for (const bad of ['abc', '100', '100-', '1.5-2']) {
      expect(await read(bad)).toMatchObject({
        status: 200,
        body: { data: null, error: { code: 'Validation', message: `X-Gateway-Position: ${rule}` } },
      });
    }
    const v1 = await call('GET', `/api/PF4/${PF4_A}/UserRecordGet/5`, { 'x-gateway-position': 'abc' });
    expect(v1.status).toBe(400);
    expect(v1.body.errorDescription).toBe(`X-Gateway-Position: ${rule}`);
  });
});
