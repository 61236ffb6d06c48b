/**
 * A trade platform as the broker serves it: its manager session and the pumping cache that session feeds. Created
 * from one entry of the platform file and closed when the entry goes away or changes.
 *
 * A platform is a hot standby (the default: its session logs in at start and stays logged in) or a cold one
 * (`standby: "cold"`): asleep, it holds no manager connection and an empty cache. Calls, subscriptions and replications
 * take the platform into use (`use`); the first use wakes a cold platform (login and full resync), and once no use has
 * been held for `coldIdleMs` it logs out and empties its cache again.
 */
import type { PingReport } from '../../shared/frames.js';
import type { Family } from '../../shared/protocol.js';
import { PumpCache, STREAM_SLICE_ROWS } from '../cache/pumpCache.js';
import { CacheFeed } from '../cache/cacheFeed.js';
import type { Logger } from '../observability/log.js';
import { PlatformEvents } from '../stream/platformEvents.js';
import { ManagerSession, type PlatformConfig, type SessionOptions } from '../session/managerSession.js';

/** How long a cold standby stays logged in after its last call, subscription or replication ended. */
export const DEFAULT_COLD_IDLE_MS = 10 * 60_000;

/** The longest a read fence stands (`TradePlatform.fenceReads`): past it, with the server still away, reads go on. */
export const FENCE_MAX_MS = 10_000;
/** How long a fence whose ping could not be sent waits for the session before it pings again. */
const FENCE_RETRY_MS = 250;

/** Wakes every waiter of `waiters`, emptied first (one woken may wait again). */
function wakeAll(waiters: Array<() => void>): void {
  for (const wake of waiters.splice(0)) wake();
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, Math.max(0, at - Date.now())).unref();
  });
}

/** One use of a platform (a call, a subscription, a replication), released once when it ends. */
export interface PlatformLease {
  release(): void;
  /**
   * Set while a cold standby that this use woke (or found waking) has not finished its first resync: resolves when it
   * has, or when the platform is closed first. Null when the platform can be used at once.
   */
  ready: Promise<void> | null;
}

/** The lease of a hot platform: nothing to wait for, nothing to count. */
const HOT_LEASE: PlatformLease = { release() {}, ready: null };

export class TradePlatform {
  readonly session: ManagerSession;
  readonly cache: PumpCache;
  /** The live stream of the platform's changes and session state, for edge subscriptions. */
  readonly events: PlatformEvents;
  /** What each event changed in the cache, for edge replicas. */
  readonly feed: CacheFeed;
  /** A resync ended since the session's current login. */
  private synced = false;
  /** A cold standby logged out (never logged in yet, or idle). */
  private asleepFlag: boolean;
  /** A cold standby woken and not yet through its first resync. */
  private waking = false;
  private readonly syncWaiters: Array<() => void> = [];
  /** Fences waiting for the session to be up and through a resync (`fenceReads`). */
  private readonly upWaiters: Array<() => void> = [];
  /** The newest fence cached reads wait for, while it stands. */
  private fence: Promise<void> | undefined;
  private uses = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private loggingOut: Promise<void> = Promise.resolve();
  private closed = false;
  /** Times a cold standby woke, for tests and logs. */
  wakes = 0;

  constructor(
    readonly config: PlatformConfig,
    sessionOptions: SessionOptions,
    private readonly log: Logger,
    private readonly coldIdleMs = DEFAULT_COLD_IDLE_MS,
  ) {
    this.asleepFlag = config.standby === 'cold';
    this.events = new PlatformEvents(config.family);
    this.feed = new CacheFeed(config.family);
    // A snapshot chunk is applied in slices between which the event loop runs (the edge links' heartbeats are answered
    // meanwhile); the feed and the streams are told of each event once the cache applied it, in arrival order.
    this.cache = new PumpCache(config.family, {
      sliceRows: STREAM_SLICE_ROWS,
      onApplied: (event) => {
        this.feed.afterEvent(event);
        if (event.event === 'resync' && event.op === 'end') {
          log('info', { msg: 'cache resynced', platform: config.id, counts: this.cache.sizes() });
          this.onSynced();
        }
        this.events.onManagerEvent(event);
      },
    });
    this.session = new ManagerSession(
      config,
      {
        onEvent: (event) => this.cache.apply(event),
        // After the events that came before the drop: a resync end still waiting must not mark the platform synced again.
        onDown: () =>
          this.cache.abortResync(() => {
            this.synced = false;
            this.events.onSessionDown();
          }),
      },
      { ...sessionOptions, log },
    );
  }

  get id(): string {
    return this.config.id;
  }

