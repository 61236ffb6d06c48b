/**
 * `Idempotency-Key` for the edge's own changes under /api/v2/ (the webhook endpoints, docs/webhooks.md): no broker
 * runs them, so no idempotency ledger stands in front of them; the key's binding and answer are kept in the registry's
 * D1 database (`local_idempotency`, migration 0010), beside the rows the changes themselves write.
 *
 * The same promises as the v2 API's keys (docs/api.md, "Idempotency-Key and X-Request-Outcome"), per API client for
 * IDEMPOTENCY_RETENTION_HOURS:
 * - the key is bound to the canonical request (`requestHash`) before the change is made, so a concurrent duplicate
 *   finds the binding and is told the first is in progress, and the same key with another request is refused;
 * - the first answer is stored and replayed byte for byte to every repeat, with `Idempotency-Replayed: true` (a
 *   WebhookCreate replay is the creation's answer, its secret included: the caller that lost the answer gets it);
 * - a change that failed without an answer (the edge's own failure) releases the key: nothing was stored of it;
 * - a binding older than RUNNING_MS with no answer was cut off with its worker: the change may have been made, and a
 *   repeat is answered that its outcome cannot be known (not made again under the key).
 *
 * Bounded: a client holds at most MAX_KEYS_PER_CLIENT live keys here; the minute's cron deletes expired ones.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../env.js';
import type { Operation } from '../../shared/catalog/index.js';
import { configOf } from '../config.js';
import { failure, refuse } from '../envelope/index.js';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import {
  canonicalPath,
  IDEMPOTENCY_HEADER,
  idempotencyKeyProblem,
  IN_PROGRESS_MESSAGE,
  requestHash,
  takesLocalKey,
} from '../api/idempotency.js';
import { REPLAYED_HEADER } from '../gateway/messages.js';
import type { RegistryDatabase } from './registryStore.js';

/** The most live keys one client holds for the edge's own changes. */
export const MAX_KEYS_PER_CLIENT = 10_000;
/** Longer than any local change takes: a binding this old without an answer was cut off. */
export const RUNNING_MS = 60_000;

interface Binding {
  fingerprint: string;
  status: number | null;
  content_type: string | null;
  body: string | null;
  created_ms: number;
}

/**
 * Runs `change` at most once per key: its answer, or the answer a repeat gets (replayed, in progress, another
 * request's key, unknown). Without a key header, `change` just runs.
 */
export async function keyedChange(
  c: Context<AppEnv>,
  entry: Operation,
  args: Record<string, unknown>,
  change: () => Promise<Response>,
): Promise<Response> {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined || !takesLocalKey(entry)) return change();
  const problem = idempotencyKeyProblem(key);
  if (problem) return refuse(c, { kind: 'Validation', message: problem });
  const db: RegistryDatabase = c.env.DB;
  const clientId = c.get('caller').clientId;
  const url = new URL(c.req.url);
  const fingerprint = await requestHash(c.req.method, url, args.body, canonicalPath(entry, '', args));
  const now = Date.now();
  const expires = now + configOf(c.env).IDEMPOTENCY_RETENTION_HOURS * 3_600_000;

  const live = await db
    .prepare('SELECT COUNT(*) AS n FROM local_idempotency WHERE client_id = ? AND expires_ms >= ?')
    .bind(clientId, now)
    .first<{ n: number }>();
  // An expired binding of the key is gone, so the insert below binds it afresh.
  await db
    .prepare('DELETE FROM local_idempotency WHERE client_id = ? AND key = ? AND expires_ms < ?')
    .bind(clientId, key, now)
    .run();
  const bound = (await db
    .prepare(
      `INSERT INTO local_idempotency (client_id, key, fingerprint, created_ms, expires_ms)
       SELECT ?, ?, ?, ?, ? WHERE ? < ?
       ON CONFLICT (client_id, key) DO NOTHING`,
    )
    .bind(clientId, key, fingerprint, now, expires, live?.n ?? 0, MAX_KEYS_PER_CLIENT)
    .run()) as { meta?: { changes?: number } };
  if ((bound.meta?.changes ?? 0) === 0) {
    const existing = await db
      .prepare(
        'SELECT fingerprint, status, content_type, body, created_ms FROM local_idempotency WHERE client_id = ? AND key = ?',
      )
      .bind(clientId, key)
      .first<Binding>();
    if (!existing)
      return refuse(c, {
        kind: 'Validation',
        message: `${IDEMPOTENCY_HEADER}: this client holds ${MAX_KEYS_PER_CLIENT} keys of the edge's own changes, the most it may; send without a key, or after older keys expire (IDEMPOTENCY_RETENTION_HOURS)`,
      });
    return repeatAnswer(c, existing, fingerprint, now);
  }

  let answer: Response;
  try {
    answer = await change();
  } catch (error) {
    await db.prepare('DELETE FROM local_idempotency WHERE client_id = ? AND key = ?').bind(clientId, key).run();
    throw error;
  }
  const body = await answer.clone().text();
  await db
    .prepare('UPDATE local_idempotency SET status = ?, content_type = ?, body = ? WHERE client_id = ? AND key = ?')
    .bind(answer.status, answer.headers.get('content-type'), body, clientId, key)
    .run();
  return answer;
}

function repeatAnswer(c: Context<AppEnv>, binding: Binding, fingerprint: string, now: number): Response {
  if (binding.fingerprint !== fingerprint)
    return refuse(c, {
      kind: 'Validation',
      message: `${IDEMPOTENCY_HEADER}: already used with another request; use a fresh key for a new change`,
    });
  if (binding.status !== null)
    return c.body(binding.body ?? '', binding.status as ContentfulStatusCode, {
      ...(binding.content_type ? { 'content-type': binding.content_type } : {}),
      [REPLAYED_HEADER]: 'true',
    });
  const ctx = { generation: 'v2' as const, family: null, paged: false, traceId: c.get('traceId') };
  const shaped =
    now - binding.created_ms < RUNNING_MS
      ? failure(ctx, { code: 'NoConnect', managerCode: null, message: IN_PROGRESS_MESSAGE, outcome: 'unknown' })
      : failure(ctx, {
          code: 'NoConnect',
          managerCode: null,
          outcome: 'unknown',
          message: `${IDEMPOTENCY_HEADER}: the outcome of the first request with this key cannot be known (it was cut off before its answer); it is not made again under this key`,
        });
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...shaped.headers };
  if (now - binding.created_ms < RUNNING_MS) headers['Retry-After'] = '1';
  return c.body(shaped.body, shaped.status as ContentfulStatusCode, headers);
}

/** Deletes the expired keys (the minute's cron). */
export async function expireLocalKeys(db: RegistryDatabase, now = Date.now()): Promise<void> {
  await db.prepare('DELETE FROM local_idempotency WHERE expires_ms < ?').bind(now).run();
}
