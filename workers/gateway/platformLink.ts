/**
 * A link object: one of `LINKS_PER_PLATFORM` Durable Objects per trade platform and region (`<platform>@<region>#<n>`:
 * the home region's take live reads and writes, another region's its callers' cached reads), each holding a
 * multiplexed WebSocket to the brokers that serve the platform (`BrokerSet`: the platform's ordered list of brokers,
 * the first healthy one taking the calls). Calls without an Idempotency-Key come straight from the edge, picked by a
 * hash of their trace id, so a platform's reads spread over several single-threaded objects; calls under a key come
 * from their idempotency ledger, which judges the raw answer itself.
 *
 * Invariants: every call gets an answer, whatever happens to the links (a read whose broker is lost under it is sent
 * to the next broker within its budget; a write in flight on a lost link answers `NoConnect` with an unknown outcome);
 * every call is sent once, to one broker, unless it was never sent or never taken; the object keeps no durable state,
 * so losing it loses nothing but the routes of late outcomes, which ledgers then ask the brokers for.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';
import { configOf } from '../config.js';
import { catalog, type Operation } from '../../shared/catalog/index.js';
import { PING_OP, type CallResult, type LateFrame } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import { REPLICA_WINDOW_FRAMES, REPLICATE_OP, REPLICATED_OP, type ReplicaFrame } from '../../shared/replication.js';
import type { ShapeContext } from '../envelope/index.js';
import type { Placement } from '../regions/placement.js';
import { routeBrokerUrls } from '../../shared/brokerRoutes.js';
import { namespaceIn, objectId, placedStub } from '../regions/objects.js';
import { BrokerSet, type BrokerSetOptions, type BrokerSetStats } from './brokerSet.js';
import { EdgeReplica, replicaPlan, type ReplicaPlan } from './edgeReplica.js';
import { parsePosition, positionText } from '../../shared/positions.js';
import { linkName, pickLink } from './names.js';
import type { GatewayCall, KeyedSend, LinkAnswer, LinkResponse, LinkStats, OutcomeAnswer } from './messages.js';
import { shapeAnswer, type RawOk } from './shapeAnswer.js';

export { shapeAnswer } from './shapeAnswer.js';

/** Per catalog entry, computed once: the entry, its shape flags, and how a replica answers it (when it can). */
interface Route {
  entry: Operation;
  paged: boolean;
  plan: ReplicaPlan | undefined;
}
const byId: ReadonlyMap<string, Route> = new Map(
  catalog.map((e) => [e.id, { entry: e, paged: !!e.paged, plan: replicaPlan(e) }]),
);

/**
 * How often a region's link object whose brokers cannot be reached tries them again in the background, while its
 * calls go to the home region's links.
 */
export const REGION_RETRY_MS = 1000;

/** The longest a read waits for the replica to reach the position it sent before the broker answers it. */
export const POSITION_WAIT_MS = 1000;

/** A refused or dropped replication is asked for again no sooner than this. */
const REPLICATE_RETRY_MS = 1000;

/** How long a late outcome's route is kept: past the broker's late-answer window (120 s), with room to spare. */
const LATE_ROUTE_MS = 5 * 60_000;
/** Most routes kept; beyond it the oldest go, and their ledgers learn the outcome by asking the broker. */
const MAX_LATE_ROUTES = 10_000;

export class PlatformLink extends DurableObject<Env> {
  private brokers: BrokerSet | undefined;
  private calls = 0;
  /** Keyed calls answered with an unknown outcome: which ledger their late outcome goes to. */
  private readonly lateRoutes = new Map<string, { ledger: string; home: Placement; until: number }>();
  /** Where this object is (its region and jurisdiction), as the calls sent to it say: its siblings are there too. */
  private place: Placement | undefined;
  /** A region's object: whether its brokers could not be reached, so its calls go to the home's links meanwhile. */
  private unreachable = false;
  /** When the brokers are tried again in the background while they cannot be reached. */
  private retryAt = 0;
  /** Calls sent to the home's links because this region's object could not reach the brokers. */
  private viaHome = 0;
  /** Reads that waited for the replica to reach the position they sent. */
  private positionWaits = 0;

  /** The platform's hot tables as the broker's change stream keeps them (`edgeReplica.ts`); off when the bound is 0. */
  private replica: EdgeReplica | undefined;
  private replicas = 0;
  private replicateAfter = 0;

