/**
 * The brokers of one trade platform as a link object sees them: the platform's ordered list (the registry's
 * `broker_urls`, else the edge's `BROKER_URL`), one multiplexed `BrokerLink` per broker, opened when first used, and
 * which of them takes the calls now (docs/architecture.md, "Brokers in pairs").
 *
 * Calls go to the first broker of the list that is healthy. A broker is left when its link cannot be opened
 * (`unreachable`), drops (`lost`), does not answer a heartbeat within `LINK_PING_TIMEOUT_MS` (`hung`: a stopped process
 * or a dead host closes nothing), or says it is draining (`draining`: a `DrainFrame`, a ping, or a call answered
 * `notTaken`). While the list has more than one broker, the broker in use is pinged every `LINK_PING_EVERY_MS`, and
 * each broker earlier in the list is probed the same way; one that has answered every probe for `holdDownMs` takes
 * the calls back (`preferred`), so a flapping broker does not bounce the platform. A broker left is tried again only
 * after a probe answers, or when no other broker is left.
 *
 * What a move does to calls (each call is sent once, to one broker; only what was never sent, or a read, is sent
 * again):
 * - a call whose link could not be opened, or that the broker did not take (`notTaken`), was not sent: it goes to the
 *   next broker, whatever it is;
 * - a read in flight on a broker that is lost or hung is sent again to the next broker with what is left of its own
 *   budget (`moved: true`), so its caller sees a delay, not an error;
 * - a write in flight there answers `NoConnect` with an unknown outcome, as a dropped link always did; it is never sent
 *   again (a keyed one keeps its key bound, and its ledger asks every broker of the list what became of it).
 * The broker moved to is told why (`#failover`), and counts it.
 */
import {
  FAILBACK_HOLD_DOWN_MS,
  FAILOVER_OP,
  LINK_PING_EVERY_MS,
  LINK_PING_TIMEOUT_MS,
  OUTCOME_OP,
  PING_OP,
  type CallFrame,
  type FailoverReason,
  type LateFrame,
  type OutcomeReport,
  type PingReport,
} from '../../shared/frames.js';
import {
  BrokerLink,
  CONNECT_TIMEOUT_MS,
  type CallOptions,
  type LinkFailure,
  type LinkResult,
  type RawBytesOk,
  type RawOk,
} from './brokerLink.js';
import type { BrokerHealth as Health, BrokerSetStats, OutcomeAnswer } from './messages.js';

export type { BrokerSetStats } from './messages.js';

/** Opening a link to one of several brokers gives up sooner: another broker can take the calls meanwhile. */
export const PAIRED_CONNECT_TIMEOUT_MS = 1500;
/** A broker left is probed again after this, doubling up to `RETRY_MAX_MS` while it keeps failing. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 5000;

interface Member {
  readonly url: string;
  link: BrokerLink | undefined;
  health: Health;
  /** Since when every probe of this broker has answered (undefined: not confirmed since it was last left). */
  okSince: number | undefined;
  /** A broker left is not probed before this. */
  retryAt: number;
  failures: number;
  probing: boolean;
}

export interface BrokerSetHooks {
  /** A link opened (`url`), before any answer arrives on it. */
  onOpen?(url: string): void;
  /** A link dropped or was closed. */
  onClose?(url: string): void;
  /** A frame without an id that is neither a late outcome nor a drain notice (replication). */
  onPush?(url: string, frame: Record<string, unknown>): void;
  /** Calls now go to `url` (after a move, or back to a preferred broker). */
  onSwitch?(url: string, reason: FailoverReason): void;
}

export interface BrokerSetOptions {
  secret: string;
  onLate: (late: LateFrame['late']) => void;
  holdDownMs?: number;
  pingEveryMs?: number;
  pingTimeoutMs?: number;
}

export class BrokerSet {
  private readonly members: Member[];
  private current = 0;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private readonly counts: BrokerSetStats['failovers'] = {};
  private moved = 0;
  private lastMoveAt: number | null = null;
  private closed = false;

