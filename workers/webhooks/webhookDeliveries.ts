/**
 * One webhook endpoint's deliveries: a Durable Object per endpoint (named by its id, SQLite storage) that keeps every
 * event addressed to the endpoint, sends each through the deliveries queue (Cloudflare Queues: `WEBHOOK_DELIVERIES`,
 * whose consumer, `webhookQueue.ts`, hands each message back here) and makes the attempts itself:
 *
 * - an event is taken once per endpoint (by its id), so an event seen again after a gap is not sent twice;
 * - each account's events go in the order they were taken: an event waits while an earlier one of the same account
 *   is still pending (the platform's own events are one more such account);
 * - at most WEBHOOK_MAX_IN_FLIGHT attempts run at once; a message over it waits its turn;
 * - an attempt that fails is tried again by the queue after `retryDelaySeconds` (backoff with jitter, the receiver's
 *   `Retry-After` when longer) until WEBHOOK_RETRY_HOURS after the first attempt, then the event is a dead letter,
 *   kept for a redelivery (so is a message the queue itself gave up on, through its dead-letter queue); once the
 *   receiver takes a delivery again after an outage, the events that waited out their backoff through it are tried at
 *   once (`catchUp`);
 * - a `410 Gone` disables the endpoint at once, and failing every attempt for WEBHOOK_DISABLE_AFTER_DAYS disables it
 *   too, each with its reason; events of a disabled endpoint become dead letters;
 * - every attempt is logged (time, status, latency, error), the last ATTEMPTS_KEPT of them kept.
 *
 * Events, delivered or not, are kept EVENTS_KEPT_DAYS for a redelivery of one event or of a time range.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import { WebhookStore, type SigningEndpoint } from './webhookStore.js';
import { deliveryHeaders } from './signature.js';
import {
  failedTooLong,
  MAX_QUEUE_DELAY_SECONDS,
  retryAfterSeconds,
  retryDelaySeconds,
  withinRetryWindow,
} from './retryPolicy.js';
import { dnsOverHttps, targetProblem, type Resolver } from './webhookTargets.js';
import { deliveryBody, type WebhookEvent } from './webhookEvents.js';

/** A queue message: which endpoint, which of its events. */
export interface QueuedDelivery {
  endpoint: string;
  seq: number;
  eventId: string;
}

/** What the queue consumer does with a message after an attempt, or after the object decided not to make one. */
export type DeliveryStep =
  | { ack: true }
  /** `attempted`: an attempt failed (a retry of the queue's); otherwise the event waits its turn. */
  | { ack: false; retryDelaySeconds: number; attempted: boolean };

export interface WebhookAttempt {
  at: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: number | null;
  latencyMs: number;
  error: string | null;
  outcome: 'delivered' | 'retrying' | 'deadLettered' | 'endpointDisabled';
}

export interface WebhookDeadLetter {
  at: string;
  eventId: string;
  eventType: string;
  attempts: number;
  lastError: string | null;
}

/** The largest delivery body: an event over it is sent without its record, and says so. */
export const MAX_DELIVERY_BYTES = 256 * 1024;
/** How many attempts the log keeps, and how long events are kept for redelivery. */
export const ATTEMPTS_KEPT = 1000;
export const EVENTS_KEPT_DAYS = 30;
/** The most events one redelivery of a time range queues. */
export const MAX_REDELIVERY = 1000;
const DAY_MS = 86_400_000;
/** How often pending events are checked for a lost message, and how long past due a message counts as lost. */
const SWEEP_MS = 60_000;
const QUEUE_LOST_MS = 120_000;
const ENDPOINT_CACHE_MS = 5000;
/** A message this early for its event's next attempt still makes it (the queue's delays are not to the millisecond). */
const DUE_SLACK_MS = 2000;
const NAME_CACHE_MS = 60_000;

type EventRow = {
  seq: number;
  event_id: string;
  type: string;
  order_key: string;
  body: string;
  taken_at: number;
  state: 'pending' | 'delivered' | 'dead' | 'dropped';
  attempts: number;
  first_attempt_at: number | null;
  next_attempt_at: number | null;
  last_error: string | null;
  finished_at: number | null;
  seen_at: number | null;
};

