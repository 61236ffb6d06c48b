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
 * - a change that failed in the edge itself (a thrown error: its D1 write may have been made before a later step
 *   failed) may have been made: it is answered `Internal` with `X-Request-Outcome: unknown`, and so is every repeat
 *   (replayed): it is not made again under the key;
 * - a binding older than RUNNING_MS with no answer was cut off with its worker, or its answer could not be stored:
 *   the change may have been made, and a repeat is answered that its outcome cannot be known;
 * - the key is the client's within its organization (the organization is in the fingerprint), and a removed client's
 *   keys go with it (RegistryStore.removeClient), so a client id given again never replays another's answer. The keys
 *   of these changes are their own: the same text used as a key of a trading call is another key, in its ledger.
 *
 * Bounded: a client holds at most MAX_KEYS_PER_CLIENT live keys here (a new one past that is refused `TooManyRequests`
 * with `Retry-After`); the minute's cron deletes expired ones.
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
  unknown: number;
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
  const { clientId, organizationId } = c.get('caller');
  const url = new URL(c.req.url);
  const path = `${organizationId.toLowerCase()}${canonicalPath(entry, '', args)}`;
  const fingerprint = await requestHash(c.req.method, url, args.body, path);
  const now = Date.now();
  const expires = now + configOf(c.env).IDEMPOTENCY_RETENTION_HOURS * 3_600_000;

  // An expired binding of the key is gone, so the insert below binds it afresh.
  await db
    .prepare('DELETE FROM local_idempotency WHERE client_id = ? AND key = ? AND expires_ms < ?')
    .bind(clientId, key, now)
    .run();
  // The bound is counted in the insert itself, one statement: concurrent calls cannot pass it together.
  const bound = (await db
    .prepare(
      `INSERT INTO local_idempotency (client_id, key, fingerprint, created_ms, expires_ms)
       SELECT ?, ?, ?, ?, ?
       WHERE (SELECT COUNT(*) FROM local_idempotency WHERE client_id = ? AND expires_ms >= ?) < ?
       ON CONFLICT (client_id, key) DO NOTHING`,
    )
    .bind(clientId, key, fingerprint, now, expires, clientId, now, MAX_KEYS_PER_CLIENT)
    .run()) as { meta?: { changes?: number } };
  if ((bound.meta?.changes ?? 0) === 0) {
    const existing = await db
      .prepare(
        'SELECT fingerprint, status, unknown, content_type, body, created_ms FROM local_idempotency WHERE client_id = ? AND key = ?',
      )
      .bind(clientId, key)
      .first<Binding>();
    if (!existing) {
      const oldest = await db
        .prepare('SELECT MIN(expires_ms) AS at FROM local_idempotency WHERE client_id = ? AND expires_ms >= ?')
        .bind(clientId, now)
        .first<{ at: number | null }>();
      const seconds = Math.max(1, Math.ceil(((oldest?.at ?? now + 1000) - now) / 1000));
      return refuse(c, {
        kind: 'TooManyRequests',
        message: `${IDEMPOTENCY_HEADER}: this client holds ${MAX_KEYS_PER_CLIENT} keys of the edge's own changes, the most it may; nothing was changed; retry after ${seconds} s, when older keys expire, or send without a key`,
        headers: { 'Retry-After': String(seconds) },
      });
    }
    return repeatAnswer(c, existing, fingerprint, now);
  }

  const bookkeepingFailed = (error: unknown) =>
    console.error(
      JSON.stringify({ msg: 'idempotency key not completed', traceId: c.get('traceId'), error: String(error) }),
    );
  let answer: Response;
  try {
    answer = await change();
  } catch (error) {
    // It may have been made (a D1 write before the step that failed): never made again under this key.
    console.error(
      JSON.stringify({
        msg: 'keyed change failed',
        traceId: c.get('traceId'),
        operation: entry.id,
        error: String(error),
      }),
    );
    await db
      .prepare('UPDATE local_idempotency SET unknown = 1 WHERE client_id = ? AND key = ?')
      .bind(clientId, key)
      .run()
      .catch(bookkeepingFailed);
    return unknownAnswer(c, false);
  }
  const body = await answer.clone().text();
  // The change is made: should its answer not be stored, the caller still gets it (a repeat hears, after RUNNING_MS,
  // that the outcome cannot be known).
  await db
    .prepare('UPDATE local_idempotency SET status = ?, content_type = ?, body = ? WHERE client_id = ? AND key = ?')
    .bind(answer.status, answer.headers.get('content-type'), body, clientId, key)
    .run()
    .catch(bookkeepingFailed);
  return answer;
}

/** An answer whose outcome is not known (`X-Request-Outcome: unknown`), with `headers` beside the envelope's. */
function unknownOutcome(
  c: Context<AppEnv>,
  code: 'Internal' | 'NoConnect',
  message: string,
  headers: Record<string, string> = {},
): Response {
  const ctx = { generation: 'v2' as const, family: null, paged: false, traceId: c.get('traceId') };
  const shaped = failure(ctx, { code, managerCode: null, outcome: 'unknown', message });
  return c.body(shaped.body, shaped.status as ContentfulStatusCode, {
    'content-type': 'application/json; charset=utf-8',
    ...shaped.headers,
    ...headers,
  });
}

/** The answer of a change that failed in the edge and may have been made: the first call's, and (replayed) a repeat's. */
function unknownAnswer(c: Context<AppEnv>, repeat: boolean): Response {
  return unknownOutcome(
    c,
    'Internal',
    `${IDEMPOTENCY_HEADER}: the ${repeat ? 'first request with this key' : 'change'} failed in the gateway and may have been made; check its state: it is not made again under this key`,
    repeat ? { [REPLAYED_HEADER]: 'true' } : {},
  );
}

function repeatAnswer(c: Context<AppEnv>, binding: Binding, fingerprint: string, now: number): Response {
  if (binding.fingerprint !== fingerprint)
    return refuse(c, {
      kind: 'Validation',
      message: `${IDEMPOTENCY_HEADER}: already used with another request; use a fresh key for a new change`,
    });
  if (binding.unknown === 1) return unknownAnswer(c, true);
  if (binding.status !== null)
    return c.body(binding.body ?? '', binding.status as ContentfulStatusCode, {
      ...(binding.content_type ? { 'content-type': binding.content_type } : {}),
      [REPLAYED_HEADER]: 'true',
    });
  if (now - binding.created_ms < RUNNING_MS)
    return unknownOutcome(c, 'NoConnect', IN_PROGRESS_MESSAGE, { 'Retry-After': '1' });
  return unknownOutcome(
    c,
    'NoConnect',
    `${IDEMPOTENCY_HEADER}: the outcome of the first request with this key cannot be known (it was cut off before its answer); it is not made again under this key`,
    { [REPLAYED_HEADER]: 'true' },
  );
}

/** Deletes the expired keys (the minute's cron). */
export async function expireLocalKeys(db: RegistryDatabase, now = Date.now()): Promise<void> {
  await db.prepare('DELETE FROM local_idempotency WHERE expires_ms < ?').bind(now).run();
}
