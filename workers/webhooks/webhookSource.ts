/**
 * A webhook source: one Durable Object per trade platform that some webhook endpoint hears, in the platform's home.
 * It holds a subscription to the platform's change stream — the same `BrokerSubscription` a stream object holds, with
 * its heartbeat and its moves to the next broker of the platform's list — and makes each change a webhook event
 * (`webhookEvents.ts`) for every enabled endpoint of the organization that asked for its type and hears the platform,
 * handing them to each endpoint's deliveries object in the order they came.
 *
 * - PF4 balance and credit operations are not in the change stream; an account whose balance or credit changed has
 *   its history read (`TradesUserHistory`) since the source last looked, and each balance or credit entry is an event
 *   (its id from the entry, so reading an entry twice gives the same id).
 * - Platform up and down are told once per change of the platform's status; margin levels once per level reached.
 * - The source keeps what it must remember (its platform, the platform's status, each account's balance, credit and
 *   margin level) in its storage; an alarm every minute keeps it running while an endpoint hears the platform (after
 *   a restart too) and lets it go once none does.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import type { Family } from '../../shared/protocol.js';
import { topicsOf, type StreamEvent } from '../../shared/streams.js';
import { BrokerSubscription } from '../streams/brokerSubscription.js';
import type { RingEvent } from '../streams/fanout.js';
import type { StreamConfig } from '../streams/streamRequest.js';
import { RegistryStore } from '../registry/registryStore.js';
import { homePlacement } from '../regions/placement.js';
import { pickLink } from '../gateway/names.js';
import { placedStub } from '../regions/objects.js';
import type { GatewayCall } from '../gateway/messages.js';
import { catalog } from '../../shared/catalog/index.js';
import { WebhookStore, type SigningEndpoint } from './webhookStore.js';
import { SNAPSHOT_TOPICS } from '../../shared/frames.js';
import {
  balanceOperationOfHistory,
  canonicalJson,
  eventId,
  webhookEventsOf,
  type UnidentifiedEvent,
  type WebhookEvent,
} from './webhookEvents.js';

/** What the source is told of its platform, and keeps. */
export interface SourceConfig {
  platform: string;
  family: Family;
  organizationId: string;
}

const ALARM_MS = 60_000;
const ENDPOINTS_CACHE_MS = 5000;
/** A hand-over to an endpoint's deliveries that failed is tried again after this, a few times, then logged. */
const HANDOVER_RETRY_MS = [200, 1000, 5000];
const HISTORY_OP = 'v2.PF4.TradesUserHistory';

