/**
 * A worker for tests of the idempotency ledger on a clock the test moves (test/edge/idempotencyExpiry.test.ts,
 * test/edge/idempotencyLedger.test.ts, test/edge/idempotencyBounds.test.ts): the real IdempotencyLedger, with
 * `Date.now` of this isolate offset by what the test adds, beside a stand-in for the link objects. The stand-in
 * answers keyed sends and outcome queries as the test scripted them (by default: the broker's success, and "no longer
 * known"), holds a send until the test releases it, and logs what it was asked. The purge alarm is armed on the
 * moved clock too, so moving the clock past a key's expiry leaves the alarm hours ahead in real time: what the ledger
 * answers then is its own expiry check alone, and the alarm's follow-ups run when the test says (`runAlarm`). The real
 * AuditTrail is bound beside them. Not part of the edge's bundle.
 */
import { DurableObject } from 'cloudflare:workers';
import { IdempotencyLedger } from '../../../workers/gateway/idempotencyLedger.js';
// The real audit trail, which a ledger completes when a follow-up learns an outcome.
export { AuditTrail } from '../../../workers/audit/auditTrail.js';
import type { GatewayCall, KeyedSend, LinkAnswer, OutcomeAnswer } from '../../../workers/gateway/messages.js';
import type { LinkLog, QueryPlan, SendPlan } from './linkScript.js';
import { COVERAGE_PATH } from '../../mutation/coveragePath.js';
import { takeCoverage } from './mutationCoverage.js';

const realNow = Date.now.bind(Date);
let offset = 0;
Date.now = () => realNow() + offset;

const sendPlans: SendPlan[] = [];
const queryPlans: QueryPlan[] = [];
const log: LinkLog = { sends: [], queries: [], held: 0 };
const held: Array<(answer: LinkAnswer) => void> = [];

export class ClockedLedger extends IdempotencyLedger {
  /** Moves this isolate's clock forward; answers the new now. */
  advanceClock(ms: number): Promise<number> {
    offset += ms;
    return Promise.resolve(Date.now());
  }

  sends(): Promise<number> {
    return Promise.resolve(log.sends.length);
  }

  /** Queues what the stand-in link objects do with the next sends and queries (after those queued before). */
  planLink(plan: { sends?: SendPlan[]; queries?: QueryPlan[] }): Promise<void> {
    sendPlans.push(...(plan.sends ?? []));
    queryPlans.push(...(plan.queries ?? []));
    return Promise.resolve();
  }

  /** Drops whatever is still queued for the stand-in link objects. */
  clearPlans(): Promise<void> {
    sendPlans.length = 0;
    queryPlans.length = 0;
    return Promise.resolve();
  }

  linkLog(): Promise<LinkLog> {
    return Promise.resolve({ ...log, held: held.length });
  }

  /** Lets the oldest held send answer `answer`. */
  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: what it throws reaches the caller as a rejection
  async release(answer: LinkAnswer): Promise<void> {
    const next = held.shift();
    if (!next) throw new Error('no send is held');
    next(answer);
  }

  /** The message `call` rejects with, or null when it answers (a rejection does not cross the test's proxy intact). */
  async refusal(input: GatewayCall): Promise<string | null> {
    try {
      await this.call(input);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** The UTF-8 bytes of the answers its rows hold, read from storage, and the count it keeps of them on disk. */
  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: what it throws reaches the caller as a rejection
  async storedOnDisk(): Promise<{ rows: number; counted: number }> {
    const sql = this.ctx.storage.sql;
    return {
      rows: sql
        .exec<{ bytes: number }>(
          'SELECT coalesce(sum(length(CAST(response AS BLOB))), 0) AS bytes FROM idempotency_keys',
        )
        .one().bytes,
      counted: sql.exec<{ value: number }>(`SELECT value FROM idempotency_meta WHERE name = 'stored_bytes'`).one()
        .value,
    };
  }

  /** Runs the ledger's alarm now (what workerd does when it goes off). */
  async runAlarm(): Promise<void> {
    await this.alarm();
  }
}

export class CountingLink extends DurableObject {
  async send(input: KeyedSend): Promise<LinkAnswer> {
    log.sends.push(input.callId);
    const plan = sendPlans.shift();
    if (plan === undefined) return { ok: true, data: { send: log.sends.length, callId: input.callId } };
    if ('throws' in plan) throw new Error(plan.throws);
    if ('hold' in plan) return new Promise<LinkAnswer>((resolve) => held.push(resolve));
    return plan.answer;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: what it throws reaches the caller as a rejection
  async outcome(q: { callId: string; timeoutMs: number }): Promise<OutcomeAnswer> {
    log.queries.push({ callId: q.callId, timeoutMs: q.timeoutMs });
    const plan = queryPlans.shift() ?? { state: 'unknown' };
    if ('throws' in plan) throw new Error(plan.throws);
    return plan;
  }
}

/** Nothing but the mutation-testing coverage route (test/mutation/setup.ts asks it after each test). */
export default {
  fetch: (request: Request) =>
    new URL(request.url).pathname === COVERAGE_PATH ? takeCoverage() : new Response(null, { status: 404 }),
};