  constructor(
    readonly platform: string,
    readonly urls: readonly string[],
    private readonly options: BrokerSetOptions,
    private readonly hooks: BrokerSetHooks = {},
  ) {
    if (urls.length === 0) throw new Error('a platform needs at least one broker');
    this.members = urls.map((url) => ({
      url,
      link: undefined,
      health: 'ok',
      okSince: undefined,
      retryAt: 0,
      failures: 0,
      probing: false,
    }));
  }

  /** The list's identity: a platform whose list changed gets a new set. */
  static key(urls: readonly string[]): string {
    return urls.join(' ');
  }

  get paired(): boolean {
    return this.members.length > 1;
  }

  /** The link calls go to now (opened on its first call). */
  get currentLink(): BrokerLink {
    return this.linkOf(this.members[this.current]);
  }

  get currentUrl(): string {
    return this.members[this.current].url;
  }

  get connected(): boolean {
    return this.members[this.current].link?.connected ?? false;
  }

  get pendingCount(): number {
    let n = 0;
    for (const m of this.members) n += m.link?.pendingCount ?? 0;
    return n;
  }

  stats(): BrokerSetStats {
    return {
      current: this.currentUrl,
      brokers: this.members.map((m) => ({ url: m.url, health: m.health, connected: m.link?.connected ?? false })),
      failovers: { ...this.counts },
      moved: this.moved,
      lastMoveAt: this.lastMoveAt,
    };
  }

  /**
   * Sends a call to the broker in use and answers what it answered, moving on to the next broker for what was not
   * sent, what was not taken, and a read whose broker was lost under it (module comment). Never rejects.
   */
  async call(
    frame: Omit<CallFrame, 'id'>,
    mutating: boolean,
    options: CallOptions = {},
  ): Promise<LinkResult | RawOk | RawBytesOk> {
    const budgetEnd = Date.now() + frame.timeoutMs;
    const tried = new Set<Member>();
    let moved = false;
    for (;;) {
      const member = this.members[this.current];
      if (member.health === 'draining' && Date.now() < member.retryAt) {
        // Nothing else can take it (else the set would have moved on): not sent, so its outcome is known.
        return {
          ok: false,
          error: { code: 'NoConnect', managerCode: null, message: 'the broker is draining: call not taken' },
        };
      }
      tried.add(member);
      const timeoutMs = moved ? budgetEnd - Date.now() : frame.timeoutMs;
      const r = await this.linkOf(member).call(moved ? { ...frame, timeoutMs, moved: true } : frame, mutating, options);
      if (r.ok) {
        // A broker that answers takes calls again (a sole broker back from its restart).
        if (member.health !== 'ok') {
          member.health = 'ok';
          member.failures = 0;
        }
        return r;
      }
      const failure = r;
      let again: boolean;
      if (failure.notSent) {
        this.leave(member, 'unreachable');
        again = true;
      } else if (failure.notTaken) {
        this.leave(member, 'draining');
        again = true;
      } else if (failure.linkLost) {
        // The set may have left it already (a missed heartbeat closes the link); a drop is news. Only a read goes on.
        if (member.health === 'ok' && !this.closed) this.leave(member, 'lost');
        again = !mutating && budgetEnd - Date.now() >= 1;
      } else {
        return plain(failure);
      }
      if (!again || this.closed || this.members[this.current] === member || tried.has(this.members[this.current])) {
        return failure.notTaken ? { ok: false, error: failure.error } : plain(failure);
      }
      moved = true;
      this.moved++;
    }
  }

