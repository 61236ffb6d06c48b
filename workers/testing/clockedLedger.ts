/**
 * A worker for tests of the idempotency ledger on a clock the test moves (test/edge/idempotencyExpiry.test.ts): the
 * real IdempotencyLedger, with `Date.now` of this isolate offset by what the test adds, beside a stand-in for the link
 * objects that answers every keyed send as the broker's success and counts them. The purge alarm is armed on that
 * clock too, so moving the clock past a key's expiry leaves the alarm hours ahead in real time: what the ledger
 * answers then is its own expiry check alone. Not part of the edge's bundle.
 */
import { DurableObject } from 'cloudflare:workers';
import { IdempotencyLedger } from '../gateway/idempotencyLedger.js';
import type { KeyedSend, LinkAnswer, OutcomeAnswer } from '../gateway/messages.js';
import { COVERAGE_PATH } from '../../test/mutation/coveragePath.js';
import { takeCoverage } from './mutationCoverage.js';

const realNow = Date.now.bind(Date);
let offset = 0;
Date.now = () => realNow() + offset;

/** Keyed sends that reached the stand-in link objects, in this isolate. */
let sends = 0;

export class ClockedLedger extends IdempotencyLedger {
  /** Moves this isolate's clock forward; answers the new now. */
  async advanceClock(ms: number): Promise<number> {
    offset += ms;
    return Date.now();
  }

  async sends(): Promise<number> {
    return sends;
  }
}

export class CountingLink extends DurableObject {
  async send(input: KeyedSend): Promise<LinkAnswer> {
    sends++;
    return { ok: true, data: { send: sends, callId: input.callId } };
  }

  async outcome(): Promise<OutcomeAnswer> {
    return { state: 'unknown' };
  }
}

/** Nothing but the mutation-testing coverage route (test/mutation/setup.ts asks it after each test). */
export default {
  fetch: (request: Request) => (new URL(request.url).pathname === COVERAGE_PATH ? takeCoverage() : new Response(null, { status: 404 })),
};
