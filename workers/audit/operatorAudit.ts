/**
 * The audit rows of the operator's changes (docs/audit.md, "Changes made by the operator"): the registry CLI
 * (`npm run registry`) changes the registry's D1 database itself, not through the edge, so it records its own rows in
 * that database (`operator_audit`, migration 0009), and the edge copies them into each organization's trail.
 *
 * - The CLI writes its row (`begin`, outcome `unknown`) before it makes the change, in the same database, and
 *   completes it after (`complete`: `applied`, or `refused` with the code the API would answer); a command cut off
 *   between the two leaves its row `unknown`, which is what is known of it.
 * - A row names the organization its change belongs to, when it belongs to one that exists (an unknown id belongs to
 *   none: that row is the operator's only, read with `npm run registry -- audit list`).
 * - The edge forwards rows to their organization's trail (operatorForward.ts): completed rows, and rows left unknown
 *   for CUT_OFF_MS. The trail stores a row once by its uid, so a row forwarded twice (a lost answer) is one row.
 *
 * Free of the edge's bindings: the CLI and the edge both use it over any RegistryDatabase.
 */
import type { Jurisdiction } from '../../shared/regions.js';
import { OPERATOR_CLIENT } from '../registry/ids.js';
import type { RegistryDatabase } from '../registry/registryStore.js';
import { MAX_ARGS_CHARS, type AuditOutcome, type AuditRow } from './auditRecord.js';

export { OPERATOR_CLIENT };
/** A row still unknown this long after its command began was cut off with it: forwarded as unknown. */
export const CUT_OFF_MS = 10 * 60_000;
/** The most rows one forwarding pass takes (the next pass, a minute later, takes the rest). */
export const FORWARD_BATCH = 500;
/** The most rows `list` answers. */
export const LIST_MAX = 1000;

/** One change the CLI is about to make. */
export interface OperatorChange {
  /** Who ran it: `user@host` as the CLI saw them. */
  operator: string;
  /** `cli.<noun>.<verb>` (cli.client.add). */
  operation: string;
  organizationId: string | null;
  jurisdiction: Jurisdiction | null;
  platform: string | null;
  traceId: string;
  /** The command's arguments as JSON, already redacted (auditRecord.ts `redactedArgs`). */
  args: string;
}

/** One stored row, as `list` answers it and the edge forwards it. */
export interface OperatorAuditRow extends OperatorChange {
  uid: string;
  at: string;
  outcome: AuditOutcome;
  code: string | null;
  completedAt: string | null;
  forwardedAt: string | null;
}

interface Row {
  uid: string;
  at: string;
  operator: string;
  operation: string;
  organization_id: string | null;
  jurisdiction: string | null;
  platform: string | null;
  trace_id: string;
  outcome: string;
  code: string | null;
  args: string;
  completed_at: string | null;
  forwarded_at: string | null;
}

const COLUMNS =
  'uid, at, operator, operation, organization_id, jurisdiction, platform, trace_id, outcome, code, args, completed_at, forwarded_at';

const rowOf = (r: Row): OperatorAuditRow => ({
  uid: r.uid,
  at: r.at,
  operator: r.operator,
  operation: r.operation,
  organizationId: r.organization_id,
  jurisdiction: r.jurisdiction as Jurisdiction | null,
  platform: r.platform,
  traceId: r.trace_id,
  outcome: r.outcome as AuditOutcome,
  code: r.code,
  args: r.args,
  completedAt: r.completed_at,
  forwardedAt: r.forwarded_at,
});

export class OperatorAudit {
  constructor(private readonly db: RegistryDatabase) {}

  /** Writes the row of a change about to be made, outcome unknown; its uid. */
  async begin(change: OperatorChange, now = new Date()): Promise<string> {
    const uid = crypto.randomUUID();
    await this.db
      .prepare(
        `INSERT INTO operator_audit (uid, at, at_ms, operator, operation, organization_id, jurisdiction, platform, trace_id, outcome, code, args)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'unknown', NULL, ?)`,
      )
      .bind(
        uid,
        now.toISOString(),
        now.getTime(),
        change.operator.slice(0, 200),
        change.operation,
        change.organizationId?.toLowerCase() ?? null,
        change.jurisdiction,
        change.platform?.toLowerCase() ?? null,
        change.traceId,
        change.args.slice(0, MAX_ARGS_CHARS + 100),
      )
      .run();
    return uid;
  }