  /**
   * Answers one validated call shaped for its generation (one RPC per API call): from the replica when it is in sync
   * and holds what the call reads, else forwarded to the broker, whose `data` goes into the envelope unparsed.
   */
  async call(input: GatewayCall): Promise<LinkResponse> {
    const route = byId.get(input.operationId);
    if (!route) throw new Error(`unknown operation ${input.operationId}`);
    const ctx: ShapeContext = {
      generation: route.entry.generation,
      family: input.family,
      paged: route.paged,
      traceId: input.traceId,
    };
    this.calls++;
    this.place = input.place;
    const brokers = this.brokersFor(input.platform, input.brokerUrls);
    // The replica is made by the first read it could answer: an object that only writes and reads live never takes
    // a snapshot of the platform.
    const replica =
      this.replica ?? (route.plan !== undefined ? this.startReplica(input.platform, input.family) : undefined);
    if (replica !== undefined) {
      if (route.plan !== undefined && replica.inSync) {
        const local = await this.readReplica(replica, route.plan, input);
        if (local !== undefined) return shapeAnswer(ctx, local);
      }
      if (replica.idle && brokers.connected) this.replicate(input.platform);
    }
    const regional = input.place.region !== input.home.region;
    if (regional && this.unreachable && !brokers.connected) {
      this.retryBrokers(input.platform, brokers);
      return this.callViaHome(input, input.timeoutMs);
    }
    const started = Date.now();
    const r = await brokers.call(
      {
        platform: input.platform,
        op: input.op,
        args: input.args,
        timeoutMs: input.timeoutMs,
        traceId: input.traceId,
        ...(input.client !== undefined ? { client: input.client } : {}),
      },
      input.mutating,
      { raw: true, paged: route.paged },
    );
    if (regional && !r.ok && r.error.code === 'NoConnect' && !brokers.connected && !input.mutating) {
      // This region cannot reach the brokers: the home region's links answer (slower, never wrong) until it can.
      this.unreachable = true;
      this.retryAt = Date.now() + REGION_RETRY_MS;
      const left = input.timeoutMs - (Date.now() - started);
      if (left >= 1) return this.callViaHome(input, left);
    }
    return shapeAnswer(ctx, r);
  }

  /**
   * The replica's answer to a read, with the position it reflects; undefined when the broker is to answer: the
   * replica cannot answer the read, or the read sent a position (`after`) the replica has not reached within
   * POSITION_WAIT_MS (and half the read's budget), or cannot judge (another epoch).
   */
  private async readReplica(
    replica: EdgeReplica,
    plan: ReplicaPlan,
    input: GatewayCall,
  ): Promise<RawOk | Extract<CallResult, { ok: false }> | undefined> {
    const wanted = parsePosition(input.after);
    if (wanted !== null && !replica.hasReached(wanted)) {
      const at = replica.position;
      if (at === undefined || at.epoch !== wanted.epoch) return undefined;
      this.positionWaits++;
      if (!(await replica.whenReached(wanted, Math.min(POSITION_WAIT_MS, input.timeoutMs / 2)))) return undefined;
    }
    const local = replica.read(plan, input.args);
    const at = replica.position;
    return local?.ok && at !== undefined ? { ...local, pos: positionText(at) } : local;
  }

  /** A call of this region's object answered by one of the platform's home links, within what is left of its budget. */
  private callViaHome(input: GatewayCall, timeoutMs: number): Promise<LinkResponse> {
    this.viaHome++;
    const name = pickLink(input.platform, input.home.region, input.traceId, configOf(this.env).LINKS_PER_PLATFORM);
    return placedStub(this.env.LINKS, name, input.home).call({ ...input, place: input.home, timeoutMs });
  }

  /** While the brokers cannot be reached, tries them again in the background, at most every REGION_RETRY_MS. */
  private retryBrokers(platform: string, brokers: BrokerSet): void {
    const now = Date.now();
    if (now < this.retryAt) return;
    this.retryAt = now + REGION_RETRY_MS;
    void brokers.currentLink.call({ platform, op: PING_OP, args: {}, timeoutMs: 5000 }, false).then((r) => {
      if (r.ok && this.brokers === brokers) this.unreachable = false;
    });
  }

  /** Sends a call under an Idempotency-Key for its ledger and answers the broker's result raw. */
  async send(input: KeyedSend): Promise<LinkAnswer> {
    this.calls++;
    this.pruneRoutes(Date.now());
    this.place = input.home;
    this.lateRoutes.set(input.callId, { ledger: input.ledger, home: input.home, until: Date.now() + LATE_ROUTE_MS });
    const r = (await this.brokersFor(input.platform, input.brokerUrls).call(
      {
        platform: input.platform,
        op: input.op,
        args: input.args,
        timeoutMs: input.timeoutMs,
        traceId: input.traceId,
        callId: input.callId,
        ...(input.client !== undefined ? { client: input.client } : {}),
      },
      true,
    )) as LinkAnswer;
    // Only a call whose outcome is still open can have a late one.
    if (r.ok || r.outcome !== 'unknown') this.lateRoutes.delete(input.callId);
    return r;
  }

