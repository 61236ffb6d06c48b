/**
 * An edge link for the broker's tests: opens `/link` with the secret, sends call frames and resolves each with the
 * answer of the same id, the way a link object does; keeps the late outcomes and drain frames the broker pushes.
 */
import WebSocket from 'ws';
import {
  FAILOVER_OP,
  OUTCOME_OP,
  PING_OP,
  type CallFailed,
  type CallFrame,
  type CallOk,
  type DrainFrame,
  type FailoverArgs,
  type LateFrame,
  type OutcomeReport,
  type PingReport,
  type ResultFrame,
} from '../../../shared/frames.js';
import { until } from '../until.js';

export class TestLink {
  readonly hellos: unknown[] = [];
  /** Late outcomes pushed by the broker, in arrival order. */
  readonly lates: LateFrame['late'][] = [];
  /** Drain frames pushed by the broker, in arrival order. */
  readonly drains: DrainFrame['drain'][] = [];
  private nextId = 1;
  private readonly waiting = new Map<number, (frame: ResultFrame) => void>();
  /** Ids in the order their answers arrived. */
  readonly answerOrder: number[] = [];
  closeCode: number | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString()) as ResultFrame | { hello: unknown };
      if ('late' in frame) {
        this.lates.push((frame as LateFrame).late);
        return;
      }
      if ('drain' in frame) {
        this.drains.push((frame as DrainFrame).drain);
        return;
      }
      if (!('id' in frame)) {
        this.hellos.push(frame);
        return;
      }
      this.answerOrder.push(frame.id);
      this.waiting.get(frame.id)?.(frame);
      this.waiting.delete(frame.id);
    });
    ws.on('close', (code) => {
      this.closeCode = code;
    });
  }

  static open(port: number, secret: string): Promise<TestLink> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/link`, { headers: { authorization: `Bearer ${secret}` } });
      const link = new TestLink(ws);
      ws.once('open', () => resolve(link));
      ws.once('error', reject);
    });
  }

  call(
    platform: string,
    op: string,
    args: Record<string, unknown> = {},
    timeoutMs = 5000,
    callId?: string,
    extra: Partial<CallFrame> = {},
  ): Promise<ResultFrame> {
    const id = this.nextId++;
    const frame: CallFrame = {
      id,
      platform,
      op,
      args,
      timeoutMs,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      ...(callId ? { callId } : {}),
      ...extra,
    };
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify(frame));
    });
  }

  /** Asks what became of a call id, letting the broker wait up to `waitMs` while it runs. */
  async outcome(platform: string, callId: string, waitMs = 1): Promise<OutcomeReport> {
    const answer = await this.call(platform, OUTCOME_OP, {}, waitMs, callId);
    if (!answer.ok) throw new Error(`outcome query failed: ${JSON.stringify(answer.error)}`);
    return answer.data as OutcomeReport;
  }

  /** A heartbeat: the broker's report on itself and `platform`. */
  async ping(platform: string): Promise<PingReport> {
    const answer = await this.call(platform, PING_OP, {}, 1200);
    if (!answer.ok) throw new Error(`ping failed: ${JSON.stringify(answer.error)}`);
    return answer.data as PingReport;
  }

  /** A failover notice, as an edge object sends it to the broker it moved to. */
  failover(platform: string, args: FailoverArgs | Record<string, unknown>): Promise<ResultFrame> {
    return this.call(platform, FAILOVER_OP, args as Record<string, unknown>, 1000);
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.terminate();
    });
  }
}

/** Polls `probe` until it returns a truthy value or the time is up (the tests' one poll, `test/support/until.ts`). */
export function eventually<T>(probe: () => T | Promise<T>, timeoutMs = 5000, everyMs = 20): Promise<NonNullable<T>> {
  return until(probe, 'condition met', timeoutMs, everyMs);
}

/** The answer as a success, else the test fails with the broker's error. */
export function ok(r: ResultFrame): CallOk {
  if (!r.ok) throw new Error(`call failed: ${JSON.stringify(r.error)}`);
  return r;
}

/** The answer as a failure, else the test fails with the data it got instead. */
export function failed(r: ResultFrame): CallFailed {
  if (r.ok) throw new Error(`call succeeded: ${JSON.stringify(r.data)}`);
  return r;
}