  /**
   * The change's outcome, once known; `subject` names what it turned out to belong to when that was learned only
   * from the change (the organization an `org add` created).
   */
  async complete(
    uid: string,
    outcome: 'applied' | 'refused',
    code: string | null,
    subject?: { organizationId: string; jurisdiction: Jurisdiction | null; platform?: string | null },
  ): Promise<void> {
    const completedAt = new Date().toISOString();
    if (subject)
      await this.db
        .prepare(
          'UPDATE operator_audit SET outcome = ?, code = ?, completed_at = ?, organization_id = ?, jurisdiction = ?, platform = COALESCE(?, platform) WHERE uid = ?',
        )
        .bind(
          outcome,
          code,
          completedAt,
          subject.organizationId.toLowerCase(),
          subject.jurisdiction,
          subject.platform?.toLowerCase() ?? null,
          uid,
        )
        .run();
    else
      await this.db
        .prepare('UPDATE operator_audit SET outcome = ?, code = ?, completed_at = ? WHERE uid = ?')
        .bind(outcome, code, completedAt, uid)
        .run();
  }

  /**
   * Rows of an organization (or of every organization) not yet forwarded to its trail: those completed, and those
   * cut off (unknown for CUT_OFF_MS), oldest first, at most FORWARD_BATCH.
   */
  async toForward(organizationId?: string, nowMs = Date.now()): Promise<OperatorAuditRow[]> {
    const ready = '(completed_at IS NOT NULL OR at_ms < ?)';
    const statement =
      organizationId === undefined
        ? this.db
            .prepare(
              `SELECT ${COLUMNS} FROM operator_audit WHERE forwarded_at IS NULL AND organization_id IS NOT NULL AND ${ready} ORDER BY at_ms, uid LIMIT ?`,
            )
            .bind(nowMs - CUT_OFF_MS, FORWARD_BATCH)
        : this.db
            .prepare(
              `SELECT ${COLUMNS} FROM operator_audit WHERE forwarded_at IS NULL AND organization_id = ? AND ${ready} ORDER BY at_ms, uid LIMIT ?`,
            )
            .bind(organizationId.toLowerCase(), nowMs - CUT_OFF_MS, FORWARD_BATCH);
    return (await statement.all<Row>()).results.map(rowOf);
  }

  /** Marks rows as stored in their trail. */
  async forwarded(uids: readonly string[]): Promise<void> {
    if (uids.length === 0) return;
    const at = new Date().toISOString();
    await this.db.batch(
      uids.map((uid) => this.db.prepare('UPDATE operator_audit SET forwarded_at = ? WHERE uid = ?').bind(at, uid)),
    );
  }

  /** The newest rows first, of one organization or all, at most `limit` (LIST_MAX). */
  async list(filter: { organizationId?: string; limit?: number } = {}): Promise<OperatorAuditRow[]> {
    const limit = Math.max(1, Math.min(LIST_MAX, Math.floor(filter.limit ?? 100)));
    const statement =
      filter.organizationId === undefined
        ? this.db.prepare(`SELECT ${COLUMNS} FROM operator_audit ORDER BY at_ms DESC, uid LIMIT ?`).bind(limit)
        : this.db
            .prepare(`SELECT ${COLUMNS} FROM operator_audit WHERE organization_id = ? ORDER BY at_ms DESC, uid LIMIT ?`)
            .bind(filter.organizationId.toLowerCase(), limit);
    return (await statement.all<Row>()).results.map(rowOf);
  }

  /** Deletes the rows older than `beforeMs` (the trail's retention). */
  async expire(beforeMs: number): Promise<void> {
    await this.db.prepare('DELETE FROM operator_audit WHERE at_ms < ?').bind(beforeMs).run();
  }
}

/** A stored row as its organization's trail records it: the operator's client id, no source address or key. */
export function trailRowOf(row: OperatorAuditRow & { organizationId: string }): AuditRow {
  return {
    uid: row.uid,
    at: row.at,
    organizationId: row.organizationId,
    clientId: OPERATOR_CLIENT,
    address: null,
    operation: row.operation,
    platform: row.platform,
    traceId: row.traceId,
    idempotencyKey: null,
    outcome: row.outcome,
    code: row.code,
    args: row.args,
    replayed: false,
  };
}