  /**
   * Asks the platform's brokers what became of a call id, waiting up to `timeoutMs` while it still runs: every broker
   * of the list, since the call went to whichever was in use then.
   */
  async outcome(q: {
    brokerUrls: string[];
    platform: string;
    callId: string;
    timeoutMs: number;
    /** Where this object is: the home placement the key was bound with. */
    place: Placement;
  }): Promise<OutcomeAnswer> {
    this.calls++;
    this.place = q.place;
    return this.brokersFor(q.platform, q.brokerUrls).outcome(q.callId, q.timeoutMs);
  }

  stats(): LinkStats {
    return {
      calls: this.calls,
      pending: this.brokers?.pendingCount ?? 0,
      connected: this.brokers?.connected ?? false,
      lateRoutes: this.lateRoutes.size,
      viaHome: this.viaHome,
      positionWaits: this.positionWaits,
      replica: this.replica?.stats() ?? null,
    };
  }

  /** The platform's brokers as this object sees them (null before its first call): for operators, the drill and tests. */
  brokerStats(): BrokerSetStats | null {
    return this.brokers?.stats() ?? null;
  }

  /**
   * The registry gave the platform another list of brokers, as a sibling link object saw: drop the links to the old
   * ones, so calls still pending on them fail as link loss rather than wait out their budget.
   */
  // eslint-disable-next-line @typescript-eslint/require-await -- an RPC method: its callers get a promise either way, and a throw rejects it
  async retarget(brokerUrls: string[]): Promise<void> {
    if (this.brokers && BrokerSet.key(this.brokers.urls) !== BrokerSet.key(brokerUrls)) {
      this.brokers.close();
      this.brokers = undefined;
      this.replica?.reset();
    }
  }

  /**
   * The heartbeat's timing towards a platform's brokers: the defaults of shared/frames.ts (LINK_PING_EVERY_MS,
   * LINK_PING_TIMEOUT_MS). The testing link of test/support/workers/linkHarness.ts may beat faster.
   */
  protected heartbeat(): Pick<BrokerSetOptions, 'pingEveryMs' | 'pingTimeoutMs'> {
    return {};
  }

  /**
   * The set of the platform's brokers, `brokerUrls` as the registry lists them reached the way this object's region
   * reaches them (`REGION_BROKER_ROUTES`); made again when the list changed.
   */
  private brokersFor(platform: string, listed: string[]): BrokerSet {
    const brokerUrls = this.place
      ? routeBrokerUrls(listed, this.place.region, configOf(this.env).REGION_BROKER_ROUTES)
      : listed;
    if (this.brokers === undefined || BrokerSet.key(this.brokers.urls) !== BrokerSet.key(brokerUrls)) {
      const moved = this.brokers !== undefined;
      // The registry gave the platform other brokers: calls still pending on the old links fail as link loss, here
      // and on the platform's other link objects.
      this.brokers?.close();
      this.replica?.reset();
      this.replica = undefined;
      this.brokers = new BrokerSet(
        platform,
        brokerUrls,
        {
          secret: configOf(this.env).BROKER_SECRET ?? '',
          onLate: (late) => this.onLate(late),
          holdDownMs: configOf(this.env).BROKER_FAILBACK_SECONDS * 1000,
          ...this.heartbeat(),
        },
        {
          onOpen: (url) => {
            this.unreachable = false;
            if (url === this.brokers?.currentUrl) {
              this.replicateAfter = 0;
              this.replicate(platform);
            }
          },
          onClose: (url) => {
            if (url === this.brokers?.currentUrl) this.replica?.reset();
          },
          onPush: (url, frame) => this.onReplicaFrame(platform, url, frame),
          onSwitch: () => {
            // The new broker's replication replaces the old one's: reads fall through to it until its snapshot lands.
            this.replica?.reset();
            this.replicateAfter = 0;
            if (this.brokers?.connected) this.replicate(platform);
          },
        },
      );
      if (moved) this.retargetSiblings(platform, brokerUrls);
    }
    return this.brokers;
  }

