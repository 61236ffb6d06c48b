/**
 * The audit trail's read routes (docs/audit.md), for the organization's clients holding `webapi.audit`: a page of the
 * trail as JSON (`GET /api/AuditEvents`), and the whole of a filter as CSV (`GET /api/AuditEvents/Export`), streamed
 * page by page so that an export of any length holds one page in memory. Either first forwards the rows of the
 * operator's registry CLI changes still waiting (operatorForward.ts), so a read right after such a change sees it.
 */
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env.js';
import { registryOperations } from '../../shared/catalog/registry.js';
import { localRoute } from '../registry/registryRoutes.js';
import { auditTrailOf } from './callAudit.js';
import { forwardOperatorRows } from './operatorForward.js';
import { CSV_HEADER, csvLine, MAX_PAGE, type AuditFilter, type AuditOutcome } from './auditRecord.js';

const DEFAULT_PAGE = 100;

function filterOf(args: Record<string, unknown>): AuditFilter {
  const time = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : undefined);
  return {
    fromMs: time(args.from),
    toMs: time(args.to),
    clientId: args.clientId as string | undefined,
    operation: args.operation as string | undefined,
    platform: args.platform as string | undefined,
    outcome: args.outcome as AuditOutcome | undefined,
  };
}

export function auditRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get(
    '/api/AuditEvents/Export',
    localRoute(registryOperations.AuditEventsExport, async (c, args) => exportCsv(c, filterOf(args))),
  );

  app.get(
    '/api/AuditEvents',
    localRoute(registryOperations.AuditEvents, async (c, args) => {
      const trail = await currentTrail(c);
      const page = await trail.page(filterOf(args), Number(args.cursor ?? 0), (args.limit as number) ?? DEFAULT_PAGE);
      return c.json({ events: page.events, nextCursor: page.next === null ? null : String(page.next) });
    }),
  );

  return app;
}

/**
 * The organization's trail, with the operator's waiting rows forwarded into it; a failed forwarding is logged and
 * the trail read as it is (the minute's cron tries again).
 */
async function currentTrail(c: Context<AppEnv>) {
  await forwardOperatorRows(c.env, c.get('caller').organizationId).catch((error: unknown) =>
    console.error(
      JSON.stringify({ msg: 'operator audit rows not forwarded', traceId: c.get('traceId'), error: String(error) }),
    ),
  );
  return auditTrailOf(c);
}

async function exportCsv(c: Context<AppEnv>, filter: AuditFilter): Promise<Response> {
  const trail = await currentTrail(c);
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const encoder = new TextEncoder();
  // Each write waits for the caller to take the one before: the export holds at most a page.
  const pump = (async () => {
    await writer.write(encoder.encode(CSV_HEADER));
    let after = 0;
    for (;;) {
      const page = await trail.page(filter, after, MAX_PAGE);
      if (page.events.length > 0) await writer.write(encoder.encode(page.events.map(csvLine).join('')));
      if (page.next === null) break;
      after = page.next;
    }
    await writer.close();
  })().catch(async (error: unknown) => {
    console.error(JSON.stringify({ msg: 'audit export failed', traceId: c.get('traceId'), error: String(error) }));
    await writer.abort(error).catch(() => {});
  });
  try {
    c.executionCtx.waitUntil(pump);
  } catch {
    // No execution context (an app run outside a worker): the pump still runs as the body is read.
  }
  const day = new Date().toISOString().slice(0, 10);
  return c.body(readable, 200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="audit-${c.get('caller').organizationId}-${day}.csv"`,
    'cache-control': 'no-store',
  });
}