export class WebhookSource extends DurableObject<Env> {
  private config: (SourceConfig & { brokerUrls: string[] }) | undefined;
  private active = false;
  private chain: Promise<void> = Promise.resolve();
  private endpoints: { list: SigningEndpoint[]; at: number } | undefined;
  private readonly sql: SqlStorage;
  private readonly subscription = new BrokerSubscription({
    config: (): StreamConfig | undefined =>
      this.config && {
        platform: this.config.platform,
        family: this.config.family,
        brokerUrls: this.config.brokerUrls,
        shard: 0,
        // Ticks and symbol changes make no webhook event.
        topics: topicsOf(this.config.family).filter((t) => t !== 'ticks' && t !== 'symbols'),
      },
    secret: () => configOf(this.env).BROKER_SECRET ?? '',
    hasClients: () => this.active,
    publish: (event) => this.take(event),
    disconnected: () => this.take({ topic: 'status', data: { connected: false } }),
    snapshot: (events, last) => this.take({ topic: 'snapshot', events, last }),
  });
  /** The keys of each topic the snapshot being received holds so far. */
  private snapshotKeys = new Map<string, Set<string>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec('CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
    // The platform's records as the source last knew them (canonical JSON of the stream's shape; NULL once removed),
    // by topic and key, with how many changes of the record it has told: an event's id takes that count, so a record
    // changed back to an earlier state, or removed and added again, is a new event.
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS records (topic TEXT NOT NULL, key TEXT NOT NULL, data TEXT, version INTEGER NOT NULL, PRIMARY KEY (topic, key))',
    );
    void ctx.blockConcurrencyWhile(async () => {
      const stored = this.get('config');
      if (stored) await this.run(JSON.parse(stored) as SourceConfig);
    });
  }

  /** Starts (or keeps) the source of `config.platform`; answers whether it runs (some endpoint hears the platform). */
  async start(config: SourceConfig): Promise<boolean> {
    this.set('config', JSON.stringify(config));
    if (!this.get('started')) this.set('started', new Date().toISOString());
    return this.run(config);
  }

  /** Counters for tests: whether it runs, on which broker, and how many events it handed over. */
  stats(): { active: boolean; broker: string | null; subscribed: boolean; handedOver: number } {
    const { broker, subscribed } = this.subscription.stats();
    return { active: this.active, broker, subscribed, handedOver: Number(this.get('handed') ?? 0) };
  }

  /** Each minute (its alarm): runs while an endpoint hears the platform, stops once none does; answers whether it runs. */
  async recheck(): Promise<boolean> {
    const stored = this.get('config');
    return stored ? this.run(JSON.parse(stored) as SourceConfig) : false;
  }

  override async alarm(): Promise<void> {
    await this.recheck();
  }

  /** Checks the registry: runs the subscription on the platform's brokers while an endpoint hears it, else stops. */
  private async run(config: SourceConfig): Promise<boolean> {
    const entry = await new RegistryStore(this.env.DB).findAnyPlatform(config.platform);
    this.endpoints = undefined;
    const heard = entry !== null && (await this.currentEndpoints(config)).length > 0;
    if (!entry || !heard) {
      this.active = false;
      this.subscription.stop('no endpoint hears the platform');
      await this.ctx.storage.deleteAlarm();
      // What it knew ages from now on: an endpoint registered later starts from a snapshot of its own.
      this.sql.exec('DELETE FROM records');
      this.sql.exec("DELETE FROM kv WHERE key NOT IN ('config', 'handed')");
      await this.chain;
      return false;
    }
    this.config = { ...config, brokerUrls: entry.brokerUrls ?? configOf(this.env).BROKER_URL };
    this.active = true;
    this.subscription.use(this.config.brokerUrls);
    this.subscription.ensure();
    await this.ctx.storage.setAlarm(Date.now() + ALARM_MS);
    return true;
  }

  private take(event: RingEvent | SnapshotPart): void {
    const next = () => (event.topic === 'snapshot' ? this.compare(event) : this.handle(event));
    this.chain = this.chain.then(next, next);
  }

  /**
   * A part of the platform's records as they stand, after a subscription or a return of the manager session:
   * each record the source did not know is told as added, each that differs as changed, and once the last part came,
   * each the source knew and the snapshot lacks as deleted — the changes the stream could not carry while it was
   * down. The first snapshot a source ever sees is where it starts: it is kept, not told.
   */
  private async compare(part: SnapshotPart): Promise<void> {
    const config = this.config;
    if (!config) return;
    const baseline = this.get('baseline') !== undefined;
    for (const event of part.events) {
      const data = event.data as Record<string, unknown>;
      const key = recordKey(event.topic, data);
      if (key === null) continue;
      let seen = this.snapshotKeys.get(event.topic);
      if (!seen) this.snapshotKeys.set(event.topic, (seen = new Set()));
      seen.add(key);
      const { kind: _kind, ...record } = data;
      const stored = this.storedRecord(event.topic, key)?.data ?? null;
      if (!baseline) {
        this.storeRecord(event.topic, key, record, 0);
        if (event.topic === 'users' && config.family === 'PF4') this.set(`money:${key}`, moneyOf(record));
        continue;
      }
      if (stored === canonicalJson(record)) continue;
      await this.handle({
        topic: event.topic,
        data: { kind: stored === null ? 'Added' : 'Updated', ...record },
      } as StreamEvent);
    }
    if (!part.last) return;
    const seen = this.snapshotKeys;
    this.snapshotKeys = new Map();
    if (baseline) {
      for (const topic of snapshotTopics(config.family)) {
        const keys = seen.get(topic) ?? new Set<string>();
        const gone = this.sql
          .exec<{ key: string; data: string }>(
            'SELECT key, data FROM records WHERE topic = ? AND data IS NOT NULL',
            topic,
          )
          .toArray()
          .filter((row) => !keys.has(row.key));
        for (const row of gone) {
          const record = JSON.parse(row.data) as Record<string, unknown>;
          await this.handle({ topic, data: { kind: 'Deleted', ...record } } as StreamEvent);
        }
      }
    }
    this.set('baseline', new Date().toISOString());
  }

  private async handle(event: RingEvent): Promise<void> {
    const config = this.config;
    if (!config) return;
    if (event.topic === 'resync' || (event.topic === 'status' && !event.data.connected)) {
      // A snapshot cut off by the loss is not one: the next subscription's snapshot is compared whole.
      this.snapshotKeys = new Map();
      if (event.topic === 'resync') return;
    }
    // What the event leaves the source knowing, kept only once its events are handed over: an event whose hand-over
    // failed is found again in the next snapshot, against what the source knew before it.
    const learnt = new Map<string, string | null>();
    const change = this.recordChange(event);
    const made = await this.eventsOf(config, event, learnt);
    const at = new Date().toISOString();
    const events: WebhookEvent[] = [];
    for (const e of made) {
      events.push({
        id: await eventId(config.platform, e, this.distinguisher(e, change, learnt, at)),
        type: e.type,
        platform: config.platform,
        family: config.family,
        login: e.login,
        occurredAt: at,
        data: e.data,
      });
    }
    if (events.length > 0 && !(await this.handOver(config, events))) {
      this.resubscribe();
      return;
    }
    for (const [key, value] of learnt) {
      if (value === null) this.delete(key);
      else this.set(key, value);
    }
    if (change) this.storeRecord(change.topic, change.key, change.deleted ? null : change.record, change.version);
  }

  /**
   * What makes an event's id its own beyond its record: a record's change count (the same record content seen
   * again is a new change), a margin level reached again, the time of a platform status; nothing for a balance
   * operation, whose ticket is in its record.
   */
  private distinguisher(
    e: UnidentifiedEvent,
    change: RecordChange | null,
    learnt: Map<string, string | null>,
    at: string,
  ): string {
    if (e.type === 'platform.up' || e.type === 'platform.down') return at;
    if (e.type === 'margin.call' || e.type === 'margin.stopOut') {
      const key = `margins:${String(e.login)}`;
      const count = Number(learnt.get(key) ?? this.get(key) ?? 0) + 1;
      learnt.set(key, String(count));
      return `m${count}`;
    }
    if (e.type === 'balance.operation' && change?.topic !== 'deals') return '';
    return change ? `v${change.version}` : '';
  }

  /** The record an event of a record topic changes, and the change count it makes. */
  private recordChange(event: RingEvent): RecordChange | null {
    if (!(SNAPSHOT_TOPICS as readonly string[]).includes(event.topic)) return null;
    const { kind, ...record } = event.data as Record<string, unknown>;
    const key = recordKey(event.topic, record);
    if (key === null) return null;
    const version = (this.storedRecord(event.topic, key)?.version ?? 0) + 1;
    return { topic: event.topic, key, record, deleted: kind === 'Deleted', version };
  }

  /** A hand-over failed: the subscription starts again, and its snapshot finds what the source did not keep. */
  private resubscribe(): void {
    this.subscription.stop('events not handed over');
    this.subscription.ensure();
  }

  /** The webhook events of one stream event, with what the source remembers (status, levels, money) brought up to date. */
  private async eventsOf(
    config: SourceConfig,
    event: StreamEvent,
    learnt: Map<string, string | null>,
  ): Promise<UnidentifiedEvent[]> {
    if (event.topic === 'status') {
      const status = event.data.connected ? 'up' : 'down';
      const before = this.get('status');
      if (before === status) return [];
      learnt.set('status', status);
      // The first status a source sees is where it starts, not a change.
      return before === undefined ? [] : webhookEventsOf(config.family, event);
    }
    const data = event.data as Record<string, unknown>;
    const login = typeof data.login === 'number' ? data.login : null;
    if (event.topic === 'margin' && config.family === 'PF4' && login !== null) {
      const previous = this.get(`level:${login}`) ?? 'Ok';
      learnt.set(`level:${login}`, String(data.levelType));
      return webhookEventsOf(config.family, event, previous);
    }
    const made = webhookEventsOf(config.family, event);
    if (event.topic === 'users' && config.family === 'PF4' && login !== null) {
      made.push(...(await this.balanceOperations(config, login, data, learnt)));
    }
    return made;
  }

  /**
   * A PF4 account's balance and credit operations since the source last looked, when its balance or credit changed:
   * read from its history, each entry once (the deliveries object takes an event id once).
   */
  private async balanceOperations(
    config: SourceConfig,
    login: number,
    account: Record<string, unknown>,
    learnt: Map<string, string | null>,
  ): Promise<UnidentifiedEvent[]> {
    const money = moneyOf(account);
    const before = this.get(`money:${login}`);
    if (account.kind === 'Deleted') {
      learnt.set(`money:${login}`, null);
      return [];
    }
    learnt.set(`money:${login}`, money);
    if (before === money) return [];
    const lookedAt = this.get(`looked:${login}`) ?? this.get('started') ?? new Date().toISOString();
    // A minute before the last look: an entry written in the same second as the look is not missed.
    const fromTime = new Date(Date.parse(lookedAt) - 60_000).toISOString();
    const now = new Date().toISOString();
    const history = await this.platformCall(config, HISTORY_OP, { login, fromTime });
    if (!Array.isArray(history)) return [];
    learnt.set(`looked:${login}`, now);
    return history
      .map((entry) => balanceOperationOfHistory(entry as Record<string, unknown>))
      .filter((e): e is UnidentifiedEvent => e !== null);
  }

  /** A read of the platform through one of its link objects in its home, answered as the v2 API's `data`. */
  private async platformCall(
    config: SourceConfig & { brokerUrls?: string[] },
    operationId: string,
    args: Record<string, unknown>,
  ): Promise<unknown> {
    const entry = catalog.find((e) => e.id === operationId);
    const platform = await new RegistryStore(this.env.DB).findAnyPlatform(config.platform);
    if (!entry || !platform) return null;
    const edge = configOf(this.env);
    const home = homePlacement(platform, edge.HOME_REGION);
    const call: GatewayCall = {
      operationId,
      op: entry.op,
      platform: config.platform,
      family: config.family,
      args,
      timeoutMs: 15_000,
      traceId: crypto.randomUUID().replaceAll('-', ''),
      client: 'webhooks',
      brokerUrls: platform.brokerUrls ?? edge.BROKER_URL,
      mutating: false,
      home,
      place: home,
    };
    const stub = placedStub(
      this.env.LINKS,
      pickLink(config.platform, home.region, call.traceId, edge.LINKS_PER_PLATFORM),
      home,
    );
    const answer = (await stub.call(call)) as { body: unknown };
    if (typeof answer.body !== 'string') return null;
    const envelope = JSON.parse(answer.body) as { data: unknown; error: unknown };
    if (envelope.error) {
      console.error(JSON.stringify({ msg: 'webhook source read failed', operationId, error: envelope.error }));
      return null;
    }
    return envelope.data;
  }

  /**
   * Hands the events to every endpoint that wants them, in order; a failed hand-over is tried again a few times.
   * Answers whether every endpoint took them (one that did takes each id once, so handing them over again is safe).
   */
  private async handOver(config: SourceConfig, events: WebhookEvent[]): Promise<boolean> {
    let all = true;
    for (const endpoint of await this.currentEndpoints(config)) {
      const wanted = events.filter((e) => (endpoint.eventTypes as string[]).includes(e.type));
      if (wanted.length === 0) continue;
      const stub = this.env.WEBHOOKS.get(this.env.WEBHOOKS.idFromName(endpoint.id));
      for (let attempt = 0; ; attempt++) {
        try {
          await stub.accept(endpoint.id, wanted);
          this.set('handed', String(Number(this.get('handed') ?? 0) + wanted.length));
          break;
        } catch (error) {
          if (attempt >= HANDOVER_RETRY_MS.length) {
            console.error(
              JSON.stringify({ msg: 'webhook events not handed over', endpoint: endpoint.id, error: String(error) }),
            );
            all = false;
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, HANDOVER_RETRY_MS[attempt]));
        }
      }
    }
    return all;
  }

  private async currentEndpoints(config: SourceConfig): Promise<SigningEndpoint[]> {
    const now = Date.now();
    if (this.endpoints && now - this.endpoints.at < ENDPOINTS_CACHE_MS) return this.endpoints.list;
    const list = await new WebhookStore(this.env.DB).forPlatform(config.organizationId, config.platform);
    this.endpoints = { list, at: now };
    return list;
  }

  private storedRecord(topic: string, key: string): { data: string | null; version: number } | undefined {
    return this.sql
      .exec<{ data: string | null; version: number }>(
        'SELECT data, version FROM records WHERE topic = ? AND key = ?',
        topic,
        key,
      )
      .toArray()[0];
  }

  private storeRecord(topic: string, key: string, record: Record<string, unknown> | null, version: number): void {
    this.sql.exec(
      `INSERT INTO records (topic, key, data, version) VALUES (?, ?, ?, ?)
       ON CONFLICT (topic, key) DO UPDATE SET data = excluded.data, version = excluded.version`,
      topic,
      key,
      record === null ? null : canonicalJson(record),
      version,
    );
  }

  private get(key: string): string | undefined {
    return this.sql.exec<{ value: string }>('SELECT value FROM kv WHERE key = ?', key).toArray()[0]?.value;
  }

  private set(key: string, value: string): void {
    this.sql.exec(
      'INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      key,
      value,
    );
  }

  private delete(key: string): void {
    this.sql.exec('DELETE FROM kv WHERE key = ?', key);
  }
}

