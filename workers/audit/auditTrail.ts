/**
 * One organization's audit trail (docs/audit.md): a Durable Object named after the organization (`auditName`), placed
 * in its jurisdiction when it has one, holding a row per call that is not a read in its SQLite storage.
 *
 * - The edge sends the rows of answered calls in batches (`record`, callAudit.ts), each batch one transaction; a row
 *   sent again (a batch retried after its answer was lost) is stored once, by its `uid`.
 * - An `unknown` outcome is completed when it becomes known, by what the key's ledger vouches for: its follow-up
 *   learning it (`settle`), or a later call of the same client with the same Idempotency-Key answered with the key's
 *   stored answer (`replayed`). The vouched outcome is kept (`audit_settled`), so a row of the key that arrives after
 *   it is completed as it is stored.
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
  replayed: number;
}

/**
 * Whether a call's key is one of the idempotency ledgers' (the v1 and v2 API's calls), whose outcomes complete each
 * other's rows. The registry's own changes keep their keys apart (workers/registry/localKeys.ts): the same text used
 * as the key of a trading call and of a webhook change is two keys, and neither completes the other's rows.
 */
const LOCAL_KEYED = 'registry.';
const ledgerKeyed = (operation: string) => !operation.startsWith(LOCAL_KEYED);

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
      args TEXT NOT NULL,
      replayed INTEGER NOT NULL DEFAULT 0
    )`);
    // The outcome each key's ledger vouched for, so a row of the key recorded unknown after it is completed at once.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS audit_settled (
      client TEXT NOT NULL,
      idempotency_key TEXT NOT NULL,
      outcome TEXT NOT NULL,
      code TEXT,
      at_ms INTEGER NOT NULL,
      PRIMARY KEY (client, idempotency_key)
    ) WITHOUT ROWID`);
    this.sql.exec('CREATE INDEX IF NOT EXISTS audit_events_by_time ON audit_events (at_ms)');
    this.sql.exec(
      'CREATE INDEX IF NOT EXISTS audit_events_by_key ON audit_events (client, idempotency_key) WHERE idempotency_key IS NOT NULL',
    );
  }

  /** Records answered calls, in one transaction; a row already stored (by its `uid`) is not stored again. */
  record(rows: AuditRow[]): void {
    const now = new Date().toISOString();
    for (const row of rows) {
      let { outcome, code } = row;
      if (outcome === 'unknown' && row.idempotencyKey !== null && ledgerKeyed(row.operation)) {
        // Its ledger may have vouched for the key's outcome before this row came (another isolate, a retried batch).
        const settled = this.sql
          .exec<{ outcome: string; code: string | null }>(
            'SELECT outcome, code FROM audit_settled WHERE client = ? AND idempotency_key = ?',
            row.clientId,
            row.idempotencyKey,
          )
          .toArray()[0];
        if (settled) ({ outcome, code } = settled as { outcome: AuditOutcome; code: string | null });
      }
      this.sql.exec(
        `INSERT OR IGNORE INTO audit_events (uid, at, at_ms, organization, client, address, operation, platform, trace_id, idempotency_key, outcome, code, completed_at, args, replayed)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
        outcome,
        code,
        now,
        row.args,
        row.replayed ? 1 : 0,
      );
      // A replay is the key's stored answer, which its ledger vouches for: the key's unknown rows are completed by it.
      if (row.replayed && row.idempotencyKey !== null && row.outcome !== 'unknown' && ledgerKeyed(row.operation))
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
    // The time range as a range of ids (rows are stored close to the order they reached the edge, not exactly in it:
    // the range holds every row of the time range, and the time filter itself picks them), walked in id order.
    const bound = (sql: string, at: number) => this.sql.exec<{ id: number | null }>(sql, at).one().id;
    let from = after;
    let to = Number.MAX_SAFE_INTEGER;
    if (filter.fromMs !== undefined)
      from = Math.max(
        from,
        (bound('SELECT min(id) AS id FROM audit_events WHERE at_ms >= ?', filter.fromMs) ?? to) - 1,
      );
    if (filter.toMs !== undefined)
      to = bound('SELECT max(id) AS id FROM audit_events WHERE at_ms < ?', filter.toMs) ?? 0;
    const where = ['id > ?', 'id <= ?'];
    const values: SqlStorageValue[] = [from, to];
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
    // NOT INDEXED: the id range on the table itself, never a sort of every matching row per page.
    const rows = this.sql
      .exec<Row>(
        `SELECT * FROM audit_events NOT INDEXED WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`,
        ...values,
        take + 1,
      )
      .toArray();
    const more = rows.length > take;
    const events = rows.slice(0, take).map(eventOf);
    return { events, next: more ? events[events.length - 1].id : null };
  }

  /** Rows past the retention go; the alarm comes back daily while any row is left. */
  override async alarm(): Promise<void> {
    this.alarmArmed = false;
    if (this.expire()) await this.arm();
  }

  /** Deletes the rows past AUDIT_RETENTION_DAYS (the alarm's work); whether any row is left. */
  expire(now = Date.now()): boolean {
    const days = configOf(this.env).AUDIT_RETENTION_DAYS;
    if (days > 0) {
      const before = now - days * DAY_MS;
      this.sql.exec('DELETE FROM audit_events WHERE at_ms < ?', before);
      this.sql.exec('DELETE FROM audit_settled WHERE at_ms < ?', before);
    }
    return this.sql.exec('SELECT 1 FROM audit_events LIMIT 1').toArray().length > 0;
  }

  /**
   * A forwarded call's known outcome under a key is the key's (its ledger ran or replayed it): it completes the key's
   * earlier calls whose outcome was not known.
   */
  private settleKey(client: string, key: string, outcome: AuditOutcome, code: string | null, now: string): void {
    this.sql.exec(
      'INSERT OR REPLACE INTO audit_settled (client, idempotency_key, outcome, code, at_ms) VALUES (?, ?, ?, ?, ?)',
      client,
      key,
      outcome,
      code,
      Date.now(),
    );
    this.sql.exec(
      "UPDATE audit_events SET outcome = ?, code = ?, completed_at = ? WHERE client = ? AND idempotency_key = ? AND outcome = 'unknown' AND substr(operation, 1, ?) <> ?",
      outcome,
      code,
      now,
      client,
      key,
      LOCAL_KEYED.length,
      LOCAL_KEYED,
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
    replayed: r.replayed === 1,
  };
}
