/**
 * Calls made under an Idempotency-Key (frames with a `callId`) through a real broker against a fake trading server:
 * the answer that comes after the deadline is kept and pushed as a `late` frame, `#outcome` reports it (waiting while
 * the call runs), a call id never runs twice, a call the connection dropped under is `lost`, and one that could not be
 * sent before its deadline is reported as not applied. Plus the bounds of the outcome store.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { OutcomeReport } from '../../shared/frames.js';
import { startBroker, type RunningBroker } from '../index.js';
import { FAKE_MANAGER, FAKE_PASSWORD, FakeManagerServer } from '../../test/support/broker/fakeManagerServer.js';
import { eventually, failed, ok, TestLink } from '../../test/support/broker/linkClient.js';
import { CallOutcomes } from './callOutcomes.js';

const SECRET = 'link-secret-for-tests';
const PF4_ID = '0b6f3a52-4a53-4c47-9d6f-5a1e2f0c0101';
const CREATE = 'PF4.UserRecordNew';

describe('calls under an Idempotency-Key', () => {
  let pf4: FakeManagerServer;
  let broker: RunningBroker;
  let link: TestLink;
  const create = (name: string, timeoutMs: number, callId: string) =>
    link.call(PF4_ID, CREATE, { body: { group: 'demo', name } }, timeoutMs, callId);

  beforeAll(async () => {
    pf4 = await FakeManagerServer.start('PF4');
    broker = await startBroker({
      secret: SECRET,
      platforms: [{ id: PF4_ID, family: 'PF4', server: pf4.url, login: FAKE_MANAGER, password: FAKE_PASSWORD }],
      session: { backoff: { baseMs: 20, capMs: 200 }, pingIntervalMs: 1000 },
      idempotentCalls: { lateAnswerMs: 1500 },
    });
    link = await TestLink.open(broker.port, SECRET);
    await eventually(async () => (await link.call(PF4_ID, 'ServerTime')).ok);
  });
  afterAll(async () => {
    await link?.close();
    await broker?.close();
    await pf4?.close();
  });
  afterEach(() => {
    pf4.delays.clear();
    pf4.refuseLogin = false;
  });

  it('keeps waiting past the deadline, pushes the late outcome on the link and reports it to #outcome', async () => {
    const callId = randomUUID();
    const creates = pf4.count('UserRecordNew');
    pf4.delays.set('UserRecordNew', 600);
    const first = failed(await create('Late', 200, callId));
    expect(first).toMatchObject({ timedOut: true, outcome: 'unknown', error: { code: 'NoConnect' } });
    // Asked while the server still works on it: the query waits for the answer.
    const report = await link.outcome(PF4_ID, callId, 2000);
    expect(report).toMatchObject({
      state: 'settled',
      result: { ok: true, data: { name: 'Late', login: expect.any(Number) } },
    });
    await eventually(() => link.lates.some((l) => l.callId === callId));
    expect(link.lates.find((l) => l.callId === callId)!.report).toStrictEqual(report);
    expect(await link.outcome(PF4_ID, callId)).toStrictEqual(report);
    expect(pf4.count('UserRecordNew') - creates).toBe(1);
  });

  it('never runs one call id twice: a repeated frame is answered from the first run', async () => {
    const callId = randomUUID();
    const creates = pf4.count('UserRecordNew');
    const first = ok(await create('Once', 2000, callId));
    const again = ok(await create('Once', 2000, callId));
    expect(again.data).toStrictEqual(first.data);
    expect(pf4.count('UserRecordNew') - creates).toBe(1);

    // A repeat while the first still runs waits for it.
    const slowId = randomUUID();
    pf4.delays.set('UserRecordNew', 300);
    const [a, b] = await Promise.all([create('Twice', 2000, slowId), create('Twice', 2000, slowId)]);
    expect(ok(b).data).toStrictEqual(ok(a).data);
    expect(pf4.count('UserRecordNew') - creates).toBe(2);
  });

  it('answers pending while the call runs past a short wait, and unknown for an id it never saw or of another platform', async () => {
    const callId = randomUUID();
    const creates = pf4.count('UserRecordNew');
    pf4.delays.set('UserRecordNew', 800);
    const running = create('Pending', 5000, callId);
    await eventually(() => pf4.count('UserRecordNew') > creates);
    expect(await link.outcome(PF4_ID, callId, 50)).toStrictEqual({ state: 'pending' });
    expect(await link.outcome(PF4_ID, randomUUID(), 50)).toStrictEqual({ state: 'unknown' });
    expect(await link.outcome(randomUUID(), callId, 50)).toStrictEqual({ state: 'unknown' });
    ok(await running);
    expect(await link.outcome(PF4_ID, callId)).toMatchObject({ state: 'settled', result: { ok: true } });
  });

  it('reports a change the manager connection dropped under as lost, for good', async () => {
    const callId = randomUUID();
    const sent = pf4.count('UserRecordNew');
    pf4.delays.set('UserRecordNew', 2000);
    const running = create('Dropped', 5000, callId);
    await eventually(() => pf4.count('UserRecordNew') > sent);
    pf4.drop();
    const answer = failed(await running);
    expect(answer).toMatchObject({ outcome: 'unknown', error: { code: 'NoConnect' } });
    expect(await link.outcome(PF4_ID, callId)).toStrictEqual({
      state: 'lost',
      reason: 'the manager connection dropped before the trading server answered',
    });
    pf4.delays.clear();
    await eventually(async () => (await link.call(PF4_ID, 'ServerTime')).ok);
    // The same call id is not sent again after the session came back.
    const creates = pf4.count('UserRecordNew');
    failed(await create('Dropped', 2000, callId));
    expect(pf4.count('UserRecordNew')).toBe(creates);
  });

  it('reports a change its deadline caught before it could be sent as settled without an unknown outcome', async () => {
    const callId = randomUUID();
    const creates = pf4.count('UserRecordNew');
    pf4.delays.set('login', 900);
    pf4.drop();
    await eventually(() => !broker.platforms.get(PF4_ID)!.session.up);
    const answer = failed(await create('Unsent', 300, callId));
    expect(answer).toMatchObject({ timedOut: true, error: { code: 'NoConnect' } });
    const report = await link.outcome(PF4_ID, callId, 3000);
    expect(report).toMatchObject({
      state: 'settled',
      result: {
        ok: false,
        timedOut: true,
        error: {
          code: 'NoConnect',
          message: 'the call was not sent: its deadline passed before the manager session was ready',
        },
      },
    });
    expect((report as Extract<OutcomeReport, { state: 'settled' }>).result).not.toHaveProperty('outcome');
    pf4.delays.clear();
    await eventually(async () => (await link.call(PF4_ID, 'ServerTime')).ok);
    expect(pf4.count('UserRecordNew')).toBe(creates);
  });

  it('gives up on an answer that does not come within the late-answer window: lost', async () => {
    const callId = randomUUID();
    pf4.delays.set('UserRecordNew', 5000);
    failed(await create('Never', 200, callId));
    const report = await link.outcome(PF4_ID, callId, 4500);
    expect(report).toStrictEqual({
      state: 'lost',
      reason: "the trading server did not answer within the broker's late-answer window",
    });
    expect(link.lates.find((l) => l.callId === callId)?.report).toStrictEqual(report);
  });
});

describe('the outcome store', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const result = { ok: true as const, data: 1 };

  it('keeps at most maxSettled ended outcomes, the oldest going first, and never forgets a running call', async () => {
    const store = new CallOutcomes({ maxSettled: 2 });
    expect(store.begin('running', 'p')).toBe(true);
    for (const id of ['a', 'b', 'c']) {
      store.begin(id, 'p');
      store.settle(id, result);
    }
    expect(await store.query('a', 'p', 0)).toStrictEqual({ state: 'unknown' });
    expect(await store.query('b', 'p', 0)).toMatchObject({ state: 'settled' });
    expect(await store.query('running', 'p', 0)).toStrictEqual({ state: 'pending' });
    expect(store.size).toStrictEqual({ pending: 1, ended: 2 });
    expect(store.begin('b', 'p')).toBe(false);
  });

  it('forgets ended outcomes after retentionMs', async () => {
    vi.useFakeTimers({ now: 0 });
    const store = new CallOutcomes({ retentionMs: 1000 });
    store.begin('x', 'p');
    store.lose('x', 'gone');
    vi.setSystemTime(999);
    expect(await store.query('x', 'p', 0)).toStrictEqual({ state: 'lost', reason: 'gone' });
    vi.setSystemTime(1000);
    expect(await store.query('x', 'p', 0)).toStrictEqual({ state: 'unknown' });
    expect(store.begin('x', 'p')).toBe(true);
  });
});
