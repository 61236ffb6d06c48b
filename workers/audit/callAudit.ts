/**
 * The edge's part of the audit trail (docs/audit.md): every call of an operation that is not a read, v1 and v2, and
 * the registry's admin operations, refused ones included, recorded in its organization's trail (auditTrail.ts).
 *
 * A route makes one `CallAudit` per such call (`CallAudit.of`), says what it learned as it validated (the platform, the
 * arguments) and, with the answer, `finish`es it: the row, with its outcome, is written after the answer has gone,
 * never on the call's way; a forwarded call's answer is awaited under `waitUntil`, so a caller that goes away before
 * it does not take the row with it. An isolate's rows of one organization go in one batch per
 * WINDOW_MS (`TrailBatches`), one call to the trail and one transaction for all of them, kept open by `waitUntil`; a
 * batch the trail does not take is tried again (RETRIES), then logged with its trace ids.
 *
 * Recording after the answer is a choice (docs/audit.md, "What a fault can lose"): a row written before each call is
 * sent would put a durable write, and for a caller far from the platform's home a round trip, in front of every
 * change; what recording after can lose is the rows of one isolate's last window when the isolate itself fails.
 *
 * The organization's trail is created in its jurisdiction and in the edge's home region (HOME_REGION): an
 * organization pinned to `eu` keeps its trail there.
 */
import type { Context } from 'hono';
import type { AppEnv, Env } from '../env.js';
import type { Operation } from '../../shared/catalog/index.js';
import { configOf } from '../config.js';
import { placedStub } from '../regions/objects.js';
import { cachedOrganization } from '../registry/platformCache.js';
import { RegistryStore } from '../registry/registryStore.js';
import type { Jurisdiction } from '../../shared/regions.js';
import type { AuditTrail } from './auditTrail.js';
import { auditName, outcomeOf, redactedArgs, type AuditRow } from './auditRecord.js';

/** How long the first row of a window waits for others to go with it; the most rows of one batch. */
export const WINDOW_MS = 100;
const MAX_BATCH = 1000;
/** The longest Idempotency-Key kept (a valid one is at most 255 characters). */
const MAX_KEY_CHARS = 255;
/** A window not sent this long after it began was cut off with its request. */
const STUCK_WINDOW_MS = 10_000;
/** Tries of a batch the trail did not take, after the first, and the wait before each. */
const RETRY_DELAYS_MS = [1_000, 5_000];

export class CallAudit {
  private platform: string | null = null;
  private args = '{}';
  private jurisdiction: Jurisdiction | null | undefined;
  private finished = false;

  private constructor(
    private readonly c: Context<AppEnv>,
    private readonly entry: Operation,
    private readonly at: string,
  ) {}

  /** The call's audit, or null when its operation is a read or the trail is off (AUDIT_RETENTION_DAYS 0). */
  static of(c: Context<AppEnv>, entry: Operation): CallAudit | null {
    if (!entry.mutating || configOf(c.env).AUDIT_RETENTION_DAYS === 0) return null;
    return new CallAudit(c, entry, new Date().toISOString());
  }

  /** The platform the call addresses, and the organization's jurisdiction when the route read it with the platform. */
  addressed(platform: string, jurisdiction?: Jurisdiction | null): void {
    this.platform = platform;
    if (jurisdiction !== undefined) this.jurisdiction = jurisdiction;
  }

  /** The validated arguments, redacted here before they go anywhere. */
  arguments(args: Record<string, unknown>): void {
    this.args = redactedArgs(this.entry, args);
  }