  /**
   * What every broker of the list knows of a call id (a keyed call went to one of them, which one is not recorded):
   * every broker is asked at once, and the first report that knows the call answers (settled, lost, or pending: only
   * the broker the call went to knows it, so no other can contradict it), without waiting for the others; else, once
   * every broker has answered, `unknown` when each said it does not know the call, else the first `unreachable` in
   * list order. A broker that does not answer costs only the queries no other broker can answer.
   */
  outcome(callId: string, timeoutMs: number): Promise<OutcomeAnswer> {
    const frame = {
      platform: this.platform,
      op: OUTCOME_OP,
      args: {},
      timeoutMs: Math.max(1, Math.round(timeoutMs)),
      callId,
    };
    return new Promise<OutcomeAnswer>((resolve) => {
      const reports: OutcomeAnswer[] = [];
      let left = this.members.length;
      this.members.forEach((m, i) => {
        void this.linkOf(m)
          .call(frame, false)
          .then(
            (r): OutcomeAnswer => {
              if (!r.ok) return { state: 'unreachable', message: r.error.message };
              return isReport(r.data)
                ? r.data
                : { state: 'unreachable', message: 'the broker answered an outcome query with something else' };
            },
            (err: unknown): OutcomeAnswer => ({ state: 'unreachable', message: String(err) }),
          )
          .then((report) => {
            reports[i] = report;
            // A later report cannot change a promise already resolved: the first that knows the call wins.
            if (report.state === 'settled' || report.state === 'lost' || report.state === 'pending') resolve(report);
            if (--left > 0) return;
            resolve(reports.find((x) => x.state === 'unreachable') ?? { state: 'unknown' });
          });
      });
    });
  }

  close(): void {
    this.closed = true;
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    for (const m of this.members) {
      const link = m.link;
      m.link = undefined;
      link?.close();
    }
  }

  // ---- the brokers' health -----------------------------------------------------------------------------------------

  private linkOf(member: Member): BrokerLink {
    if (member.link) return member.link;
    const link = new BrokerLink(
      member.url,
      this.options.secret,
      this.options.onLate,
      this.paired ? PAIRED_CONNECT_TIMEOUT_MS : CONNECT_TIMEOUT_MS,
    );
    link.onOpen = () => {
      this.hooks.onOpen?.(member.url);
      this.startHeartbeat();
    };
    link.onClose = () => {
      this.hooks.onClose?.(member.url);
      // A link that dropped on its own (not closed here) is a broker lost: left at once, whether or not calls were in
      // flight, so the next call goes to the next broker without trying this one first.
      if (member.link === link && this.paired && !this.closed && member.health === 'ok') this.leave(member, 'lost');
    };
    link.onPush = (frame) => {
      if (typeof frame.drain === 'object' && frame.drain !== null) {
        this.leave(member, 'draining');
        // Let go of the draining broker once what it runs for us is answered: it exits when its links are gone.
        link.closeWhenIdle();
      } else this.hooks.onPush?.(member.url, frame);
    };
    member.link = link;
    return link;
  }

