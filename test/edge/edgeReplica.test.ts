/**
 * Edge replicas in the link objects (workers/gateway/platformLink.ts, shared/replication.ts), in workerd against a
 * scripted broker that accepts `#replicate` and pushes the replication's frames: a cached read is answered from the
 * replica once its snapshot is whole (no call reaches the broker), follows pushed changes, answers an unknown key as
 * the family's not-found, and falls through to the broker when the replica falls out of sync, which asks for a new
 * replication.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEdge, PF4_A, type TestEdge } from '../support/edge.js';
import { startFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import {
  DEFAULT_REPLICA_STORED_ROWS,
  REPLICA_WINDOW_FRAMES,
  REPLICATE_OP,
  REPLICATED_OP,
} from '../../shared/replication.js';
import { until } from '../support/until.js';

let edge: TestEdge;
let broker: FakeBroker;
let token: string;

beforeAll(async () => {
  broker = await startFakeBroker();
  broker.script.set(REPLICATE_OP, {
    reply: (frame) => ({ ok: true, data: { rep: (frame.args as { rep: number }).rep, tables: ['users'] } }),
  });
  broker.script.set('PF4.UserRecordGet', { reply: { ok: true, data: { login: 5, name: 'from the broker' } } });
  // One link object per platform, so every call meets the same replica.
  edge = await startTestEdge({ vars: { BROKER_URL: broker.url, LINKS_PER_PLATFORM: '1' } });
  token = await edge.token();
}, 60_000);
afterAll(async () => {
  await edge?.close();
  await broker?.close();
});

async function get(
  path: string,
): Promise<{ data: unknown; error: { code: string; managerCode: unknown; message: string } | null }> {
  const res = await fetch(new URL(`/api/v2/PF4/${PF4_A}/${path}`, edge.url), {
    headers: { authorization: `Bearer ${token}` },
  });
  return (await res.json()) as never;
}

const reads = () => broker.framesFor('PF4.UserRecordGet').length;
let rep = 0;
const frame = (seq: number, body: Record<string, unknown>) => broker.push({ rep, seq, ...body });

describe('an edge replica', () => {
  it("asks for a replication of the platform's hot tables when its link opens, reading from the broker meanwhile", async () => {
    expect(await get('UserRecordGet/5')).toStrictEqual({
      data: { login: 5, name: 'from the broker' },
      error: null,
      meta: expect.anything(),
    });
    expect(reads()).toBe(1);
    const asked = await until(() => broker.replicateFrames[0], 'replication request');
    expect(asked).toMatchObject({
      platform: PF4_A,
      op: REPLICATE_OP,
      // As large as its storage holds: tables past the memory bound move there.
      args: { rep: expect.any(Number), maxRows: DEFAULT_REPLICA_STORED_ROWS, window: REPLICA_WINDOW_FRAMES },
    });
    rep = (asked.args as { rep: number }).rep;
  });

  it('answers from the replica once its snapshot is whole, without a call to the broker', async () => {
    frame(0, { begin: { tables: ['users'] } });
    frame(1, {
      table: 'users',
      rows: [
        [5, '{"login":5,"name":"replicated"}'],
        [6, '{"login":6,"name":"six"}'],
      ],
    });
    // The snapshot's rows, once applied, are acknowledged: the broker may send its next ones.
    const acked = await until(
      () => broker.framesFor(REPLICATED_OP).find((f) => (f.args as { seq: number }).seq === 1),
      'acknowledgement of the rows',
    );
    expect(acked).toMatchObject({ platform: PF4_A, args: { rep, seq: 1 } });
    // Before the end of the snapshot the broker still answers.
    expect((await get('UserRecordGet/5')).data).toStrictEqual({ login: 5, name: 'from the broker' });
    const before = reads();
    frame(2, { end: true });
    await until(
      async () => ((await get('UserRecordGet/5')).data as { name: string }).name === 'replicated',
      'replicated answer',
    );
    expect((await get('UserRecordGet/6')).data).toStrictEqual({ login: 6, name: 'six' });
    expect(reads()).toBe(before);
  });

  it("follows the pushed changes, and answers a key it does not hold as the family's not-found", async () => {
    const before = reads();
    frame(3, {
      changes: [
        ['users', 5, '{"login":5,"name":"changed"}'],
        ['users', 6, null],
      ],
    });
    await until(
      async () => ((await get('UserRecordGet/5')).data as { name: string }).name === 'changed',
      'changed answer',
    );
    expect(await get('UserRecordGet/6')).toStrictEqual({
      data: null,
      error: { code: 'NotFound', managerCode: 'InvalidData', message: 'login 6 not found' },
      meta: expect.anything(),
    });
    expect(reads()).toBe(before);
  });

  it('falls through to the broker on a gap in the frames, and asks for a new replication', async () => {
    const asked = broker.replicateFrames.length;
    frame(9, { changes: [['users', 5, '{"login":5,"name":"after a gap"}']] });
    await until(
      async () => ((await get('UserRecordGet/5')).data as { name: string }).name === 'from the broker',
      'answer from the broker',
    );
    expect((await get('UserRecordGet/5')).data).toStrictEqual({ login: 5, name: 'from the broker' });
    // Asked for again after a pause, by a later call.
    const again = await until(async () => {
      await get('UserRecordGet/5');
      return broker.replicateFrames[asked];
    }, 'new replication request');
    expect((again.args as { rep: number }).rep).toBe(rep + 1);
  });
});