  /**
   * The answer the caller got (once; a later call does nothing): `outcome` as the access log has it (`ok` or the
   * code), whether it was unknown, and whether it was the key's stored answer replayed by its ledger.
   */
  finish(outcome: string, unknown: boolean, replayed = false): void {
    if (this.finished) return;
    this.finished = true;
    const caller = this.c.get('caller');
    const row: AuditRow = {
      uid: crypto.randomUUID(),
      at: this.at,
      organizationId: caller.organizationId,
      clientId: caller.clientId,
      address: caller.address ?? null,
      operation: this.entry.id,
      platform: this.platform,
      traceId: this.c.get('traceId'),
      // Bounded as a valid key is: a refused one may be any length.
      idempotencyKey: this.c.req.header('idempotency-key')?.slice(0, MAX_KEY_CHARS) ?? null,
      args: this.args,
      replayed,
      ...outcomeOf(outcome, unknown),
    };
    batchesOf(caller.organizationId).add(this.c, this.jurisdiction, row);
  }
}

/**
 * The caller's organization's trail: in its jurisdiction (read from the registry unless the route knows it already)
 * and the edge's home region.
 */
export async function auditTrailOf(c: Context<AppEnv>, known?: Jurisdiction | null) {
  const { organizationId } = c.get('caller');
  let jurisdiction = known;
  if (jurisdiction === undefined) {
    const org = await cachedOrganization(organizationId, configOf(c.env).REGISTRY_CACHE_SECONDS, () =>
      new RegistryStore(c.env.DB).findAdminOrganization(organizationId),
    );
    jurisdiction = org?.jurisdiction ?? null;
  }
  return trailStub(c.env, organizationId, jurisdiction);
}

/** An organization's trail object: in its jurisdiction, with the edge's home region as its location hint. */
export function trailStub(env: Env, organizationId: string, jurisdiction: Jurisdiction | null) {
  return placedStub<AuditTrail>(env.AUDIT, auditName(organizationId), {
    region: configOf(env).HOME_REGION,
    jurisdiction,
  });
}

/**
 * An isolate's rows of one organization waiting for their batch: the request that adds the first row of a window sends
 * the batch WINDOW_MS later, kept open by `waitUntil` until the trail took it (or it was given up).
 */
class TrailBatches {
  private rows: AuditRow[] = [];
  /** When the window waiting to be sent began; null: none. */
  private waitingSince: number | null = null;

  add(c: Context<AppEnv>, jurisdiction: Jurisdiction | null | undefined, row: AuditRow): void {
    this.rows.push(row);
    const now = Date.now();
    // A window whose request was cut off before its timer ran is not waited for: the next request sends its rows.
    if (this.waitingSince !== null && now - this.waitingSince < STUCK_WINDOW_MS) return;
    this.waitingSince = now;
    const sent = new Promise<void>((resolve) => setTimeout(resolve, WINDOW_MS)).then(async () => {
      this.waitingSince = null;
      while (this.rows.length > 0) await send(c, jurisdiction, this.rows.splice(0, MAX_BATCH));
    });
    keepRunning(c, sent);
  }
}

/** Keeps the request's context running until `promise` settles, after its answer or its caller's going away. */
export function keepRunning(c: Context<AppEnv>, promise: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(promise);
  } catch {
    // No execution context (an app run outside a worker): the promise still runs.
  }
}

async function send(c: Context<AppEnv>, jurisdiction: Jurisdiction | null | undefined, rows: AuditRow[]) {
  for (let attempt = 0; ; attempt++) {
    try {
      await (await auditTrailOf(c, jurisdiction)).record(rows);
      return;
    } catch (error) {
      if (attempt >= RETRY_DELAYS_MS.length) {
        console.error(
          JSON.stringify({
            msg: 'audit rows not recorded',
            rows: rows.length,
            traceIds: rows.slice(0, 20).map((r) => r.traceId),
            error: String(error),
          }),
        );
        return;
      }
      await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[attempt]));
    }
  }
}

const batchesByOrganization = new Map<string, TrailBatches>();

function batchesOf(organizationId: string): TrailBatches {
  const organization = organizationId.toLowerCase();
  let batches = batchesByOrganization.get(organization);
  if (!batches) {
    // Bounded: an isolate serving very many organizations starts afresh (a batch on its way still completes).
    if (batchesByOrganization.size >= 10_000) batchesByOrganization.clear();
    batchesByOrganization.set(organization, (batches = new TrailBatches()));
  }
  return batches;
}
