/**
 * An idempotency ledger: the Durable Object that owns a share of one API client's `Idempotency-Key`s
 * (`<clientId>#<hash(key) mod IDEMPOTENCY_SHARDS>`) and makes each key's call happen at most once, whatever happens to
 * it on the way. Records live in `ctx.storage.sql`, one row per key, with an index on expiry for the retention alarm.
 *
 * A key's life:
 * 1. bound: before anything is sent, the row is written `inflight` with the request's fingerprint and a fresh call id,
 *    and made durable;
 * 2. sent once, under that call id, through one of the platform's link objects (the broker runs a call id at most
 *    once and keeps its outcome past the deadline);
 * 3. resolved by the answer: a result the platform decided goes out at once and is stored `done` and replayed,
 *    written in the commit of the next key's binding or of other completions within COMPLETE_WAIT_MS (one durable
 *    write per key on the happy path), and replayed from memory until then; a failure that says nothing was sent (no
 *    connection, deadline passed before sending) releases the key, and an unknown outcome leaves it `inflight`, both
 *    on disk before the answer goes out. A key left `inflight` is completed by the broker's late answer (pushed
 *    through the link object, or asked for on a retry and by the follow-up alarm) or marked `unknown` when the broker
 *    says the answer can never come or no longer knows the call.
 *
 * A decided answer is not on disk when it goes out (though the output gate still holds it while other keys' bindings
 * are being committed). Should the ledger restart before writing it, the key is `inflight` and a retry asks the
 * broker, which keeps the call's outcome 10 minutes and answers it shaped by the same code: only such a restart within
 * ms of the answer and a retry after the broker forgot would replay "cannot be known" instead of the answer. Never a
 * second send.
 *
 * Bounds: one stored answer is at most IDEMPOTENCY_ANSWER_MAX_BYTES (UTF-8), a larger one is stored as a note saying
 * so; the stored answers of a ledger are counted (a running total in `idempotency_meta`, kept in the same commits as
 * the rows) and once they reach IDEMPOTENCY_LEDGER_MAX_MB a new key is refused before anything is written or sent,
 * with the time until enough of them expire. An answer is kept in full only while the ledger is under its bound, so
 * it holds at most the bound plus one answer (and notes).
 *
 * Invariants: a key's call id is sent at most once and a key never gets a second call id while its row exists; a
 * retry of an `inflight` key never sends anything but outcome queries; `unknown` is final for the key's retention.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import type { CallResult, OutcomeReport } from '../../shared/frames.js';
import { failure, refusal, validation, type ShapeContext } from '../envelope/index.js';
import { pickLink } from './names.js';
import { LINK_GRACE_MS } from './brokerLink.js';
import { placementOfText, placementText, type Placement } from '../regions/placement.js';
import { namespaceIn } from '../regions/objects.js';
import { trailStub } from '../audit/callAudit.js';
import { isJurisdiction } from '../../shared/regions.js';
import { shapeAnswer } from './platformLink.js';
import { IN_PROGRESS_MESSAGE } from '../api/idempotency.js';
import {
  REPLAYED_HEADER,
  type GatewayCall,
  type GatewayResponse,
  type LedgerStats,
  type LinkAnswer,
  type OutcomeAnswer,
} from './messages.js';

const byId: ReadonlyMap<string, Operation> = new Map(catalog.map((e) => [e.id, e]));

/**
 * Past its budget and this much, the edge has answered a call `unknown` and stopped waiting (its own grace is the link's
 * and a second more, workers/api/catalogRoutes.ts EDGE_GRACE_MS): an answer coming later completes the audit trail.
 */
const EDGE_GIVES_UP_MS = LINK_GRACE_MS;

