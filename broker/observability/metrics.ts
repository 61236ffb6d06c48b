/**
 * Prometheus metrics of one broker (prom-client, served at /metrics): the Node process (CPU, memory, event-loop lag,
 * handles: `collectDefaultMetrics`), sessions up per platform, manager reconnects and completed resyncs per platform,
 * edge links open, opened and refused, calls per operation and outcome, call latency per operation, and cache sizes
 * per platform and kind. Each broker owns its registry so several in-process brokers (tests) do not collide. Values
 * that mirror state (sessions, reconnects, resyncs, open links) are read at scrape time, so the call path only pays
 * for one counter and one histogram update through pre-resolved label children.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { LinkEvents } from '../link/edgeLinkServer.js';
import type { PlatformSet } from '../platforms/platformSet.js';

export type CallOutcome = 'ok' | 'timeout' | string;

export class BrokerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'op' | 'outcome'>;
  private readonly latency: Histogram<'op'>;
  private readonly counterChildren = new Map<string, { inc(): void }>();
  private readonly latencyChildren = new Map<string, { observe(v: number): void }>();
  private openLinks: () => number = () => 0;
  /** Counts edge links as the link server opens or refuses them. */
  readonly linkEvents: LinkEvents;

  constructor(platforms: PlatformSet) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // A session counts its logins; every login after its first is a reconnect. A platform removed and added again
    // starts a new session, which Prometheus reads as a counter reset.
    new Counter({
      name: 'broker_manager_reconnects_total', help: 'Manager logins after the first (reconnects), per trade platform.',
      labelNames: ['platform', 'family'] as const, registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) this.inc({ platform: p.id, family: p.family }, Math.max(0, p.session.logins - 1));
      },
    });
    new Counter({
      name: 'broker_resyncs_total', help: 'Full resyncs of the pumping cache completed, per trade platform.',
      labelNames: ['platform', 'family'] as const, registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) this.inc({ platform: p.id, family: p.family }, p.cache.resyncs);
      },
    });
    const openLinks = () => this.openLinks();
    new Gauge({
      name: 'broker_edge_links', help: 'Edge links open now.', registers,
      collect() { this.set(openLinks()); },
    });
    const opened = new Counter({ name: 'broker_edge_links_opened_total', help: 'Edge links accepted.', registers });
    const refused = new Counter({ name: 'broker_edge_links_refused_total', help: 'Edge link upgrades refused for bad credentials.', registers });
    this.linkEvents = { opened: () => opened.inc(), refused: () => refused.inc() };
    new Gauge({
      name: 'broker_session_up', help: 'Manager session logged in (1) or not (0), per trade platform.',
      labelNames: ['platform', 'family'] as const, registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) this.set({ platform: p.id, family: p.family }, p.session.up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'broker_cache_items', help: 'Records held by the pumping cache, per trade platform and kind.',
      labelNames: ['platform', 'kind'] as const, registers,
      collect() {
        this.reset();
        for (const p of platforms.all()) {
          for (const [kind, size] of Object.entries(p.cache.sizes())) this.set({ platform: p.id, kind }, size);
        }
      },
    });
    this.requests = new Counter({
      name: 'broker_requests_total', help: 'Calls answered on edge links, per operation and outcome (ok, timeout or error code).',
      labelNames: ['op', 'outcome'] as const, registers,
    });
    this.latency = new Histogram({
      name: 'broker_request_duration_seconds', help: 'Time from a call frame to its answer, per operation.',
      labelNames: ['op'] as const, registers,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    });
  }

  /** `op` must come from a bounded set (known handler names or "unknown") to keep label cardinality bounded. */
  observe(op: string, outcome: CallOutcome, seconds: number): void {
    const key = `${op}\u0000${outcome}`;
    let counter = this.counterChildren.get(key);
    if (!counter) this.counterChildren.set(key, (counter = this.requests.labels(op, outcome)));
    counter.inc();
    let histogram = this.latencyChildren.get(op);
    if (!histogram) this.latencyChildren.set(op, (histogram = this.latency.labels(op)));
    histogram.observe(seconds);
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