  /** Marks a broker left and, when it was the one in use, moves the calls to the next one that may take them. */
  private leave(member: Member, reason: FailoverReason): void {
    const now = Date.now();
    member.health = reason === 'draining' ? 'draining' : 'down';
    member.okSince = undefined;
    member.failures++;
    // A draining broker is back soon (a restart): asked again at the first retry, whatever came before.
    member.retryAt =
      now +
      (reason === 'draining'
        ? RETRY_FIRST_MS
        : Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(member.failures - 1, 8)));
    if (reason === 'hung' || reason === 'lost') {
      // A hung broker's link is closed now: its reads move on, its writes answer with an unknown outcome.
      const link = member.link;
      member.link = undefined;
      link?.close();
    }
    if (this.members[this.current] !== member) return;
    const next = this.next();
    if (next === this.current) return;
    this.switchTo(next, reason);
  }

  /** The first broker after the one in use (wrapping round) that is not known to be down or draining. */
  private next(): number {
    const n = this.members.length;
    for (let step = 1; step < n; step++) {
      const i = (this.current + step) % n;
      if (this.members[i].health === 'ok') return i;
    }
    // Every other broker is left too: the one whose retry is due first, since something must be tried (the broker in
    // use only when it is the sole one, or was left for good reason and is due no sooner than the rest).
    let best = this.current;
    for (let step = 1; step < n; step++) {
      const i = (this.current + step) % n;
      if (best === this.current || this.members[i].retryAt < this.members[best].retryAt) best = i;
    }
    return best;
  }

  private switchTo(index: number, reason: FailoverReason): void {
    this.current = index;
    this.counts[reason] = (this.counts[reason] ?? 0) + 1;
    this.lastMoveAt = Date.now();
    const member = this.members[index];
    this.hooks.onSwitch?.(member.url, reason);
    // Told, and counted there; the notice itself opens the link when it is not open yet.
    void this.linkOf(member).call(
      { platform: this.platform, op: FAILOVER_OP, args: { reason, kind: 'link' }, timeoutMs: 5000 },
      false,
    );
  }

  private startHeartbeat(): void {
    if (!this.paired || this.heartbeat !== undefined || this.closed) return;
    this.heartbeat = setInterval(() => this.beat(), this.options.pingEveryMs ?? LINK_PING_EVERY_MS);
  }

  /** One heartbeat: the broker in use is pinged, and each broker before it in the list probed for a return. */
  private beat(): void {
    const now = Date.now();
    const current = this.members[this.current];
    if (current.link?.connected) this.probe(current, now);
    for (let i = 0; i < this.members.length; i++) {
      const m = this.members[i];
      // Earlier brokers are probed for a return; later ones only while left, so they are known healthy when needed.
      if (i === this.current || (i > this.current && m.health === 'ok') || (m.health !== 'ok' && now < m.retryAt))
        continue;
      this.probe(m, now);
    }
    // Nothing linked and nothing to win back or to confirm: the heartbeat stops until a link opens again.
    if (this.current === 0 && !current.link?.connected && this.members.every((m) => m.health === 'ok')) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }

  private probe(member: Member, now: number): void {
    if (member.probing) return;
    member.probing = true;
    const timeoutMs = this.options.pingTimeoutMs ?? LINK_PING_TIMEOUT_MS;
    void this.linkOf(member)
      .call({ platform: this.platform, op: PING_OP, args: {}, timeoutMs }, false, { waitMs: timeoutMs })
      .then((r) => {
        member.probing = false;
        if (this.closed) return;
        const report = r.ok ? ((r as { data?: unknown }).data as Partial<PingReport> | undefined) : undefined;
        const index = this.members.indexOf(member);
        const failure = r as LinkFailure;
        if (!r.ok && !failure.notSent && !failure.linkLost && !failure.timedOut) {
          // The broker answered, if not with a report (a broker from before heartbeats): it is alive.
          member.okSince ??= now;
          return;
        }
        if (!report || typeof report !== 'object') {
          // No answer in time on an open link is a hung broker; a link that would not open is an unreachable one.
          const reason: FailoverReason = failure.notSent ? 'unreachable' : failure.linkLost ? 'lost' : 'hung';
          if (member.health === 'ok' || index !== this.current) this.leave(member, reason);
          return;
        }
        if (report.draining === true || report.platform === 'absent') {
          if (member.health !== 'draining' || index === this.current) this.leave(member, 'draining');
          if (report.draining === true) member.link?.closeWhenIdle();
          return;
        }
        if (member.health !== 'ok') {
          member.health = 'ok';
          member.failures = 0;
        }
        member.okSince ??= now;
        if (index < this.current && Date.now() - member.okSince >= (this.options.holdDownMs ?? FAILBACK_HOLD_DOWN_MS)) {
          this.switchTo(index, 'preferred');
        }
      });
  }
}

function plain(failure: LinkFailure): LinkResult {
  const { notSent: _notSent, linkLost: _linkLost, ...rest } = failure;
  return rest;
}

function isReport(data: unknown): data is OutcomeReport {
  const state = (data as { state?: unknown } | null)?.state;
  if (state === 'settled') return typeof (data as { result?: { ok?: unknown } }).result?.ok === 'boolean';
  return state === 'pending' || state === 'lost' || state === 'unknown';
}