/** First follow-up of a key left in flight, then the interval between follow-ups while the broker says pending. */
const FOLLOW_UP_FIRST_MS = 5_000;
const FOLLOW_UP_EVERY_MS = 30_000;
/** How long the alarm keeps asking about a key left in flight; retries keep asking after that. */
const FOLLOW_UP_FOR_MS = 60 * 60_000;
/** How long one follow-up query may wait for a running call. */
const FOLLOW_UP_WAIT_MS = 1_000;
const FOLLOW_UP_BATCH = 50;
/** Rounds of one retry's resolution before it answers "in progress" rather than loop. */
const MAX_ROUNDS = 4;
/**
 * How long a first call's completion waits for other writes to share its commit (see `complete`). A commit of its own
 * costs more of the edge's CPU than the rest of the ledger's work on a call (`npm run bench:profile`, stage
 * "complete": docs/perf/2026-11-27-keyed-writes.md), and under load the next key's binding comes within a few ms;
 * idle, the answer of a release or of an unknown outcome waits this long at most (a decided answer does not wait).
 */
const COMPLETE_WAIT_MS = 5;
/** Link object ids a ledger keeps (the platforms its client writes to × LINKS_PER_PLATFORM); the oldest go first. */
const MAX_LINK_IDS = 1024;
/** The `idempotency_meta` row that counts the UTF-8 bytes of the stored answers (`response`) of every row. */
const STORED_BYTES = 'stored_bytes';

/** Failures that say the call was not applied: the key is released and a retry sends the request afresh. */
const NOT_APPLIED: ReadonlySet<string> = new Set(['NoConnect', 'Validation']);

/**
 * A failure that says nothing was applied: one of NOT_APPLIED, a "not now" refusal (`retryAfterSeconds`: the
 * platform's manager session busy with this client's other calls, too many failed password checks), which a retry
 * after the seconds it names may pass, or a call the trading server does not implement (`notImplemented`: nothing was
 * sent), which a retry may pass once its bridge declares the command. None is kept for the key.
 */
const notApplied = (answer: LinkAnswer): boolean =>
  !answer.ok &&
  answer.outcome !== 'unknown' &&
  (NOT_APPLIED.has(answer.error.code) || answer.retryAfterSeconds !== undefined || answer.notImplemented === true);

type State = 'inflight' | 'done' | 'unknown';

interface KeyRow extends Record<string, SqlStorageValue> {
  key: string;
  request_hash: string;
  state: State;
  call_id: string;
  platform: string;
  /** The brokers the call may have gone to: a JSON list of base URLs (a bare URL in rows bound before lists). */
  broker_url: string;
  /** Where the platform's home link objects were when the key was bound (`placementText`); null in older rows. */
  link_place: string | null;
  shape: string;
  response: string | null;
  created: number;
  expires: number;
  check_at: number | null;
  /** The caller's organization, whose audit trail a learned outcome completes; null in older rows and without a trail. */
  organization: string | null;
}

/** A first call's completion waiting for its commit (a decided answer's: nobody waits, `done` and `failed` log only). */
interface Completion {
  write(): void;
  done(): void;
  failed(err: unknown): void;
}

interface Running {
  callId: string;
  done: Promise<GatewayResponse>;
  finished: boolean;
}