export class WebhookDeliveries extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private endpoint: { value: SigningEndpoint | null; at: number } | undefined;
  private inFlight = 0;
  private readonly attempting = new Set<number>();
  private readonly names = new Map<string, { problem: string | null; at: number }>();
  /** How names resolve; a test replaces it. */
  resolver: Resolver = dnsOverHttps;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      event_id TEXT NOT NULL UNIQUE,
      type TEXT NOT NULL,
      order_key TEXT NOT NULL,
      body TEXT NOT NULL,
      taken_at INTEGER NOT NULL,
      state TEXT NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      first_attempt_at INTEGER,
      next_attempt_at INTEGER,
      last_error TEXT,
      finished_at INTEGER,
      seen_at INTEGER
    )`);
    this.sql.exec('CREATE INDEX IF NOT EXISTS events_pending ON events (order_key, state, seq)');
    this.sql.exec('CREATE INDEX IF NOT EXISTS events_taken ON events (taken_at)');
    this.sql.exec(`CREATE TABLE IF NOT EXISTS attempts (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL,
      event_id TEXT NOT NULL,
      event_type TEXT NOT NULL,
      attempt INTEGER NOT NULL,
      status INTEGER,
      latency_ms INTEGER NOT NULL,
      error TEXT,
      outcome TEXT NOT NULL
    )`);
    this.sql.exec('CREATE INDEX IF NOT EXISTS attempts_of_event ON attempts (event_id, id)');
    this.sql.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  }

  /**
   * Takes events for the endpoint `endpointId` (this object's own) and queues each one not taken before; answers the
   * ids queued. Nothing is half taken: an event whose queueing failed is not kept, and the error goes to the caller.
   */
  async accept(endpointId: string, events: WebhookEvent[]): Promise<string[]> {
    this.sql.exec('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)', 'endpoint', endpointId);
    const now = Date.now();
    const taken: QueuedDelivery[] = [];
    for (const event of events) {
      const body = boundedBody(event);
      const row = this.sql
        .exec<{ seq: number }>(
          `INSERT INTO events (event_id, type, order_key, body, taken_at, state) VALUES (?, ?, ?, ?, ?, 'pending')
           ON CONFLICT (event_id) DO NOTHING RETURNING seq`,
          event.id,
          event.type,
          event.login === null ? 'platform' : `login:${event.login}`,
          body,
          now,
        )
        .toArray()[0];
      if (row) taken.push({ endpoint: endpointId, seq: row.seq, eventId: event.id });
    }
    await this.queue(taken, true);
    await this.keepTidy();
    return taken.map((t) => t.eventId);
  }

  /**
   * One attempt of event `seq`, or why it waits: what the queue consumer does with its message. A message for an
   * event that is not due (a duplicate: the due one is on its way) or whose attempt is running is let go; a wait
   * (an earlier event of the account pending, every slot in flight) is not an attempt and costs none of the
   * queue's retries (the consumer sends the message again with the delay).
   */
  async deliver(seq: number): Promise<DeliveryStep> {
    const now = Date.now();
    const row = this.pendingRow(seq);
    if (!row || this.attempting.has(seq)) return { ack: true };
    if (row.next_attempt_at !== null && row.next_attempt_at > now + DUE_SLACK_MS) return { ack: true };
    // Claimed before the first wait on I/O: a duplicate message meanwhile is let go above.
    this.attempting.add(seq);
    try {
      // Its message is alive: the sweep leaves it to the queue.
      this.sql.exec('UPDATE events SET seen_at = ? WHERE seq = ?', now, seq);
      const endpoint = await this.currentEndpoint();
      const current = this.pendingRow(seq);
      if (!current) return { ack: true };
      if (!endpoint) {
        this.finish(current, 'dropped', 'the endpoint was removed');
        return { ack: true };
      }
      if (!endpoint.enabled) {
        const why = `the endpoint is disabled: ${endpoint.disabledReason ?? ''}`;
        this.finish(current, 'dead', why);
        this.logAttempt(current, null, 0, why, 'endpointDisabled');
        return { ack: true };
      }
      const config = configOf(this.env);
      const earlier = this.sql
        .exec<{ next_attempt_at: number | null }>(
          "SELECT next_attempt_at FROM events WHERE order_key = ? AND state = 'pending' AND seq < ? ORDER BY seq LIMIT 1",
          current.order_key,
          seq,
        )
        .toArray()[0];
      const at = Date.now();
      if (earlier || this.inFlight >= config.WEBHOOK_MAX_IN_FLIGHT) {
        // After the earlier event's next attempt, and a second for it to be made; a second for a free slot.
        const wait = !earlier
          ? 1
          : earlier.next_attempt_at === null
            ? 2
            : Math.max(1, Math.ceil((earlier.next_attempt_at - at) / 1000) + 1);
        this.sql.exec('UPDATE events SET next_attempt_at = ? WHERE seq = ?', at + wait * 1000, seq);
        return { ack: false, retryDelaySeconds: wait, attempted: false };
      }
      if (
        current.first_attempt_at !== null &&
        !withinRetryWindow(current.first_attempt_at, config.WEBHOOK_RETRY_HOURS, at)
      ) {
        this.finish(current, 'dead', current.last_error);
        this.logAttempt(current, null, 0, `not delivered within ${config.WEBHOOK_RETRY_HOURS} hours`, 'deadLettered');
        return { ack: true };
      }
      this.inFlight++;
      try {
        return await this.attempt(current, endpoint);
      } finally {
        this.inFlight--;
      }
    } finally {
      this.attempting.delete(seq);
    }
  }

  /**
   * The queue gave up on event `seq` (its dead-letter queue): queued again while its retry window lasts (the
   * object's own limit), a dead letter after it, unless it was delivered.
   */
  async deadLetter(seq: number, reason: string): Promise<void> {
    const row = this.pendingRow(seq);
    const endpointId = this.endpointId();
    if (!row || !endpointId) return;
    const hours = configOf(this.env).WEBHOOK_RETRY_HOURS;
    if (row.first_attempt_at === null || withinRetryWindow(row.first_attempt_at, hours)) {
      await this.queue([{ endpoint: endpointId, seq, eventId: row.event_id }], false);
      return;
    }
    this.finish(row, 'dead', reason);
    this.logAttempt(row, null, 0, reason, 'deadLettered');
  }

  private pendingRow(seq: number): EventRow | undefined {
    const row = this.sql.exec<EventRow>('SELECT * FROM events WHERE seq = ?', seq).toArray()[0];
    return row?.state === 'pending' ? row : undefined;
  }

  /** Queues again one event, or every event taken in [from, to): the same webhook-id, a fresh retry window. */
  async redeliver(selection: { eventId: string } | { from: string; to: string }): Promise<string[]> {
    const endpointId = this.endpointId();
    if (!endpointId) return [];
    const rows =
      'eventId' in selection
        ? this.sql.exec<EventRow>('SELECT * FROM events WHERE event_id = ?', selection.eventId).toArray()
        : this.sql
            .exec<EventRow>(
              'SELECT * FROM events WHERE taken_at >= ? AND taken_at < ? ORDER BY seq LIMIT ?',
              Date.parse(selection.from),
              Date.parse(selection.to),
              MAX_REDELIVERY,
            )
            .toArray();
    for (const row of rows) {
      this.sql.exec(
        "UPDATE events SET state = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = NULL, last_error = NULL, finished_at = NULL WHERE seq = ?",
        row.seq,
      );
    }
    // A failed send leaves them pending: the sweep queues them.
    await this.keepTidy();
    await this.queue(
      rows.map((row) => ({ endpoint: endpointId, seq: row.seq, eventId: row.event_id })),
      false,
    );
    return rows.map((row) => row.event_id);
  }

  /** The endpoint changed (its URL, secret, standing): the next attempt reads it afresh. */
  refresh(): void {
    this.endpoint = undefined;
    this.names.clear();
    // Enabled again, or pointed elsewhere: its failures start afresh, and the old receiver's asked wait is no more.
    // Its outage is kept: the first delivery after the change catches it up.
    this.sql.exec("DELETE FROM meta WHERE key IN ('failing_since', 'asked_wait_until')");
  }

  /** The last attempts, newest first, or those of one event. */
  attempts(limit: number, eventId?: string): WebhookAttempt[] {
    return this.sql
      .exec<{
        at: number;
        event_id: string;
        event_type: string;
        attempt: number;
        status: number | null;
        latency_ms: number;
        error: string | null;
        outcome: WebhookAttempt['outcome'];
      }>(
        eventId === undefined
          ? 'SELECT * FROM attempts ORDER BY id DESC LIMIT ?'
          : 'SELECT * FROM attempts WHERE event_id = ? ORDER BY id DESC LIMIT ?',
        ...(eventId === undefined ? [limit] : [eventId, limit]),
      )
      .toArray()
      .map((r) => ({
        at: new Date(r.at).toISOString(),
        eventId: r.event_id,
        eventType: r.event_type,
        attempt: r.attempt,
        status: r.status,
        latencyMs: r.latency_ms,
        error: r.error,
        outcome: r.outcome,
      }));
  }

  /** The dead letters, newest first. */
  deadLetters(limit: number): WebhookDeadLetter[] {
    return this.sql
      .exec<EventRow>("SELECT * FROM events WHERE state = 'dead' ORDER BY finished_at DESC, seq DESC LIMIT ?", limit)
      .toArray()
      .map((r) => ({
        at: new Date(r.finished_at ?? r.taken_at).toISOString(),
        eventId: r.event_id,
        eventType: r.type,
        attempts: r.attempts,
        lastError: r.last_error,
      }));
  }

  /**
   * Every minute while events are pending: a pending event whose message has not come for QUEUE_LOST_MS past when it
   * was due is queued again (a queue that lost its messages: a local edge restarted; on Cloudflare a stray duplicate,
   * which the object answers at once). Daily: events past EVENTS_KEPT_DAYS go (pending ones stay).
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const endpointId = this.endpointId();
    const lost = this.sql
      .exec<EventRow>(
        `SELECT * FROM events WHERE state = 'pending'
         AND MAX(taken_at, COALESCE(seen_at, 0), COALESCE(next_attempt_at, 0)) < ? ORDER BY seq LIMIT ?`,
        now - QUEUE_LOST_MS,
        MAX_REDELIVERY,
      )
      .toArray();
    if (endpointId && lost.length > 0) {
      for (const row of lost) this.sql.exec('UPDATE events SET seen_at = ? WHERE seq = ?', now, row.seq);
      await this.queue(
        lost.map((row) => ({ endpoint: endpointId, seq: row.seq, eventId: row.event_id })),
        false,
      );
    }
    const cleaned = Number(
      this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'cleaned'").toArray()[0]?.value ?? 0,
    );
    if (now - cleaned >= DAY_MS) {
      this.sql.exec("DELETE FROM events WHERE taken_at < ? AND state <> 'pending'", now - EVENTS_KEPT_DAYS * DAY_MS);
      this.sql.exec(
        "INSERT INTO meta (key, value) VALUES ('cleaned', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        String(now),
      );
    }
    await this.keepTidy();
  }

  private async attempt(row: EventRow, endpoint: SigningEndpoint): Promise<DeliveryStep> {
    const config = configOf(this.env);
    const started = Date.now();
    const number = row.attempts + 1;
    this.sql.exec(
      'UPDATE events SET attempts = ?, first_attempt_at = COALESCE(first_attempt_at, ?) WHERE seq = ?',
      number,
      started,
      row.seq,
    );
    let status: number | null = null;
    let error: string | null = null;
    let retryAfter: number | null = null;
    const problem = await this.targetProblemOf(endpoint.url);
    if (problem) {
      error = problem;
    } else {
      try {
        const timestamp = Math.floor(started / 1000);
        const response = await fetch(endpoint.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'trade-platform-gateway-webhooks/1',
            ...(await deliveryHeaders(endpoint.secrets, row.event_id, timestamp, row.body)),
          },
          body: row.body,
          // A redirect could lead anywhere, a private address included: it is an answer like any other, not followed.
          redirect: 'manual',
          signal: AbortSignal.timeout(config.WEBHOOK_TIMEOUT_SECONDS * 1000),
        });
        status = response.status;
        retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
        await response.body?.cancel();
        if (status < 200 || status > 299) error = `the receiver answered ${status}`;
      } catch (e) {
        error =
          e instanceof Error && e.name === 'TimeoutError'
            ? `no answer within ${config.WEBHOOK_TIMEOUT_SECONDS} s`
            : `could not reach the receiver: ${e instanceof Error ? e.message : String(e)}`;
      }
    }
    const latency = Date.now() - started;
    const current = { ...row, attempts: number };
    if (error === null) {
      this.finish(current, 'delivered', null);
      this.logAttempt(current, status, latency, null, 'delivered');
      this.sql.exec("DELETE FROM meta WHERE key = 'failing_since'");
      await this.catchUp(current);
      return { ack: true };
    }
    if (status === 410) {
      const reason = `410 Gone from the receiver at ${new Date(started).toISOString()}`;
      await new WebhookStore(this.env.DB).disable(endpoint.id, reason);
      this.endpoint = undefined;
      this.finish(current, 'dead', error);
      this.logAttempt(current, status, latency, error, 'endpointDisabled');
      return { ack: true };
    }
    // Failures from before the endpoint last changed (enabled again, through any path) do not count.
    this.sql.exec(
      "DELETE FROM meta WHERE key = 'failing_since' AND CAST(value AS INTEGER) < ?",
      Date.parse(endpoint.updated),
    );
    this.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('failing_since', ?)", String(started));
    const failingSince = Number(
      this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'failing_since'").one().value,
    );
    if (failedTooLong(failingSince, config.WEBHOOK_DISABLE_AFTER_DAYS, started)) {
      const reason = `every delivery failed since ${new Date(failingSince).toISOString()}`;
      await new WebhookStore(this.env.DB).disable(endpoint.id, reason);
      this.endpoint = undefined;
      this.sql.exec("DELETE FROM meta WHERE key = 'failing_since'");
      this.finish(current, 'dead', error);
      this.logAttempt(current, status, latency, error, 'endpointDisabled');
      return { ack: true };
    }
    const delay = retryDelaySeconds(number, retryAfter);
    // Since when every attempt failed (catchUp), kept through endpoint changes; and a wait the receiver asked for,
    // which a catch-up does not cut short.
    this.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('outage_since', ?)", String(started));
    if (retryAfter !== null)
      this.sql.exec(
        `INSERT INTO meta (key, value) VALUES ('asked_wait_until', ?)
         ON CONFLICT (key) DO UPDATE SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))`,
        String(started + Math.min(retryAfter, MAX_QUEUE_DELAY_SECONDS) * 1000),
      );
    this.sql.exec(
      'UPDATE events SET next_attempt_at = ?, last_error = ? WHERE seq = ?',
      Date.now() + delay * 1000,
      error,
      row.seq,
    );
    this.logAttempt(current, status, latency, error, 'retrying');
    return { ack: false, retryDelaySeconds: delay, attempted: true };
  }

  /**
   * After a delivery: the receiver is back. The next event of the same account, waiting its turn behind this one
   * (not a failure of its own), goes now rather than at the time this one's next attempt would have been. And after
   * an outage (every attempt failing since `outage_since`), the events first tried during it that wait out their own
   * backoff are tried now, so the endpoint catches up as soon as it is back rather than at the pace of its longest
   * backoff: up to MAX_REDELIVERY of them, spread a second per WEBHOOK_MAX_IN_FLIGHT so they do not flood the queue.
   * An event that failed while other deliveries went through (a receiver refusing that one event) is not among them,
   * so no event is tried faster than its backoff twice. Not while a `Retry-After` the receiver sent lasts (the
   * outage is then caught up at the first delivery after it). An earlier message of an event brought forward, when it
   * comes, finds the event delivered or not due and is let go, or makes at most one extra attempt.
   */
  private async catchUp(delivered: EventRow): Promise<void> {
    const endpointId = this.endpointId();
    if (!endpointId) return;
    const now = Date.now();
    const woken: Array<{ seq: number; event_id: string; delay: number }> = [];
    const next = this.sql
      .exec<{ seq: number; event_id: string; next_attempt_at: number | null; attempts: number }>(
        "SELECT seq, event_id, next_attempt_at, attempts FROM events WHERE order_key = ? AND state = 'pending' AND seq > ? ORDER BY seq LIMIT 1",
        delivered.order_key,
        delivered.seq,
      )
      .toArray()[0];
    if (next && next.attempts === 0 && next.next_attempt_at !== null && next.next_attempt_at > now + DUE_SLACK_MS)
      woken.push({ ...next, delay: 0 });

    const outage = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'outage_since'").toArray()[0];
    const asked = this.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'asked_wait_until'")
      .toArray()[0];
    if (outage && !(asked && Number(asked.value) > now)) {
      this.sql.exec("DELETE FROM meta WHERE key IN ('outage_since', 'asked_wait_until')");
      const perSecond = Math.max(1, configOf(this.env).WEBHOOK_MAX_IN_FLIGHT);
      const backedOff = this.sql
        .exec<{ seq: number; event_id: string }>(
          "SELECT seq, event_id FROM events WHERE state = 'pending' AND attempts > 0 AND first_attempt_at >= ? AND next_attempt_at > ? ORDER BY seq LIMIT ?",
          Number(outage.value),
          now + DUE_SLACK_MS,
          MAX_REDELIVERY,
        )
        .toArray();
      backedOff.forEach((row, i) => woken.push({ ...row, delay: Math.floor(i / perSecond) }));
    } else if (!outage) {
      this.sql.exec("DELETE FROM meta WHERE key = 'asked_wait_until'");
    }
    if (woken.length === 0) return;
    for (const row of woken)
      this.sql.exec('UPDATE events SET next_attempt_at = ? WHERE seq = ?', now + row.delay * 1000, row.seq);
    try {
      await this.queue(
        woken.map((row) => ({ endpoint: endpointId, seq: row.seq, eventId: row.event_id })),
        false,
        woken.map((row) => row.delay),
      );
    } catch (error) {
      // Left pending and due: the sweep queues them.
      console.error(
        JSON.stringify({ msg: 'webhook retries not brought forward', endpoint: endpointId, error: String(error) }),
      );
    }
  }

  private finish(row: EventRow, state: EventRow['state'], error: string | null): void {
    this.sql.exec(
      'UPDATE events SET state = ?, last_error = ?, next_attempt_at = NULL, finished_at = ? WHERE seq = ?',
      state,
      error,
      Date.now(),
      row.seq,
    );
  }

  private logAttempt(
    row: EventRow,
    status: number | null,
    latencyMs: number,
    error: string | null,
    outcome: WebhookAttempt['outcome'],
  ): void {
    this.sql.exec(
      'INSERT INTO attempts (at, event_id, event_type, attempt, status, latency_ms, error, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      Date.now(),
      row.event_id,
      row.type,
      row.attempts,
      status,
      latencyMs,
      error,
      outcome,
    );
    this.sql.exec(
      'DELETE FROM attempts WHERE id <= (SELECT id FROM attempts ORDER BY id DESC LIMIT 1 OFFSET ?)',
      ATTEMPTS_KEPT,
    );
  }

  /**
   * Sends the deliveries' messages. Events just taken (`fresh`) whose messages could not be sent are not kept, and
   * the caller hears of it (the source hands them over again); any other is left pending for the sweep. A delivery
   * with a delay in `delaysSeconds` (by index) is sent that much later.
   */
  private async queue(deliveries: QueuedDelivery[], fresh: boolean, delaysSeconds?: number[]): Promise<void> {
    if (deliveries.length === 0) return;
    try {
      // A batch of Cloudflare Queues holds at most 100 messages.
      for (let i = 0; i < deliveries.length; i += 100) {
        await this.env.WEBHOOK_DELIVERIES.sendBatch(
          deliveries.slice(i, i + 100).map((body, j) => {
            const delaySeconds = delaysSeconds?.[i + j] ?? 0;
            return delaySeconds > 0 ? { body, delaySeconds } : { body };
          }),
        );
      }
    } catch (error) {
      if (fresh) for (const d of deliveries) this.sql.exec('DELETE FROM events WHERE seq = ?', d.seq);
      throw error;
    }
  }

  /** The next alarm: in a minute while events are pending, in a day while any are kept, none otherwise. */
  private async keepTidy(): Promise<void> {
    const pending = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE state = 'pending'").one().n;
    const kept = pending > 0 ? pending : this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM events').one().n;
    if (kept === 0) return this.ctx.storage.deleteAlarm();
    const next = Date.now() + (pending > 0 ? SWEEP_MS : DAY_MS);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next) await this.ctx.storage.setAlarm(next);
  }

  private endpointId(): string | null {
    return (
      this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'endpoint'").toArray()[0]?.value ?? null
    );
  }

  private async currentEndpoint(): Promise<SigningEndpoint | null> {
    const now = Date.now();
    if (this.endpoint && now - this.endpoint.at < ENDPOINT_CACHE_MS) return this.endpoint.value;
    const id = this.endpointId();
    const value = id ? await new WebhookStore(this.env.DB).findAny(id) : null;
    this.endpoint = { value, at: now };
    return value;
  }

  private async targetProblemOf(url: string): Promise<string | null> {
    const allowPrivate = configOf(this.env).WEBHOOK_PRIVATE_TARGETS;
    if (allowPrivate) return targetProblem(url, { allowPrivate, resolve: this.resolver });
    const now = Date.now();
    const cached = this.names.get(url);
    if (cached && now - cached.at < NAME_CACHE_MS) return cached.problem;
    const problem = await targetProblem(url, { allowPrivate, resolve: this.resolver });
    this.names.set(url, { problem, at: now });
    return problem;
  }
}

/** The delivery body, or, past MAX_DELIVERY_BYTES, the event without its record and saying so. */
function boundedBody(event: WebhookEvent): string {
  const body = deliveryBody(event);
  if (body.length <= MAX_DELIVERY_BYTES / 3 || new TextEncoder().encode(body).length <= MAX_DELIVERY_BYTES) return body;
  return deliveryBody({
    ...event,
    data: { omitted: `the record is larger than ${MAX_DELIVERY_BYTES} bytes: read it through the API` },
  });
}