/** The record an event changes, and its change count after it. */
interface RecordChange {
  topic: string;
  key: string;
  record: Record<string, unknown>;
  deleted: boolean;
  version: number;
}

/** A part of a snapshot, as the source's queue of work holds it beside the stream's events. */
interface SnapshotPart {
  topic: 'snapshot';
  events: StreamEvent[];
  last: boolean;
}

/** The field that keys a record of each snapshot topic. */
const KEY_FIELD: Record<string, string> = {
  users: 'login',
  trades: 'order',
  positions: 'position',
  orders: 'order',
  deals: 'deal',
};

function recordKey(topic: string, record: Record<string, unknown>): string | null {
  const field = KEY_FIELD[topic];
  const value = field === undefined ? undefined : record[field];
  return typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' ? String(value) : null;
}

/** The snapshot topics of a family's webhook subscription. */
function snapshotTopics(family: Family): string[] {
  return topicsOf(family).filter((t) => (SNAPSHOT_TOPICS as readonly string[]).includes(t));
}

const moneyOf = (account: Record<string, unknown>) => `${String(account.balance)}|${String(account.credit)}`;

/** Starts the webhook source of each platform given (those an endpoint was registered, changed or enabled for). */
export async function startSources(
  env: Env,
  organizationId: string,
  platforms: readonly { id: string; type: string }[],
) {
  await Promise.all(
    platforms
      .filter((p): p is { id: string; type: Family } => p.type === 'PF4' || p.type === 'PF5')
      .map((p) =>
        env.WEBHOOK_SOURCES.get(env.WEBHOOK_SOURCES.idFromName(p.id)).start({
          platform: p.id,
          family: p.type,
          organizationId,
        }),
      ),
  );
}

/**
 * The worker's cron (wrangler.toml `[triggers]`, each minute): the source of every platform an enabled endpoint
 * hears is started, or kept running, so an endpoint registered outside the API (`npm run registry`) is heard too.
 */
export async function startHeardSources(env: Env): Promise<void> {
  const heard = await new WebhookStore(env.DB).heardPlatforms();
  const byOrganization = new Map<string, Array<{ id: string; type: string }>>();
  for (const p of heard) byOrganization.set(p.organizationId, [...(byOrganization.get(p.organizationId) ?? []), p]);
  await Promise.all(
    [...byOrganization].map(([organizationId, platforms]) => startSources(env, organizationId, platforms)),
  );
}
