/**
 * Prometheus metrics of one broker (prom-client, served at /metrics): the Node process (CPU, memory, event-loop lag,
 * handles: `collectDefaultMetrics`), sessions up per platform, manager reconnects and completed resyncs per platform,
 * trading-server login answers refused per platform and reason (`broker_login_refusals_total`),
 * edge links open, opened and refused, calls per operation and outcome, call latency per operation, and cache sizes
 * per platform and kind; and for brokers in pairs: failover notices received per reason and kind, reads moved here
 * from a lost broker, drains begun, whether the broker drains now, and calls refused (not taken) while draining.
 * Each broker owns its registry so several in-process brokers (tests) do not collide. Values
 * that mirror state (sessions, reconnects, resyncs, open links) are read at scrape time, and so are the call counts
 * and latencies: a call only adds one to a plain number and one to a bucket of a plain array (prom-client's own
 * `inc` and `observe` validate and hash their labels on every call, a tenth of the broker's CPU per cached read).
 */
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';
import type { LinkEvents } from '../link/edgeLinkServer.js';
import type { PlatformSet } from '../platforms/platformSet.js';

/** `ok`, `timeout`, or the error code the call was answered with. */
export type CallOutcome = string;

const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** One operation's latencies: counts per bucket (not cumulative; the last is beyond every bound), sum and count. */
interface LatencySeries {
  op: string;
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram with one label, `op`, kept in plain arrays and written out by the registry at scrape time exactly as
 * prom-client's Histogram writes it (`_bucket` with `le` first, cumulative, then `+Inf`, `_sum`, `_count`).
 */
class LatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, LatencySeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of one operation; its `observe` is a bucket search and three additions. */
  child(op: string): { observe(seconds: number): void } {
    let series = this.series.get(op);
    if (!series)
      this.series.set(op, (series = { op, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }));
    const { bounds } = this;
    const s = series;
    return {
      observe(seconds: number) {
        let i = 0;
        while (i < bounds.length && seconds > bounds[i]) i++;
        s.counts[i]++;
        s.sum += seconds;
        s.count++;
      },
    };
  }

