/**
 * Prometheus metrics of one broker (prom-client, served at /metrics): sessions up per platform, calls per operation
 * and outcome, call latency per operation, and cache sizes per platform and kind. Each broker owns its registry so
 * several in-process brokers (tests) do not collide. Gauges that mirror state are computed at scrape time, so the
 * call path only pays for one counter and one histogram update through pre-resolved label children.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PlatformSet } from '../platforms/platformSet.js';

export type CallOutcome = 'ok' | 'timeout' | string;

export class BrokerMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'op' | 'outcome'>;
  private readonly latency: Histogram<'op'>;
  private readonly counterChildren = new Map<string, { inc(): void }>();
  private readonly latencyChildren = new Map<string, { observe(v: number): void }>();

  constructor(platforms: PlatformSet) {
    const registers = [this.registry];
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

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