export class IdempotencyLedger extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** First calls this object is sending now: a duplicate waits for its answer instead of asking the broker. */
  private readonly running = new Map<string, Running>();
  private readonly linkIds = new Map<string, DurableObjectId>();
  /** Decided answers of first calls, by key, sent but not yet written: a repeat meanwhile replays from here. */
  private readonly unwritten = new Map<string, { callId: string; text: string }>();
  /** First calls' completions waiting to share a commit (`complete`). */
  private completions: { writes: Completion[]; timer: ReturnType<typeof setTimeout> } | undefined;
  /** When the alarm goes off as this object last set it (null: not armed); undefined until read from storage. */
  private alarmAt: number | null | undefined;
  /** Bytes of the answers stored, and of decided answers not yet written (`unwritten`), as `keep` counted them. */
  private stored: number;
  /** While the ledger is full: when enough stored answers expire to take new keys again, for this `stored`. */
  private fullUntil: { at: number; stored: number } | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
      key TEXT PRIMARY KEY,
      request_hash TEXT NOT NULL,
      state TEXT NOT NULL,
      call_id TEXT NOT NULL,
      platform TEXT NOT NULL,
      broker_url TEXT NOT NULL,
      shape TEXT NOT NULL,
      response TEXT,
      created INTEGER NOT NULL,
      expires INTEGER NOT NULL,
      check_at INTEGER,
      link_place TEXT,
      organization TEXT
    )`);
    // A ledger created before regions has the table without the column: added once, the rows keeping null.
    const columns = this.sql.exec('SELECT * FROM idempotency_keys LIMIT 0').columnNames;
    if (!columns.includes('link_place')) this.sql.exec('ALTER TABLE idempotency_keys ADD COLUMN link_place TEXT');
    // A ledger created before the audit trail: the column added once, its rows completing no trail.
    if (!columns.includes('organization')) this.sql.exec('ALTER TABLE idempotency_keys ADD COLUMN organization TEXT');
    this.sql.exec('CREATE INDEX IF NOT EXISTS idempotency_keys_by_expiry ON idempotency_keys (expires)');
    this.sql.exec('CREATE UNIQUE INDEX IF NOT EXISTS idempotency_keys_by_call ON idempotency_keys (call_id)');
    this.sql.exec(
      'CREATE INDEX IF NOT EXISTS idempotency_keys_by_check ON idempotency_keys (check_at) WHERE check_at IS NOT NULL',
    );
    this.sql.exec('CREATE TABLE IF NOT EXISTS idempotency_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)');
    const counted = this.sql
      .exec<{ value: number }>('SELECT value FROM idempotency_meta WHERE name = ?', STORED_BYTES)
      .toArray()[0];
    if (counted) {
      this.stored = counted.value;
    } else {
      // A ledger from before the count: its rows are counted once.
      this.stored = this.sql
        .exec<{ bytes: number }>(
          'SELECT coalesce(sum(length(CAST(response AS BLOB))), 0) AS bytes FROM idempotency_keys',
        )
        .one().bytes;
      this.sql.exec('INSERT INTO idempotency_meta (name, value) VALUES (?, ?)', STORED_BYTES, this.stored);
    }
  }

  /** Answers one call under an Idempotency-Key: the first sends it, the rest replay, wait, or hear it is in progress. */
  async call(input: GatewayCall): Promise<GatewayResponse> {
    const idem = input.idempotency;
    const entry = byId.get(input.operationId);
    if (!idem || !entry) throw new Error(`not an idempotent call of a known operation: ${input.operationId}`);
    const ctx: ShapeContext = {
      generation: entry.generation,
      family: input.family,
      paged: !!entry.paged,
      traceId: input.traceId,
    };
    const budgetEnd = Date.now() + input.timeoutMs;

    for (let round = 0; round < MAX_ROUNDS; round++) {
      let row = this.row(idem.key);
      if (row && row.expires <= Date.now()) {
        this.sql.exec('DELETE FROM idempotency_keys WHERE key = ?', idem.key);
        if (row.response !== null) this.forget(utf8Bytes(row.response));
        row = undefined;
      }
      if (!row) return this.full(ctx) ?? this.first(input, ctx);
      if (row.request_hash !== idem.requestHash)
        return validation(ctx, 'Idempotency-Key: already used with a different request');
      if (row.state !== 'inflight') return replayed(JSON.parse(row.response!) as GatewayResponse);
      const decided = this.unwritten.get(idem.key);
      if (decided && decided.callId === row.call_id) return replayed(JSON.parse(decided.text) as GatewayResponse);

      const remaining = budgetEnd - Date.now();
      if (remaining <= 0) return inProgress(ctx);
      const local = this.running.get(idem.key);
      if (local && !local.finished && local.callId === row.call_id) {
        // The first call is on its way from this object: wait for its answer within this request's own budget.
        if (!(await within(local.done, remaining))) return inProgress(ctx);
        continue;
      }
      const report = await this.ask(row, remaining);
      if (report.state === 'pending' || report.state === 'unreachable') return inProgress(ctx);
      this.apply(row.call_id, report);
    }
    return inProgress(ctx);
  }

  /** A late outcome handed on by a link object. */
  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers get a promise either way, and a throw rejects it
  async settle(callId: string, report: OutcomeReport): Promise<void> {
    this.apply(callId, report);
  }

  /** The ledger's figures; with `key` (the stored `clientId:key`), also that key's state (null when it holds none). */
  async stats(key?: string): Promise<LedgerStats> {
    this.writeCompletions();
    const counts = this.sql
      .exec<{ records: number; inflight: number; unknown: number }>(
        `SELECT count(*) AS records, coalesce(sum(state = 'inflight'), 0) AS inflight, coalesce(sum(state = 'unknown'), 0) AS unknown
       FROM idempotency_keys`,
      )
      .one();
    const stats: LedgerStats = { ...counts, storedBytes: this.stored, nextAlarm: await this.ctx.storage.getAlarm() };
    if (key !== undefined) stats.keyState = this.row(key)?.state ?? null;
    return stats;
  }

  /** Purges expired keys through the expiry index, follows up keys left in flight, then re-arms for the next due. */
  override async alarm(): Promise<void> {
    // The alarm that fired is spent: until rearm() sets the next, what storage holds is read afresh if needed.
    this.alarmAt = undefined;
    const now = Date.now();
    this.purge(now);
    const due = this.sql
      .exec<KeyRow>(
        `SELECT * FROM idempotency_keys WHERE check_at IS NOT NULL AND check_at <= ? AND state = 'inflight' ORDER BY check_at LIMIT ?`,
        now,
        FOLLOW_UP_BATCH,
      )
      .toArray();
    for (const row of due) {
      if (this.running.get(row.key)?.finished === false) continue;
      const report = await this.ask(row, FOLLOW_UP_WAIT_MS);
      if (report.state === 'pending' || report.state === 'unreachable') {
        const next = Date.now() + FOLLOW_UP_EVERY_MS;
        this.sql.exec(
          `UPDATE idempotency_keys SET check_at = ? WHERE call_id = ? AND state = 'inflight'`,
          next - row.created > FOLLOW_UP_FOR_MS ? null : next,
          row.call_id,
        );
      } else {
        this.apply(row.call_id, report);
      }
    }
    await this.rearm();
  }

  // ---- the key's life ----

  /** Binds the key durably, then sends its call once and completes the key with the answer. */
  private async first(input: GatewayCall, ctx: ShapeContext): Promise<GatewayResponse> {
    const key = input.idempotency!.key;
    const callId = crypto.randomUUID();
    // Registered before the first await, so a duplicate arriving meanwhile waits for this call instead of asking the
    // broker about a call id it has not seen yet.
    const running: Running = { callId, done: this.bindAndSend(input, ctx, callId), finished: false };
    this.running.set(key, running);
    try {
      return await running.done;
    } finally {
      running.finished = true;
      if (this.running.get(key) === running) this.running.delete(key);
    }
  }

  private async bindAndSend(input: GatewayCall, ctx: ShapeContext, callId: string): Promise<GatewayResponse> {
    await this.bind(input, ctx, callId);
    const sentAt = Date.now();
    const answer = await this.sendBound(input, callId);
    // An answer past the edge's deadline reached no caller, who heard `unknown`: the trail learns it from here.
    const idem = input.idempotency!;
    if (idem.organization !== undefined && Date.now() - sentAt > input.timeoutMs + EDGE_GIVES_UP_MS)
      this.completeAudit(
        { key: idem.key, organization: idem.organization, link_place: placementText(input.home), call_id: callId },
        answer,
      );
    return await this.complete(ctx, idem.key, callId, answer);
  }

  /**
   * Stage 1, bind: writes the key's row `inflight` under `callId` (at once, before any await) and waits until it is on
   * disk, so the broker can never see a call its ledger would not know after a restart. The alarm is armed for the
   * key's expiry only when it would otherwise go off later (known in memory: no storage read per call). Bindings
   * written meanwhile share the commit.
   */
  protected async bind(input: GatewayCall, ctx: ShapeContext, callId: string): Promise<void> {
    const idem = input.idempotency!;
    const now = Date.now();
    const expires = now + idem.retentionHours * 3_600_000;
    this.sql.exec(
      `INSERT INTO idempotency_keys (key, request_hash, state, call_id, platform, broker_url, link_place, shape, response, created, expires, check_at, organization)
       VALUES (?, ?, 'inflight', ?, ?, ?, ?, ?, NULL, ?, ?, NULL, ?)`,
      idem.key,
      idem.requestHash,
      callId,
      input.platform,
      JSON.stringify(input.brokerUrls),
      placementText(input.home),
      JSON.stringify(ctx),
      now,
      expires,
      idem.organization ?? null,
    );
    // Completions waiting to be written go into this commit: one durable write per key while keys keep coming.
    this.writeCompletions();
    await Promise.all([this.scheduleAlarm(expires), this.ctx.storage.sync()]);
  }

  /** Stage 2, send: the bound call, once, through one of the platform's link objects; its raw answer. */
  protected async sendBound(input: GatewayCall, callId: string): Promise<LinkAnswer> {
    try {
      // eslint-disable-next-line @typescript-eslint/await-thenable -- a call on the link object's stub: a promise at run time, awaited here so its rejection is caught
      return await this.linkFor(input.platform, callId, input.home).send({
        platform: input.platform,
        op: input.op,
        args: input.args,
        timeoutMs: input.timeoutMs,
        traceId: input.traceId,
        client: input.client,
        brokerUrls: input.brokerUrls,
        callId,
        ledger: input.idempotency!.ledger,
        home: input.home,
      });
    } catch (err) {
      // The link object failed with the call possibly sent: its outcome is not known.
      console.error(JSON.stringify({ msg: 'link object failed', traceId: input.traceId, error: String(err) }));
      return {
        ok: false,
        error: { code: 'NoConnect', managerCode: null, message: 'broker link failed' },
        outcome: 'unknown',
      };
    }
  }

  /**
   * Stage 3, complete: the answer shaped, and the key stored, released or left in flight by what it says. The write
   * waits up to COMPLETE_WAIT_MS to share a commit: the next key's binding, or other completions. A decided answer
   * goes out at once and is kept in memory until written (see the top comment); a release or a key left in flight is
   * on disk before its answer goes out, so a retry sends afresh or asks the broker whatever happens next.
   */
  protected complete(ctx: ShapeContext, key: string, callId: string, answer: LinkAnswer): Promise<GatewayResponse> {
    const response = shapeAnswer(ctx, answer);
    if (answer.ok || (answer.outcome !== 'unknown' && !notApplied(answer))) {
      const kept = this.keep(ctx, response);
      const decided = { callId, text: kept.text };
      this.unwritten.set(key, decided);
      this.queueCompletion({
        write: () => {
          if (this.unwritten.get(key) === decided) this.unwritten.delete(key);
          this.finish(callId, 'done', kept);
        },
        done: () => {},
        failed: (err) =>
          console.error(JSON.stringify({ msg: 'idempotency answer not stored', callId, error: String(err) })),
      });
      return Promise.resolve(response);
    }
    return new Promise<GatewayResponse>((resolve, reject) => {
      this.queueCompletion({
        write: () => this.resolve(ctx, callId, answer, response),
        done: () => resolve(response),
        failed: reject,
      });
    });
  }

  private queueCompletion(c: Completion): void {
    let batch = this.completions;
    if (!batch)
      batch = this.completions = { writes: [], timer: setTimeout(() => this.writeCompletions(), COMPLETE_WAIT_MS) };
    batch.writes.push(c);
  }

  /** Writes the completions waiting, in the commit of whatever else is written now, and answers each once it is on disk. */
  private writeCompletions(): void {
    const batch = this.completions;
    if (!batch) return;
    this.completions = undefined;
    clearTimeout(batch.timer);
    const written: Completion[] = [];
    for (const c of batch.writes) {
      try {
        c.write();
        written.push(c);
      } catch (err) {
        c.failed(err);
      }
    }
    this.ctx.storage.sync().then(
      () => {
        for (const c of written) c.done();
      },
      (err: unknown) => {
        for (const c of written) c.failed(err);
      },
    );
  }

  /** Records what an answer says about the key of `callId`, if that key is still in flight under it. */
  private resolve(ctx: ShapeContext, callId: string, answer: LinkAnswer, response: GatewayResponse): void {
    if (!answer.ok && answer.outcome === 'unknown') {
      const checkAt = Date.now() + FOLLOW_UP_FIRST_MS;
      this.sql.exec(
        `UPDATE idempotency_keys SET check_at = ? WHERE call_id = ? AND state = 'inflight'`,
        checkAt,
        callId,
      );
      void this.scheduleAlarm(checkAt);
    } else if (notApplied(answer)) {
      this.sql.exec(`DELETE FROM idempotency_keys WHERE call_id = ? AND state = 'inflight'`, callId);
    } else {
      this.finish(callId, 'done', this.keep(ctx, response));
    }
  }

  /**
   * The outcome a report settled, for the organization's audit trail: its rows of the key still `unknown` are completed
   * with it (workers/audit/auditTrail.ts). Not waited for; a trail that cannot be reached leaves them unknown (logged),
   * and a retry under the key completes them too.
   */
  private completeAudit(
    row: Pick<KeyRow, 'key' | 'organization' | 'link_place' | 'call_id'>,
    result: CallResult,
  ): void {
    if (!row.organization) return;
    if (!result.ok && result.outcome === 'unknown') return;
    const colon = row.key.indexOf(':');
    const [clientId, key] = [row.key.slice(0, colon), row.key.slice(colon + 1)];
    const outcome = result.ok ? 'applied' : 'refused';
    const code = result.ok ? null : result.error.code;
    // The key's home link objects are in its organization's jurisdiction, as its trail is.
    const { jurisdiction } = placementOfText(row.link_place, {
      region: configOf(this.env).HOME_REGION,
      jurisdiction: null,
    });
    const trail = trailStub(this.env, row.organization, jurisdiction);
    this.ctx.waitUntil(
      trail
        .settle(clientId, key, outcome, code)
        .catch((error: unknown) =>
          console.warn(
            JSON.stringify({ msg: 'audit outcome not completed', callId: row.call_id, error: String(error) }),
          ),
        ),
    );
  }

  /** Applies the broker's report on a call id (a late push, a retry's query or a follow-up). */
  private apply(callId: string, report: OutcomeAnswer): void {
    if (report.state === 'pending' || report.state === 'unreachable') return;
    const row = this.sql
      .exec<KeyRow>(`SELECT * FROM idempotency_keys WHERE call_id = ? AND state = 'inflight'`, callId)
      .toArray()[0];
    if (!row) return;
    const ctx = JSON.parse(row.shape) as ShapeContext;
    if (report.state === 'settled') {
      this.resolve(ctx, callId, report.result, shapeAnswer(ctx, report.result));
      this.completeAudit(row, report.result);
      return;
    }
    const reason = report.state === 'lost' ? report.reason : 'the broker no longer knows the call';
    this.finish(
      callId,
      'unknown',
      this.keep(
        ctx,
        failure(ctx, {
          code: 'NoConnect',
          managerCode: null,
          outcome: 'unknown',
          message: `Idempotency-Key: the outcome of the first request with this key cannot be known (${reason}); it is not sent again under this key`,
        }),
        true,
      ),
    );
  }

  /** Stores the key of `callId` as decided, with the text its repeats replay (`keep`), and counts its bytes. */
  private finish(callId: string, state: Exclude<State, 'inflight'>, kept: Kept): void {
    const written = this.sql.exec(
      `UPDATE idempotency_keys SET state = ?, response = ?, check_at = NULL WHERE call_id = ? AND state = 'inflight'`,
      state,
      kept.text,
      callId,
    ).rowsWritten;
    if (written === 0) {
      // Decided already (or gone): what `keep` counted for it is not stored.
      this.stored -= kept.bytes;
      return;
    }
    this.sql.exec('UPDATE idempotency_meta SET value = value + ? WHERE name = ?', kept.bytes, STORED_BYTES);
  }

  // ---- the bounds of what is stored ----

  /**
   * What a key's repeats replay, counted in `stored`: the answer, or a note when it is larger than
   * IDEMPOTENCY_ANSWER_MAX_BYTES or the ledger's answers reached its bound while the call ran (the call is decided
   * all the same, and never sent again). The ledger's `own` answers (an outcome that cannot be known) are kept.
   */
  private keep(ctx: ShapeContext, response: GatewayResponse, own = false): Kept {
    const answerMax = configOf(this.env).IDEMPOTENCY_ANSWER_MAX_BYTES;
    const max = this.maxStored();
    const text = JSON.stringify(response);
    // UTF-8 takes at least a byte per UTF-16 unit: only a text short enough may fit.
    const bytes = text.length > answerMax ? undefined : utf8Bytes(text);
    let kept = text;
    if (bytes === undefined || bytes > answerMax) {
      kept = note(ctx, `its answer is larger than the ${answerMax} bytes kept for a replay`);
    } else if (this.stored >= max && !own) {
      kept = note(
        ctx,
        `its answer was not kept for a replay: this client's answers stored in the ledger of this key had reached its ${max} bytes`,
      );
    }
    const keptBytes = kept === text ? bytes! : utf8Bytes(kept);
    this.stored += keptBytes;
    return { text: kept, bytes: keptBytes };
  }

  /** IDEMPOTENCY_LEDGER_MAX_MB in bytes. */
  private maxStored(): number {
    return Math.floor(configOf(this.env).IDEMPOTENCY_LEDGER_MAX_MB * 1_000_000);
  }

  /**
   * The refusal of a new key while the ledger's stored answers are at its bound (what has expired purged first):
   * nothing is written or sent, and `Retry-After` says when enough stored answers expire to take a key again.
   * Undefined when there is room.
   */
  private full(ctx: ShapeContext): GatewayResponse | undefined {
    const max = this.maxStored();
    if (this.stored < max) return undefined;
    const now = Date.now();
    // Known full until `at` for what is stored now: nothing expiring before then makes room, so a flood of new keys
    // is refused without a purge and a scan each.
    let known = this.fullUntil;
    if (known === undefined || known.stored !== this.stored || known.at <= now) {
      this.purge(now);
      if (this.stored < max) return undefined;
      known = this.fullUntil = { at: this.roomAt(max) ?? now + 1000, stored: this.stored };
    }
    const seconds = Math.max(1, Math.ceil((known.at - now) / 1000));
    return refusal(ctx, {
      kind: 'TooManyRequests',
      message: `Idempotency-Key: this client's answers stored for replay in the ledger of this key have reached its ${max} bytes; the request was not sent; retry after ${seconds} s, when older keys expire`,
      headers: { 'Retry-After': String(seconds) },
    });
  }

  /** When enough of the oldest stored answers have expired to bring the ledger under `max` (undefined: never by expiry). */
  private roomAt(max: number): number | undefined {
    let left = this.stored;
    for (const r of this.sql.exec<{ expires: number; bytes: number }>(
      'SELECT expires, length(CAST(response AS BLOB)) AS bytes FROM idempotency_keys WHERE response IS NOT NULL ORDER BY expires',
    )) {
      left -= r.bytes;
      if (left < max) return r.expires;
    }
    return undefined;
  }

  /** Deletes the expired keys, through the expiry index, and uncounts their answers. */
  private purge(now: number): void {
    const freed = this.sql
      .exec<{ bytes: number }>(
        'SELECT coalesce(sum(length(CAST(response AS BLOB))), 0) AS bytes FROM idempotency_keys WHERE expires <= ?',
        now,
      )
      .one().bytes;
    this.sql.exec('DELETE FROM idempotency_keys WHERE expires <= ?', now);
    this.forget(freed);
  }

  /** Uncounts `bytes` of stored answers whose rows were deleted. */
  private forget(bytes: number): void {
    if (bytes === 0) return;
    this.stored -= bytes;
    this.sql.exec('UPDATE idempotency_meta SET value = value - ? WHERE name = ?', bytes, STORED_BYTES);
  }

  private async ask(row: KeyRow, waitMs: number): Promise<OutcomeAnswer> {
    const brokerUrls = brokersOfRow(row.broker_url);
    if (brokerUrls.length === 0) return { state: 'unreachable', message: "the key's record names no broker" };
    try {
      const place = this.placeOfRow(row);
      return await this.linkFor(row.platform, row.call_id, place).outcome({
        place,
        brokerUrls,
        platform: row.platform,
        callId: row.call_id,
        timeoutMs: waitMs,
      });
    } catch (err) {
      return { state: 'unreachable', message: String(err) };
    }
  }

  /**
   * The home placement a key's row names; a row bound before regions names none, and its platform's home links were
   * then the edge's default home in this ledger's own jurisdiction.
   */
  private placeOfRow(row: KeyRow): Placement {
    const jurisdiction = this.ctx.id.jurisdiction;
    return placementOfText(row.link_place, {
      region: configOf(this.env).HOME_REGION,
      jurisdiction: isJurisdiction(jurisdiction) ? jurisdiction : null,
    });
  }

  /** One of the platform's home link objects, by the call id (a ledger sends to few: their ids are kept by name). */
  private linkFor(platform: string, callId: string, home: Placement) {
    const name = pickLink(platform, home.region, callId, configOf(this.env).LINKS_PER_PLATFORM);
    const ns = namespaceIn(this.env.LINKS, home.jurisdiction);
    const key = `${placementText(home)} ${name}`;
    let id = this.linkIds.get(key);
    if (id === undefined) {
      if (this.linkIds.size >= MAX_LINK_IDS) this.linkIds.delete(this.linkIds.keys().next().value!);
      id = ns.idFromName(name);
      this.linkIds.set(key, id);
    }
    return ns.get(id, { locationHint: home.region });
  }

  private row(key: string): KeyRow | undefined {
    return this.sql.exec<KeyRow>('SELECT * FROM idempotency_keys WHERE key = ?', key).toArray()[0];
  }

  /** Arms the alarm for `at` unless it goes off sooner; undefined when nothing was to be written. */
  private scheduleAlarm(at: number): Promise<void> | undefined {
    if (this.alarmAt === undefined) return this.readAlarm().then(() => this.scheduleAlarm(at));
    if (this.alarmAt !== null && this.alarmAt <= at) return undefined;
    this.alarmAt = at;
    return this.ctx.storage.setAlarm(at);
  }

  private async readAlarm(): Promise<void> {
    const at = await this.ctx.storage.getAlarm();
    // Another path may have set it meanwhile: what it set is newer than what was read.
    if (this.alarmAt === undefined) this.alarmAt = at;
  }

  /** The alarm goes off at the earliest expiry or follow-up still ahead, or not at all. */
  private async rearm(): Promise<void> {
    const next = this.sql
      .exec<{ at: number | null }>(
        `SELECT min(at) AS at FROM (SELECT min(expires) AS at FROM idempotency_keys
         UNION ALL SELECT min(check_at) FROM idempotency_keys WHERE check_at IS NOT NULL AND state = 'inflight')`,
      )
      .one().at;
    this.alarmAt = next;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
  }
}