  /**
   * The link's replica, made on the first read of the platform it could answer (unless `EDGE_REPLICA_MAX_ROWS` is 0),
   * its large tables in the object's storage (up to `EDGE_REPLICA_STORED_ROWS`): fed by the broker in use, asked for
   * each time that broker's link opens or another broker takes the calls, and emptied when that link drops.
   */
  private startReplica(platform: string, family: Family | null): EdgeReplica | undefined {
    const config = configOf(this.env);
    const maxRows = config.EDGE_REPLICA_MAX_ROWS;
    if (maxRows === 0 || family === null) return undefined;
    const storedRows = config.EDGE_REPLICA_STORED_ROWS;
    this.replica = storedRows > 0 ? this.storedReplica(family, maxRows, storedRows) : new EdgeReplica(family, maxRows);
    return this.replica;
  }

  /**
   * A replica with its large tables in the object's SQL storage; on a deployment whose link objects are not
   * SQLite-backed (the replica's storage refuses its first statement), one within the memory bound, as the log says.
   */
  private storedReplica(family: Family, maxRows: number, storedRows: number): EdgeReplica {
    try {
      return new EdgeReplica(family, maxRows, { sql: this.ctx.storage.sql, storedRows });
    } catch (error) {
      console.warn(
        JSON.stringify({
          msg: 'link object without SQL storage: replica tables past EDGE_REPLICA_MAX_ROWS are not replicated',
          error: String(error),
        }),
      );
      return new EdgeReplica(family, maxRows);
    }
  }

  private onReplicaFrame(platform: string, url: string, frame: Record<string, unknown>): void {
    const replica = this.replica;
    const brokers = this.brokers;
    // Only the broker in use feeds the replica; frames of a broker left are dropped.
    if (!replica || !brokers || url !== brokers.currentUrl || typeof frame.rep !== 'number') return;
    // Out of order or stopped: reads fall through until a new replication, asked for after a pause.
    if (!replica.apply(frame as unknown as ReplicaFrame)) {
      this.replicateAfter = Date.now() + REPLICATE_RETRY_MS;
      return;
    }
    // A snapshot's rows applied: the broker may send the next (its window keeps the link clear for answers).
    if ('rows' in frame && replica.awaiting(frame.rep)) {
      void brokers.currentLink.call(
        { platform, op: REPLICATED_OP, args: { rep: frame.rep, seq: frame.seq }, timeoutMs: 10_000 },
        false,
      );
    }
  }

  /** Asks the broker in use for a replication of the platform's hot tables; its snapshot and changes arrive as pushes. */
  private replicate(platform: string): void {
    const replica = this.replica;
    const brokers = this.brokers;
    if (!replica || !brokers || !replica.idle || Date.now() < this.replicateAfter) return;
    const rep = ++this.replicas;
    replica.expect(rep);
    void brokers.currentLink
      .call(
        {
          platform,
          op: REPLICATE_OP,
          args: { rep, maxRows: replica.askRows, window: REPLICA_WINDOW_FRAMES },
          timeoutMs: 10_000,
        },
        false,
      )
      .then((r) => {
        if (r.ok || !replica.awaiting(rep)) return;
        // Refused (a broker without replicas, a platform it does not serve): asked again later.
        replica.reset();
        this.replicateAfter = Date.now() + REPLICATE_RETRY_MS;
      });
  }

  /** The platform's other link objects of this object's region; those of other regions follow on their next call. */
  private retargetSiblings(platform: string, brokerUrls: string[]): void {
    const place = this.place;
    if (place === undefined) return;
    const links = configOf(this.env).LINKS_PER_PLATFORM;
    for (let n = 0; n < links; n++) {
      const name = linkName(platform, place.region, n);
      if (objectId(namespaceIn(this.env.LINKS, place.jurisdiction), name).equals(this.ctx.id)) continue;
      this.ctx.waitUntil(
        placedStub(this.env.LINKS, name, place)
          .retarget(brokerUrls)
          .catch(() => {
            /* it retargets on its next call */
          }),
      );
    }
  }

  /** Hands a late outcome to the ledger of its call; one that cannot be handed on is asked for by the ledger later. */
  private onLate(late: LateFrame['late']): void {
    const route = this.lateRoutes.get(late.callId);
    if (!route) return;
    this.lateRoutes.delete(late.callId);
    const ledger = placedStub(this.env.IDEMPOTENCY, route.ledger, route.home);
    this.ctx.waitUntil(
      ledger.settle(late.callId, late.report).catch((err: unknown) => {
        console.warn(
          JSON.stringify({ msg: 'late outcome not handed to its ledger', callId: late.callId, error: String(err) }),
        );
      }),
    );
  }

  private pruneRoutes(now: number): void {
    for (const [callId, route] of this.lateRoutes) {
      if (this.lateRoutes.size < MAX_LATE_ROUTES && route.until > now) break;
      this.lateRoutes.delete(callId);
    }
  }
}
