/**
 * The edge's half of the operator's audit rows (operatorAudit.ts): it copies the rows the registry CLI wrote into
 * each organization's trail, on the minute's cron and before an organization's trail is read (so a read right after a
 * CLI change sees it), and deletes the rows older than AUDIT_RETENTION_DAYS. A row goes to the trail its organization
 * has now (in its current jurisdiction; the one of the change for an organization since removed). One trail that
 * fails leaves its rows for the next pass and holds up no other. With the trail off (retention 0) nothing is
 * forwarded and the rows are deleted.
 */
import type { Env } from '../env.js';
import type { Jurisdiction } from '../../shared/regions.js';
import { configOf } from '../config.js';
import { RegistryStore } from '../registry/registryStore.js';
import { trailStub } from './callAudit.js';
import { OperatorAudit, trailRowOf, type OperatorAuditRow } from './operatorAudit.js';

const DAY_MS = 86_400_000;

type OrganizationRow = OperatorAuditRow & { organizationId: string };

/** Forwards the waiting rows (of one organization, or of all): how many went. */
export async function forwardOperatorRows(env: Env, organizationId?: string): Promise<number> {
  const days = configOf(env).AUDIT_RETENTION_DAYS;
  const audit = new OperatorAudit(env.DB);
  if (days === 0) {
    if (organizationId === undefined) await audit.expire(Date.now() + DAY_MS);
    return 0;
  }
  const registry = new RegistryStore(env.DB);
  const rows = await audit.toForward(organizationId);
  const byOrganization = new Map<string, OrganizationRow[]>();
  for (const row of rows) {
    if (row.organizationId === null) continue;
    const rows = byOrganization.get(row.organizationId);
    if (rows) rows.push(row as OrganizationRow);
    else byOrganization.set(row.organizationId, [row as OrganizationRow]);
  }
  let sent = 0;
  for (const [org, trailRows] of byOrganization) {
    try {
      const current = await registry.findAdminOrganization(org);
      // Rows of one organization may name different jurisdictions (a change of it between them): each goes where
      // the organization's trail is read now, or for a removed organization where it was when the row was written.
      const groups = new Map<Jurisdiction | null, OrganizationRow[]>();
      for (const row of trailRows) {
        const place = current ? current.jurisdiction : row.jurisdiction;
        const group = groups.get(place);
        if (group) group.push(row);
        else groups.set(place, [row]);
      }
      for (const [jurisdiction, group] of groups) {
        await trailStub(env, org, jurisdiction).record(group.map(trailRowOf));
        await audit.forwarded(group.map((r) => r.uid));
        sent += group.length;
      }
    } catch (error) {
      console.error(
        JSON.stringify({
          msg: 'operator audit rows not forwarded',
          organization: org,
          rows: trailRows.length,
          error: String(error),
        }),
      );
    }
  }
  if (organizationId === undefined) await audit.expire(Date.now() - days * DAY_MS);
  return sent;
}