/** A text a key's repeats replay, and its UTF-8 bytes as counted. */
interface Kept {
  text: string;
  bytes: number;
}

/** What a key whose answer is not kept replays: that its first request completed, why its answer is not there. */
function note(ctx: ShapeContext, why: string): string {
  return JSON.stringify(
    failure(ctx, {
      code: 'Internal',
      managerCode: null,
      message: `Idempotency-Key: the first request with this key completed, but ${why}; it is not sent again under this key`,
    }),
  );
}

/** The UTF-8 bytes of `text` (as SQLite stores it), without encoding it. */
function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // One more byte from U+0080, two more from U+0800; a surrogate pair (4 bytes) is two units of 2.
    if (c >= 0x80) bytes += c >= 0x800 && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

function inProgress(ctx: ShapeContext): GatewayResponse {
  const r = failure(ctx, { code: 'NoConnect', managerCode: null, message: IN_PROGRESS_MESSAGE, outcome: 'unknown' });
  return { ...r, headers: { ...r.headers, 'Retry-After': '1' } };
}

function replayed(r: GatewayResponse): GatewayResponse {
  return { ...r, headers: { ...r.headers, [REPLAYED_HEADER]: 'true' } };
}

/** Whether `promise` settles within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * The brokers a key's call may have gone to, as its row keeps them: a JSON list since platforms name several brokers,
 * a bare URL in rows bound before.
 */
function brokersOfRow(column: string): string[] {
  if (!column.startsWith('[')) return [column];
  try {
    const urls = JSON.parse(column) as unknown;
    if (Array.isArray(urls) && urls.length > 0 && urls.every((u) => typeof u === 'string')) return urls;
  } catch {
    /* a damaged row: no broker is asked, so its outcome stays unreachable until it is given up */
  }
  return [];
}
