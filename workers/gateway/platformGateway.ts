/**
 * The platform gateway: one Durable Object per trade platform. It owns the broker link of its platform and the
 * platform's `Idempotency-Key` store, so that a repeated or concurrent duplicate of a change is answered from the
 * first call instead of reaching the trading server twice. Its storage holds only the idempotency records, kept by
 * IdempotencyStore.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import { failure, success, validation, type ShapeContext } from '../envelope/index.js';
import { BrokerLink } from './brokerLink.js';
import { IdempotencyStore } from './idempotencyStore.js';
import { REPLAYED_HEADER, type GatewayCall, type GatewayResponse } from './messages.js';

const byId: ReadonlyMap<string, Operation> = new Map(catalog.map((e) => [e.id, e]));

export class PlatformGateway extends DurableObject<Env> {
  private link: BrokerLink | undefined;
  private readonly idempotency = new IdempotencyStore(this.ctx.storage);
  /** Idempotent calls in flight: a concurrent duplicate waits for the first instead of sending the change again. */
  private readonly inflight = new Map<string, { requestHash: string; done: Promise<GatewayResponse> }>();

  /** Forwards one validated call and answers it shaped for its generation (one RPC per API call). */
  async call(input: GatewayCall): Promise<GatewayResponse> {
    const entry = byId.get(input.operationId);
    if (!entry) throw new Error(`unknown operation ${input.operationId}`);
    const ctx: ShapeContext = { generation: entry.generation, family: input.family, paged: !!entry.paged, traceId: input.traceId };
    if (!input.idempotency) return (await this.forward(input, ctx)).response;

    const { key, requestHash } = input.idempotency;
    const running = this.inflight.get(key);
    if (running) {
      if (running.requestHash !== requestHash) return conflict(ctx);
      return replayed(await running.done);
    }
    const done = this.once(input, ctx);
    this.inflight.set(key, { requestHash, done });
    try {
      return await done;
    } finally {
      this.inflight.delete(key);
    }
  }

  /** Replays a stored answer, refuses a reused key, or forwards and stores the first answer. */
  private async once(input: GatewayCall, ctx: ShapeContext): Promise<GatewayResponse> {
    const { key, requestHash, retentionHours } = input.idempotency!;
    const stored = await this.idempotency.lookup(key, requestHash);
    if (stored.kind === 'conflict') return conflict(ctx);
    if (stored.kind === 'replay') return replayed(stored.response);
    const { response, final } = await this.forward(input, ctx);
    if (final) {
      try {
        await this.idempotency.store(key, requestHash, response, retentionHours);
      } catch (err) {
        // An answer too large for one stored value is still answered; a retry will then reach the platform again.
        console.warn(JSON.stringify({ msg: 'idempotency store failed', key, error: (err as Error).message }));
      }
    }
    return response;
  }

  private async forward(input: GatewayCall, ctx: ShapeContext): Promise<{ response: GatewayResponse; final: boolean }> {
    const r = await this.linkFor(input.brokerUrl).call(
      { platform: input.platform, op: input.op, args: input.args, timeoutMs: input.timeoutMs, traceId: input.traceId },
      input.mutating,
    );
    if (r.ok) return { response: success(ctx, r.data, r.paging), final: true };
    return {
      response: failure(ctx, { ...r.error, outcome: r.outcome, timedOut: r.timedOut, data: r.data }),
      final: !r.outcome && FINAL_FAILURES.has(r.error.code),
    };
  }

  private linkFor(brokerUrl: string): BrokerLink {
    if (this.link?.brokerUrl !== brokerUrl) {
      // The registry moved the platform to another broker: calls still pending on the old link fail as link loss.
      this.link?.close();
      this.link = new BrokerLink(brokerUrl, this.env.BROKER_SECRET ?? '');
    }
    return this.link;
  }

  /** How many idempotency records and expiry index entries are stored: for operators and the retention test. */
  async idempotencyStats(): Promise<{ records: number; expiries: number }> {
    return this.idempotency.stats();
  }

  /** Purges expired idempotency records, then re-arms for the next one. */
  override async alarm(): Promise<void> {
    await this.idempotency.purge();
  }
}

/**
 * Failures the platform decided, stored like a success. A link failure (nothing applied), an unknown outcome or an
 * internal error must leave the caller free to retry or check, and validation failures never reached the platform.
 */
const FINAL_FAILURES: ReadonlySet<string> = new Set(['PF4Error', 'PF5Error', 'NotFound', 'Forbidden']);

function conflict(ctx: ShapeContext): GatewayResponse {
  return validation(ctx, 'Idempotency-Key: already used with a different request');
}

function replayed(r: GatewayResponse): GatewayResponse {
  return { ...r, headers: { ...r.headers, [REPLAYED_HEADER]: 'true' } };
}
