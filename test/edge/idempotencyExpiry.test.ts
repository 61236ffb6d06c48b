/**
 * An Idempotency-Key's stored answer is replayed for its retention time and not a moment longer, by the ledger's own
 * check: the real IdempotencyLedger runs in workerd on a clock the test moves (test/support/workers/clockedLedger.ts), so
 * the key expires while the purge alarm is still hours away in real time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { GatewayCall, GatewayResponse, LedgerStats } from '../../workers/gateway/messages.js';
import { startTestingWorker, type TestingWorker } from '../support/testingWorker.js';
import { LOCAL_HOME } from '../support/edge.js';

const HOUR = 3_600_000;
const LEDGER = 'client-a#0';

interface ClockedLedger {
  call(input: GatewayCall): Promise<GatewayResponse>;
  advanceClock(ms: number): Promise<number>;
  sends(): Promise<number>;
  stats(): Promise<LedgerStats>;
}

let worker: TestingWorker;
let ledger: ClockedLedger;

beforeAll(async () => {
  worker = await startTestingWorker('clockedLedger.ts', [
    {
      name: 'ledger',
      bindings: { LINKS_PER_PLATFORM: '1' },
      durableObjects: {
        IDEMPOTENCY: { className: 'ClockedLedger', useSQLite: true },
        LINKS: { className: 'CountingLink', useSQLite: true },
      },
    },
  ]);
  ledger = await worker.object<ClockedLedger>('IDEMPOTENCY', LEDGER);
}, 60_000);
afterAll(async () => {
  await worker?.close();
});

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function create(key: string, requestHash: string): GatewayCall {
  return {
    operationId: 'v2.PF4.UserRecordNew',
    op: 'PF4.UserRecordNew',
    platform: randomUUID(),
    family: 'PF4',
    args: { body: { group: 'demo', name: 'Alice' } },
    timeoutMs: 5_000,
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    brokerUrls: ['http://127.0.0.1:1'],
    mutating: true,
    home: LOCAL_HOME,
    place: LOCAL_HOME,
    idempotency: { key: `client-a:${key}`, ledger: LEDGER, requestHash, retentionHours: 1 },
  };
}
const send = async (input: GatewayCall) => plain(await ledger.call(input));
const replayed = (r: GatewayResponse) => r.headers['Idempotency-Replayed'] ?? null;

describe('Idempotency-Key retention', () => {
  it('replays the stored answer until the key expires, then sends the request afresh, before any purge', async () => {
    const input = create(randomUUID(), 'hash-1');
    const sendsBefore = await ledger.sends();
    const first = await send(input);
    expect(JSON.parse(first.body)).toMatchObject({ data: { send: sendsBefore + 1 }, error: null });
    expect(replayed(first)).toBeNull();

    // Real time goes on too: a minute short of the retention leaves room for it, a minute more is past it.
    await ledger.advanceClock(HOUR - 60_000);
    const repeat = await send(input);
    expect(replayed(repeat)).toBe('true');
    expect(repeat.body).toBe(first.body);
    expect(await ledger.sends()).toBe(sendsBefore + 1);

    await ledger.advanceClock(60_000); // the retention has passed: the key has expired
    const { records } = plain(await ledger.stats());
    const fresh = await send(input);
    expect(replayed(fresh)).toBeNull();
    expect(JSON.parse(fresh.body)).toMatchObject({ data: { send: sendsBefore + 2 }, error: null });
    expect(await ledger.sends()).toBe(sendsBefore + 2);
    // The expired record was still stored (no purge ran); the fresh answer replaced it.
    expect(records).toBeGreaterThanOrEqual(1);
    expect(plain(await ledger.stats()).records).toBe(records);
    expect(replayed(await send(input))).toBe('true');
  });

  it('frees an expired key for another request instead of refusing it as a reuse', async () => {
    const key = randomUUID();
    await send(create(key, 'hash-a'));
    expect(JSON.parse((await send(create(key, 'hash-b'))).body).error).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: 'Idempotency-Key: already used with a different request',
    });
    await ledger.advanceClock(HOUR);
    const other = await send(create(key, 'hash-b'));
    expect(replayed(other)).toBeNull();
    expect(JSON.parse(other.body).error).toBeNull();
  });
});
