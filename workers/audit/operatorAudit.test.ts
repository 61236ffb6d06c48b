/**
 * The operator's audit rows on a migrated registry: written unknown and completed, what the edge forwards (completed
 * rows, and rows cut off for CUT_OFF_MS, never rows of no organization, never twice), the trail row each becomes,
 * newest-first listing, and the retention.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startRegistryDb, type RegistryDb } from '../../test/support/registryDb.js';
import { CUT_OFF_MS, OPERATOR_CLIENT, OperatorAudit, trailRowOf, type OperatorChange } from './operatorAudit.js';

let registry: RegistryDb;
let audit: OperatorAudit;
const ORG = randomUUID();

beforeAll(async () => {
  registry = await startRegistryDb();
  audit = new OperatorAudit(registry.db);
});
afterAll(() => registry?.close());

const change = (operation: string, organizationId: string | null = ORG): OperatorChange => ({
  operator: 'ops@host',
  operation,
  organizationId,
  jurisdiction: organizationId ? 'eu' : null,
  platform: null,
  traceId: randomUUID(),
  args: '{"flags":{},"arguments":[]}',
});

describe('operator audit rows', () => {
  it('forwards completed and cut-off rows of an organization once, and keeps rows of none to the operator', async () => {
    const t0 = Date.now();
    const applied = await audit.begin(change('cli.platform.home'), new Date(t0 - 3000));
    const refused = await audit.begin(change('cli.client.scopes'), new Date(t0 - 2000));
    const running = await audit.begin(change('cli.client.add'), new Date(t0 - 1000));
    const cutOff = await audit.begin(change('cli.org.remove'), new Date(t0 - CUT_OFF_MS - 1000));
    const orphan = await audit.begin(change('cli.client.remove', null), new Date(t0 - 500));
    await audit.complete(applied, 'applied', null);
    await audit.complete(refused, 'refused', 'Validation');
    await audit.complete(orphan, 'refused', 'NotFound');

    const waiting = await audit.toForward(ORG, t0);
    expect(waiting.map((r) => [r.uid, r.outcome, r.code])).toStrictEqual([
      [cutOff, 'unknown', null],
      [applied, 'applied', null],
      [refused, 'refused', 'Validation'],
    ]);
    // Every organization's: the orphan is not among them; the running row waits for its outcome.
    expect((await audit.toForward(undefined, t0)).map((r) => r.uid)).toStrictEqual(waiting.map((r) => r.uid));
    const row = trailRowOf({ ...waiting[1], organizationId: ORG });
    expect(row).toStrictEqual({
      uid: applied,
      at: new Date(t0 - 3000).toISOString(),
      organizationId: ORG,
      clientId: OPERATOR_CLIENT,
      address: null,
      operation: 'cli.platform.home',
      platform: null,
      traceId: waiting[1].traceId,
      idempotencyKey: null,
      outcome: 'applied',
      code: null,
      args: '{"flags":{},"arguments":[]}',
      replayed: false,
    });

    await audit.forwarded(waiting.map((r) => r.uid));
    expect(await audit.toForward(ORG, t0)).toStrictEqual([]);
    await audit.complete(running, 'applied', null);
    expect((await audit.toForward(ORG, t0)).map((r) => r.uid)).toStrictEqual([running]);

    // A change that learned its organization (org add) is completed with it.
    const added = await audit.begin(change('cli.org.add', null), new Date(t0));
    const other = randomUUID();
    await audit.complete(added, 'applied', null, { organizationId: other.toUpperCase(), jurisdiction: null });
    expect((await audit.toForward(other, t0)).map((r) => [r.uid, r.organizationId, r.jurisdiction])).toStrictEqual([
      [added, other, null],
    ]);

    const listed = await audit.list({ organizationId: ORG, limit: 2 });
    expect(listed.map((r) => r.uid)).toStrictEqual([running, refused]);
    expect((await audit.list()).map((r) => r.uid)).toContain(orphan);

    await audit.expire(t0 - 1500);
    expect((await audit.list({ limit: 1000 })).map((r) => r.uid).sort()).toStrictEqual([running, orphan, added].sort());
  });
});