  get family(): Family {
    return this.config.family;
  }

  /** A cold standby logs in on its first use only. */
  get cold(): boolean {
    return this.config.standby === 'cold';
  }

  /** A cold standby that is logged out now. */
  get asleep(): boolean {
    return this.asleepFlag;
  }

  /** Uses held now (calls running, subscriptions and replications open) of a cold standby; a hot one counts none. */
  get inUse(): number {
    return this.uses;
  }

  /** The platform as a heartbeat reports it: `up` once logged in and through a resync since, `cold` asleep. */
  get state(): PingReport['platform'] {
    if (this.asleepFlag) return 'cold';
    return this.session.up && this.synced ? 'up' : 'down';
  }

  /** Logs a hot standby in; a cold one waits for its first use. */
  start(): void {
    if (!this.cold) this.session.start();
  }

  /** Takes the platform into use until `release`: a cold standby asleep logs in, and stays in while used. */
  use(): PlatformLease {
    if (!this.cold) return HOT_LEASE;
    this.uses++;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.asleepFlag && !this.closed) this.wake();
    let released = false;
    return {
      ready: this.waking ? new Promise<void>((resolve) => this.syncWaiters.push(resolve)) : null,
      release: () => {
        if (released) return;
        released = true;
        this.uses--;
        if (this.uses === 0 && !this.asleepFlag && !this.closed) {
          this.idleTimer = setTimeout(() => this.sleep(), this.coldIdleMs);
          this.idleTimer.unref();
        }
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    wakeAll(this.upWaiters);
    clearTimeout(this.idleTimer);
    wakeAll(this.syncWaiters);
    await this.session.close();
    this.events.onSessionDown();
    this.feed.close();
    this.cache.dispose();
  }

  private wake(): void {
    this.asleepFlag = false;
    this.waking = true;
    this.wakes++;
    this.log('info', { msg: 'cold standby logging in', platform: this.id });
    // A logout still closing its socket ends first, so the new login gets a fresh connection.
    void this.loggingOut.then(() => {
      if (!this.closed && !this.asleepFlag) this.session.start();
    });
  }

  private sleep(): void {
    this.idleTimer = undefined;
    if (this.uses > 0 || this.closed || this.asleepFlag) return;
    this.asleepFlag = true;
    this.waking = false;
    this.log('info', { msg: 'cold standby idle, logging out', platform: this.id, idleMs: this.coldIdleMs });
    this.loggingOut = this.session.logout();
    this.cache.reset();
  }

  /**
   * Calls moved here from another broker (a failover or failback notice): until this broker has caught up with the
   * trading server, its cached reads of the platform wait (`readFence`), so a caller never reads here data older than
   * it just read on the broker it came from. Caught up means: the session up, through a resync since its login, a ping
   * sent now answered (every change the server made before the ping has arrived, its events preceding the answer on
   * the one socket), and every event before it applied. A fence that cannot stand within FENCE_MAX_MS (the server
   * gone) falls, and reads answer from the cache as they do without one.
   */
  fenceReads(): void {
    // A cold standby asleep logs in, and resyncs, on its first use: nothing older than that snapshot is answered.
    if (this.closed || this.asleepFlag) return;
    const deadline = Date.now() + FENCE_MAX_MS;
    const fence: Promise<void> = (async () => {
      // The server away (a refused connect, a login that failed): the fence waits for the session, then pings again.
      while (!this.closed && Date.now() < deadline) {
        try {
          await this.session.barrier(deadline);
          break;
        } catch {
          await this.untilUp(Math.min(deadline, Date.now() + FENCE_RETRY_MS));
        }
      }
      if (!(this.session.up && this.synced)) await this.untilUp(deadline);
      await Promise.race([this.cache.settled(), sleepUntil(deadline)]);
    })()
      .catch(() => {
        /* fell: reads go on */
      })
      .finally(() => {
        if (this.fence === fence) this.fence = undefined;
      });
    this.fence = fence;
  }

  /** Resolves once the session is up and through a resync (at once if it is), or at `deadline`, or on close. */
  private untilUp(deadline: number): Promise<void> {
    if (this.closed || (this.session.up && this.synced)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.upWaiters.push(resolve);
      sleepUntil(deadline).then(resolve, resolve);
    });
  }

  /** What a cached read waits for first: the newest fence standing (`fenceReads`), or nothing. */
  get readFence(): Promise<void> | undefined {
    return this.fence;
  }

  private onSynced(): void {
    this.synced = true;
    wakeAll(this.upWaiters);
    if (!this.waking) return;
    this.waking = false;
    wakeAll(this.syncWaiters);
  }
}
