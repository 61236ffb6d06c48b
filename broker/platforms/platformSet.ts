/**
 * The platforms this broker serves, kept in step with the platform file: an added entry gets a session, a removed one
 * is closed, a changed one (other server, login or password) is closed and opened afresh. The file is polled by stat
 * rather than fs.watch because launchers replace it by rename and may create it after the broker starts; a reload
 * only acts when the text actually changed. A cold standby entry is served without logging in (`TradePlatform`).
 */
import { unwatchFile, watchFile } from 'node:fs';
import type { Logger } from '../observability/log.js';
import type { PlatformConfig, SessionOptions } from '../session/managerSession.js';
import { readPlatforms, samePlatform } from './platformsFile.js';
import { DEFAULT_COLD_IDLE_MS, TradePlatform } from './tradePlatform.js';

export class PlatformSet {
  private readonly byId = new Map<string, TradePlatform>();
  private lastText: string | null | undefined;
  private watching = false;
  private reloading: Promise<void> = Promise.resolve();
  private closed = false;
  /** The platforms were read once (the file, or the list given) and each got its session started. */
  loaded = false;

  constructor(
    private readonly file: string | undefined,
    private readonly sessionOptions: SessionOptions,
    private readonly log: Logger,
    /** How long a cold standby stays logged in once idle. */
    private readonly coldIdleMs = DEFAULT_COLD_IDLE_MS,
  ) {}

  get(id: string): TradePlatform | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<TradePlatform> {
    return this.byId.values();
  }

  /** Loads the file once (throwing on a damaged file, so a broker does not start on garbage) and starts watching. */
  async start(watchIntervalMs = 500): Promise<void> {
    if (!this.file) return;
    const { platforms, text } = await readPlatforms(this.file);
    this.lastText = text;
    if (text === null)
      this.log('warn', { msg: 'platform file not found; serving no platforms until it appears', file: this.file });
    await this.apply(platforms);
    this.watching = true;
    watchFile(this.file, { interval: watchIntervalMs, persistent: false }, () => {
      void this.reload();
    });
  }

  /** Re-reads the file now; serialised so two quick edits apply in order. */
  reload(): Promise<void> {
    this.reloading = this.reloading.then(() => this.reloadOnce());
    return this.reloading;
  }

  /** Replaces the served set with `configs` (also used directly by in-process callers without a file). */
  async apply(configs: PlatformConfig[]): Promise<void> {
    const wanted = new Map(configs.map((c) => [c.id, c]));
    const closing: Promise<void>[] = [];
    for (const [id, platform] of this.byId) {
      const next = wanted.get(id);
      if (next && samePlatform(platform.config, next)) continue;
      this.byId.delete(id);
      this.log('info', { msg: next ? 'platform changed, reconnecting' : 'platform removed', platform: id });
      closing.push(platform.close());
    }
    await Promise.all(closing);
    if (this.closed) return;
    for (const config of configs) {
      if (this.byId.has(config.id)) continue;
      const platform = new TradePlatform(config, this.sessionOptions, this.log, this.coldIdleMs);
      this.byId.set(config.id, platform);
      this.log('info', {
        msg: 'platform served',
        platform: config.id,
        family: config.family,
        server: config.server,
        standby: config.standby ?? 'hot',
      });
      platform.start();
    }
    this.loaded = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.watching && this.file) unwatchFile(this.file);
    this.watching = false;
    await this.reloading.catch(() => {});
    const platforms = [...this.byId.values()];
    this.byId.clear();
    await Promise.all(platforms.map((p) => p.close()));
  }

  private async reloadOnce(): Promise<void> {
    if (!this.file || this.closed) return;
    try {
      const { platforms, text } = await readPlatforms(this.file);
      if (text === this.lastText) return;
      this.lastText = text;
      await this.apply(platforms);
    } catch (error) {
      // Keep serving what we have: a half-written or damaged file must not take every platform down.
      this.log('error', { msg: 'platform file not applied', file: this.file, error: (error as Error).message });
    }
  }
}
