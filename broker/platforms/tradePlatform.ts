/**
 * A trade platform as the broker serves it: its manager session and the pumping cache that session feeds. Created
 * from one entry of the platform file and closed when the entry goes away or changes.
 */
import type { Family } from '../../shared/protocol.js';
import { PumpCache } from '../cache/pumpCache.js';
import { CacheFeed } from '../cache/cacheFeed.js';
import type { Logger } from '../observability/log.js';
import { PlatformEvents } from '../stream/platformEvents.js';
import { ManagerSession, type PlatformConfig, type SessionOptions } from '../session/managerSession.js';

export class TradePlatform {
  readonly session: ManagerSession;
  readonly cache: PumpCache;
  /** The live stream of the platform's changes and session state, for edge subscriptions. */
  readonly events: PlatformEvents;
  /** What each event changed in the cache, for edge replicas. */
  readonly feed: CacheFeed;

  constructor(readonly config: PlatformConfig, sessionOptions: SessionOptions, log: Logger) {
    this.cache = new PumpCache(config.family);
    this.events = new PlatformEvents(config.family);
    this.feed = new CacheFeed(config.family);
    this.session = new ManagerSession(config, {
      onEvent: (event) => {
        this.cache.apply(event);
        this.feed.afterEvent(event);
        if (event.event === 'resync' && event.op === 'end') {
          log('info', { msg: 'cache resynced', platform: config.id, counts: this.cache.sizes() });
        }
        this.events.onManagerEvent(event);
      },
      onDown: () => {
        this.cache.abortResync();
        this.events.onSessionDown();
      },
    }, { ...sessionOptions, log });
  }

  get id(): string {
    return this.config.id;
  }

  get family(): Family {
    return this.config.family;
  }

  start(): void {
    this.session.start();
  }

  async close(): Promise<void> {
    await this.session.close();
    this.events.onSessionDown();
    this.feed.close();
    this.cache.dispose();
  }
}
