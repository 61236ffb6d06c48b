/**
 * The edge's half of the operator's audit rows (operatorAudit.ts): it copies the rows the registry CLI wrote into
 * each organization's trail, on the minute's cron and before an organization's trail is read (so a read right after a
 * CLI change sees it), and deletes the rows older than AUDIT_RETENTION_DAYS. With the trail off (retention 0) nothing
 * is forwarded.
 */
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import { trailStub } from './callAudit.js';
import { OperatorAudit, trailRowOf, type OperatorAuditRow } from './operatorAudit.js';

const DAY_MS = 86_400_000;

/** Forwards the waiting rows (of one organization, or of all): how many went. */
export async function forwardOperatorRows(env: Env, organizationId?: string): Promise<number> {
  const days = configOf(env).AUDIT_RETENTION_DAYS;
  if (days === 0) return 0;
  const audit = new OperatorAudit(env.DB);
  const rows = await audit.toForward(organizationId);
  const byTrail = new Map<string, Array<OperatorAuditRow & { organizationId: string }>>();
  for (const row of rows) {
    if (row.organizationId === null) continue;
    const key = `${row.organizationId} ${row.jurisdiction ?? ''}`;
    byTrail.set(key, [...(byTrail.get(key) ?? []), row as OperatorAuditRow & { organizationId: string }]);
  }
  let sent = 0;
  for (const trailRows of byTrail.values()) {
    const { organizationId: org, jurisdiction } = trailRows[0];
    await trailStub(env, org, jurisdiction).record(trailRows.map(trailRowOf));
    await audit.forwarded(trailRows.map((r) => r.uid));
    sent += trailRows.length;
  }
  if (organizationId === undefined) await audit.expire(Date.now() - days * DAY_MS);
  return sent;
}
