/**
 * The platform gateway: one Durable Object per trade platform. It owns the broker link of its platform and the
 * platform's `Idempotency-Key` store, so that a repeated or concurrent duplicate of a change is answered from the
 * first call instead of reaching the trading server twice. All storage access lives in this class.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import { failure, success, validation, type ShapeContext } from '../envelope/index.js';
import { BrokerLink } from './brokerLink.js';
import { REPLAYED_HEADER, type GatewayCall, type GatewayResponse, type StoredResponse } from './messages.js';

const byId: ReadonlyMap<string, Operation> = new Map(catalog.map((e) => [e.id, e]));

const RECORD_PREFIX = 'idem:';
const EXPIRY_PREFIX = 'exp:';
/** Fixed-width time so that lexical order of expiry index keys is time order. */
const stamp = (ms: number) => String(ms).padStart(15, '0');
const PURGE_BATCH = 500;

export class PlatformGateway extends DurableObject<Env> {
  private link: BrokerLink | undefined;
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
    const stored = await this.ctx.storage.get<StoredResponse>(RECORD_PREFIX + key);
    const now = Date.now();
    if (stored && stored.expires > now) {
      if (stored.requestHash !== requestHash) return conflict(ctx);
      return replayed(stored.response);
    }
    const { response, final } = await this.forward(input, ctx);
    if (final) {
      const expires = now + retentionHours * 3_600_000;
      const record: StoredResponse = { requestHash, response, created: now, expires };
      try {
        await this.ctx.storage.put({ [RECORD_PREFIX + key]: record, [`${EXPIRY_PREFIX}${stamp(expires)}:${key}`]: key });
        if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(expires);
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
    const records = (await this.ctx.storage.list({ prefix: RECORD_PREFIX })).size;
    const expiries = (await this.ctx.storage.list({ prefix: EXPIRY_PREFIX })).size;
    return { records, expiries };
  }

  /** Purges expired idempotency records through the expiry index, then re-arms for the next one. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    for (;;) {
      const due = await this.ctx.storage.list<string>({ prefix: EXPIRY_PREFIX, end: `${EXPIRY_PREFIX}${stamp(now + 1)}`, limit: PURGE_BATCH });
      if (due.size === 0) break;
      const doomed: string[] = [];
      for (const [indexKey, key] of due) {
        doomed.push(indexKey);
        // A key reused after expiry has a newer record: only delete the record this index entry describes.
        const record = await this.ctx.storage.get<StoredResponse>(RECORD_PREFIX + key);
        if (record && record.expires <= now) doomed.push(RECORD_PREFIX + key);
      }
      await this.ctx.storage.delete(doomed);
      if (due.size < PURGE_BATCH) break;
    }
    const next = await this.ctx.storage.list<string>({ prefix: EXPIRY_PREFIX, limit: 1 });
    const first = next.keys().next();
    if (!first.done) await this.ctx.storage.setAlarm(Number(first.value.slice(EXPIRY_PREFIX.length, EXPIRY_PREFIX.length + 15)));
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
