/**
 * One organization's audit trail (docs/audit.md): a Durable Object named after the organization (`auditName`), placed
 * in its jurisdiction when it has one, holding a row per call that is not a read in its SQLite storage.
 *
 * - The edge sends the rows of answered calls in batches (`record`, callAudit.ts), each batch one transaction; a row
 *   sent again (a batch retried after its answer was lost) is stored once, by its `uid`.
 * - An `unknown` outcome is completed when it becomes known: by the key's ledger when its follow-up learns it
 *   (`settle`), or by a later call of the same client with the same Idempotency-Key that was sent and learned an
 *   outcome (the key's ledger ran or replayed it).
 * - Rows older than AUDIT_RETENTION_DAYS are deleted by the object's alarm, once a day while it holds any.
 * - `page` answers rows in the order they were recorded, filtered, at most MAX_PAGE at a time, with the cursor of the
 *   next page; the CSV export walks the pages, so no answer holds more than one page.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import {
  MAX_PAGE,
  type AuditEvent,
  type AuditFilter,
  type AuditOutcome,
  type AuditPage,
  type AuditRow,
} from './auditRecord.js';

const DAY_MS = 86_400_000;

interface Row extends Record<string, SqlStorageValue> {
  id: number;
  uid: string;
  at: string;
  at_ms: number;
  organization: string;
  client: string;
  address: string | null;
  operation: string;
  platform: string | null;
  trace_id: string;
  idempotency_key: string | null;
  outcome: string;
  code: string | null;
  completed_at: string;
  args: string;
}

export class AuditTrail extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private alarmArmed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS audit_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      uid TEXT NOT NULL UNIQUE,
      at TEXT NOT NULL,
      at_ms INTEGER NOT NULL,
      organization TEXT NOT NULL,
      client TEXT NOT NULL,
      address TEXT,
      operation TEXT NOT NULL,
      platform TEXT,
      trace_id TEXT NOT NULL,
      idempotency_key TEXT,
      outcome TEXT NOT NULL,
      code TEXT,
      completed_at TEXT NOT NULL,
      args TEXT NOT NULL
    )`);
    this.sql.exec('CREATE INDEX IF NOT EXISTS audit_events_by_time ON audit_events (at_ms)');
    this.sql.exec(
      'CREATE INDEX IF NOT EXISTS audit_events_by_key ON audit_events (client, idempotency_key) WHERE idempotency_key IS NOT NULL',
    );
  }

  /** Records answered calls, in one transaction; a row already stored (by its `uid`) is not stored again. */
  record(rows: AuditRow[]): void {
    const now = new Date().toISOString();
    for (const row of rows) {
      this.sql.exec(
        `INSERT OR IGNORE INTO audit_events (uid, at, at_ms, organization, client, address, operation, platform, trace_id, idempotency_key, outcome, code, completed_at, args)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        row.uid,
        row.at,
        Date.parse(row.at),
        row.organizationId,
        row.clientId,
        row.address,
        row.operation,
        row.platform?.toLowerCase() ?? null,
        row.traceId,
        row.idempotencyKey,
        row.outcome,
        row.code,
        now,
        row.args,
      );
      if (row.sent && row.idempotencyKey !== null && row.outcome !== 'unknown')
        this.settleKey(row.clientId, row.idempotencyKey, row.outcome, row.code, now);
    }
    if (!this.alarmArmed) void this.arm();
  }

  /**
   * The outcome its ledger learned for a key (a follow-up of a call answered `unknown`): the key's rows still `unknown`
   * are completed with it.
   */
  settle(clientId: string, idempotencyKey: string, outcome: 'applied' | 'refused', code: string | null): void {
    this.settleKey(clientId, idempotencyKey, outcome, code, new Date().toISOString());
  }

  /** One page of the trail, oldest first. */
  page(filter: AuditFilter, after: number, limit: number): AuditPage {
    const where = ['id > ?'];
    const values: SqlStorageValue[] = [after];
    const add = (clause: string, value: SqlStorageValue | undefined) => {
      if (value === undefined) return;
      where.push(clause);
      values.push(value);
    };
    add('at_ms >= ?', filter.fromMs);
    add('at_ms < ?', filter.toMs);
    add('client = ?', filter.clientId);
    add('operation = ?', filter.operation);
    add('platform = ?', filter.platform?.toLowerCase());
    add('outcome = ?', filter.outcome);
    const take = Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
    const rows = this.sql
      .exec<Row>(`SELECT * FROM audit_events WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`, ...values, take + 1)
      .toArray();
    const more = rows.length > take;
    const events = rows.slice(0, take).map(eventOf);
    return { events, next: more ? events[events.length - 1].id : null };
  }

  /** Rows past the retention go; the alarm comes back daily while any row is left. */
  override async alarm(): Promise<void> {
    this.alarmArmed = false;
    const days = configOf(this.env).AUDIT_RETENTION_DAYS;
    if (days > 0) this.sql.exec('DELETE FROM audit_events WHERE at_ms < ?', Date.now() - days * DAY_MS);
    const left = this.sql.exec<{ n: number }>('SELECT count(*) AS n FROM audit_events').one().n;
    if (left > 0) await this.arm();
  }

  /**
   * A forwarded call's known outcome under a key is the key's (its ledger ran or replayed it): it completes the key's
   * earlier calls whose outcome was not known.
   */
  private settleKey(client: string, key: string, outcome: AuditOutcome, code: string | null, now: string): void {
    this.sql.exec(
      "UPDATE audit_events SET outcome = ?, code = ?, completed_at = ? WHERE client = ? AND idempotency_key = ? AND outcome = 'unknown'",
      outcome,
      code,
      now,
      client,
      key,
    );
  }

  private async arm(): Promise<void> {
    this.alarmArmed = true;
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + DAY_MS);
  }
}

function eventOf(r: Row): AuditEvent {
  return {
    id: r.id,
    at: r.at,
    organizationId: r.organization,
    clientId: r.client,
    address: r.address,
    operation: r.operation,
    platform: r.platform,
    traceId: r.trace_id,
    idempotencyKey: r.idempotency_key,
    outcome: r.outcome as AuditOutcome,
    code: r.code,
    completedAt: r.completed_at,
    args: r.args,
  };
}
