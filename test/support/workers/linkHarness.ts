/**
 * A worker for tests of the link objects on a clock the test moves (test/edge/platformLink.test.ts): the real
 * PlatformLink, with `Date.now` of this isolate offset by what the test adds, beside a stand-in for the idempotency
 * ledgers that records the late outcomes handed to it. Moving the clock ages the late-outcome routes and the pause
 * before a replication is asked for again, without waiting for them in real time. Not part of the edge's bundle.
 */
import { DurableObject } from 'cloudflare:workers';
import { PlatformLink } from '../../../workers/gateway/platformLink.js';
import type { GatewayCall, LinkResponse } from '../../../workers/gateway/messages.js';
import type { LateFrame } from '../../../shared/frames.js';
import { COVERAGE_PATH } from '../../mutation/coveragePath.js';
import { takeCoverage } from './mutationCoverage.js';

const realNow = Date.now.bind(Date);
let offset = 0;
Date.now = () => realNow() + offset;

export class ClockedLink extends PlatformLink {
  /**
   * The heartbeat of a testing worker given HEARTBEAT_EVERY_MS and HEARTBEAT_TIMEOUT_MS (bindings of the harness, not
   * edge variables), so a test of hung brokers waits less for each; the product's timing otherwise.
   */
  protected override heartbeat(): { pingEveryMs?: number; pingTimeoutMs?: number } {
    const bindings = this.env as unknown as Record<string, string | undefined>;
    const every = Number(bindings.HEARTBEAT_EVERY_MS);
    const timeout = Number(bindings.HEARTBEAT_TIMEOUT_MS);
    return {
      ...(every > 0 ? { pingEveryMs: every } : {}),
      ...(timeout > 0 ? { pingTimeoutMs: timeout } : {}),
    };
  }

  /** Moves this isolate's clock forward; answers the new now. */
  advanceClock(ms: number): Promise<number> {
    offset += ms;
    return Promise.resolve(Date.now());
  }

  /** `call`, with what it throws answered as its message (a rejected RPC does not reach the test intact). */
  async callOrThrown(input: GatewayCall): Promise<{ answer: LinkResponse } | { thrown: string }> {
    try {
      return { answer: await this.call(input) };
    } catch (err) {
      return { thrown: err instanceof Error ? err.message : String(err) };
    }
  }
}

/** One late outcome as a ledger received it. */
export interface SettledOutcome {
  /** The id of the ledger object it was handed to (`DurableObjectId.toString()`). */
  ledger: string;
  callId: string;
  report: LateFrame['late']['report'];
}

/** Late outcomes handed to the stand-in ledgers of this isolate, in arrival order. */
const settled: SettledOutcome[] = [];

export class RecordingLedger extends DurableObject {
  settle(callId: string, report: LateFrame['late']['report']): Promise<void> {
    settled.push({ ledger: this.ctx.id.toString(), callId, report });
    return Promise.resolve();
  }

  /** The late outcomes this ledger received. */
  received(): Promise<Array<Omit<SettledOutcome, 'ledger'>>> {
    const mine = this.ctx.id.toString();
    return Promise.resolve(settled.filter((s) => s.ledger === mine).map(({ callId, report }) => ({ callId, report })));
  }

  /** How many late outcomes every ledger of this isolate received. */
  total(): Promise<number> {
    return Promise.resolve(settled.length);
  }
}

/** Nothing but the mutation-testing coverage route (test/mutation/setup.ts asks it after each test). */
export default {
  fetch: (request: Request) =>
    new URL(request.url).pathname === COVERAGE_PATH ? takeCoverage() : new Response(null, { status: 404 }),
};