  get(): {
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }>;
  } {
    const values: Array<{ labels: Record<string, string | number>; value: number; metricName: string }> = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ labels: { le, op: s.op }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', op: s.op }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { op: s.op }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { op: s.op }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}

export class BrokerMetrics {
  readonly registry = new Registry();
  private readonly latency: LatencyHistogram;
  /** Calls answered per operation and outcome, read by the requests counter at scrape time. */
  private readonly answered = new Map<string, Map<string, { op: string; outcome: string; count: number }>>();
  private readonly latencyChildren = new Map<string, { observe(v: number): void }>();
  private openLinks: () => number = () => 0;
  private drainingNow = false;
  private readonly drains: Counter;
  /** Counts edge links as the link server opens or refuses them. */
  readonly linkEvents: LinkEvents;

  constructor(platforms: PlatformSet) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // A session counts its logins; every login after its first is a reconnect. A platform removed and added again
    // starts a new session, which Prometheus reads as a counter reset.
    new Counter({
      name: 'broker_manager_reconnects_total',
      help: 'Manager logins after the first (reconnects), per trade platform.',
      labelNames: ['platform', 'family'] as const,
      registers,
      collect() {
        this.reset();
        for (const p of platforms.all())
          this.inc({ platform: p.id, family: p.family }, Math.max(0, p.session.logins - 1));
      },
    });
    new Counter({
      name: 'broker_login_refusals_total',
      help: 'Trading-server login answers the broker refused, per trade platform and reason (malformed, version, family, build, rights, keepAlive); the session stays down, its /healthz lastError says what differs.',
      labelNames: ['platform', 'family', 'reason'] as const,
      registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) {
          for (const [reason, count] of p.session.loginRefusals)
            this.inc({ platform: p.id, family: p.family, reason }, count);
        }
      },
    });
    new Counter({
      name: 'broker_resyncs_total',
      help: 'Full resyncs of the pumping cache completed, per trade platform.',
      labelNames: ['platform', 'family'] as const,
      registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) this.inc({ platform: p.id, family: p.family }, p.cache.resyncs);
      },
    });
    const openLinks = () => this.openLinks();
    new Gauge({
      name: 'broker_edge_links',
      help: 'Edge links open now.',
      registers,
      collect() {
        this.set(openLinks());
      },
    });
    const opened = new Counter({ name: 'broker_edge_links_opened_total', help: 'Edge links accepted.', registers });
    const refused = new Counter({
      name: 'broker_edge_links_refused_total',
      help: 'Edge link upgrades refused for bad credentials.',
      registers,
    });
    const failovers = new Counter({
      name: 'broker_failovers_total',
      help: 'Failover notices from edge objects that moved to this broker, per reason and kind (link or stream).',
      labelNames: ['reason', 'kind'] as const,
      registers,
    });
    const moved = new Counter({
      name: 'broker_calls_moved_total',
      help: 'Reads sent here again after the broker they went to first was lost.',
      registers,
    });
    const notTaken = new Counter({
      name: 'broker_calls_not_taken_total',
      help: 'Calls, subscriptions and replications refused (not taken) while draining.',
      registers,
    });
    this.drains = new Counter({ name: 'broker_drains_total', help: 'Drains begun (SIGTERM).', registers });
    const draining = () => this.drainingNow;
    new Gauge({
      name: 'broker_draining',
      help: 'The broker drains now (1) or not (0).',
      registers,
      collect() {
        this.set(draining() ? 1 : 0);
      },
    });
    this.linkEvents = {
      opened: () => opened.inc(),
      refused: () => refused.inc(),
      failover: (labels) => failovers.inc(labels),
      moved: () => moved.inc(),
      notTaken: () => notTaken.inc(),
    };
    new Gauge({
      name: 'broker_session_up',
      help: 'Manager session logged in (1) or not (0), per trade platform.',
      labelNames: ['platform', 'family'] as const,
      registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) this.set({ platform: p.id, family: p.family }, p.session.up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'broker_cache_items',
      help: 'Records held by the pumping cache, per trade platform and kind.',
      labelNames: ['platform', 'kind'] as const,
      registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) {
          for (const [kind, size] of Object.entries(p.cache.sizes())) this.set({ platform: p.id, kind }, size);
        }
      },
    });
    const answered = this.answered;
    new Counter({
      name: 'broker_requests_total',
      help: 'Calls answered on edge links, per operation and outcome (ok, timeout, answer_too_large or error code).',
      labelNames: ['op', 'outcome'] as const,
      registers,
      collect() {
        this.reset();
        for (const outcomes of answered.values())
          for (const { op, outcome, count } of outcomes.values()) this.inc({ op, outcome }, count);
      },
    });
    this.latency = new LatencyHistogram(
      'broker_request_duration_seconds',
      'Time from a call frame to its answer, per operation.',
      LATENCY_BUCKETS,
      this.registry,
    );
  }

  /** `op` must come from a bounded set (known handler names or "unknown") to keep label cardinality bounded. */
  observe(op: string, outcome: CallOutcome, seconds: number): void {
    let outcomes = this.answered.get(op);
    if (!outcomes)
      this.answered.set(op, (outcomes = new Map<string, { op: string; outcome: string; count: number }>()));
    const counted = outcomes.get(outcome);
    if (counted) counted.count++;
    else outcomes.set(outcome, { op, outcome, count: 1 });
    let histogram = this.latencyChildren.get(op);
    if (!histogram) this.latencyChildren.set(op, (histogram = this.latency.child(op)));
    histogram.observe(seconds);
  }

  /** The broker began draining. */
  drainStarted(): void {
    this.drainingNow = true;
    this.drains.inc();
  }

  /** Where the open-links gauge reads from (the link server, created after the metrics). */
  countLinks(read: () => number): void {
    this.openLinks = read;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
