/**
 * The script of the stand-in link objects of test/support/workers/clockedLedger.ts, as the tests write it: free of Workers
 * types, so the tests in Node can name them.
 */
import type { LinkAnswer, OutcomeAnswer } from '../../../workers/gateway/messages.js';

/** What the stand-in does with the next keyed send: answer this, fail as a broken object would, or hold it. */
export type SendPlan = { answer: LinkAnswer } | { throws: string } | { hold: true };
/** What it answers the next outcome query: this report, or fail as a broken object would. */
export type QueryPlan = OutcomeAnswer | { throws: string };

export interface LinkLog {
  /** Keyed sends that reached the stand-in, in this isolate (the call ids in order). */
  sends: string[];
  /** Outcome queries, in order. */
  queries: Array<{ callId: string; timeoutMs: number }>;
  /** Sends held now, waiting for `release`. */
  held: number;
}
