/**
 * Keeps one child process of the stack running: when it exits on its own (a crash, a kill), it is started again on
 * the same port after an exponential backoff, with one log line per exit and per restart. A crash loop (more than
 * `maxRestarts` exits within `windowMs`) is not restarted again: `onGiveUp` gets a message saying so and why.
 * `npm start` supervises the simulator and every broker this way (launcher/stack.ts), so the edge stays up and
 * answers `NoConnect` while a process is down (or moves a platform to its next broker, when it has one).
 */
import type { EventEmitter } from 'node:events';

export interface SuperviseOptions {
  /** Delay before the first restart (ms); it doubles with each further exit within the window. Default 500. */
  initialDelayMs?: number;
  /** Longest delay before a restart (ms). Default 10 000. */
  maxDelayMs?: number;
  /** Exits within this window (ms) count towards the backoff and the crash-loop cap. Default 60 000. */
  windowMs?: number;
  /** More exits than restarts this within the window is a crash loop: no further restart. Default 5. */
  maxRestarts?: number;
  /** Told once when a crash loop stops the restarts (default: the message goes to the log). */
  onGiveUp?: (message: string) => void;
}

/** What the supervisor needs of a child process. */
export interface ChildLike extends EventEmitter {
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
}

export interface Supervised {
  port: number;
  child: ChildLike;
}

const DEFAULTS = { initialDelayMs: 500, maxDelayMs: 10_000, windowMs: 60_000, maxRestarts: 5 };

const exited = (child: ChildLike) => child.exitCode !== null || child.signalCode !== null;
const howExited = (child: ChildLike) => (child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`);
const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);

export class Supervisor<S extends Supervised> {
  private readonly options: Required<Omit<SuperviseOptions, 'onGiveUp'>> & Pick<SuperviseOptions, 'onGiveUp'>;
  private exits: number[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private starting: Promise<S> | undefined;
  private closed = false;
  private gaveUp = false;
  private waiting: Array<(service: S) => void> = [];
  /** Restarts done so far. */
  restarts = 0;

  /**
   * @param current the running process, watched from now on
   * @param start starts the process again on the same port
   * @param onStarted told of each new process (the stack then names it)
   */
  constructor(
    readonly name: string,
    private current: S,
    private readonly start: () => Promise<S>,
    private readonly log: (line: string) => void,
    private readonly onStarted: (service: S) => void,
    options: SuperviseOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
    this.watch(current);
  }

  get service(): S {
    return this.current;
  }

  /**
   * Starts the process again now (after the current one has exited), instead of after the backoff; a restart already
   * under way is awaited. Used by fault drills that kill the process themselves.
   */
  async restartNow(): Promise<S> {
    const old = this.current;
    if (!exited(old.child)) await new Promise((r) => old.child.once('exit', r));
    if (this.starting) return this.starting;
    if (this.current !== old) return this.current;
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.launch();
  }

  /**
   * The next process this supervisor starts (a restart after an exit, or `restartNow`), once it is ready. Never
   * resolves after `close` or a crash loop: callers bound their wait.
   */
  nextStart(): Promise<S> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** No more restarts; a start under way is awaited, so whoever stops the stack stops the process it started. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.starting?.catch(() => {});
  }

  private watch(service: S): void {
    const onExit = () => {
      if (this.closed || service !== this.current) return;
      this.exited(`${this.name} exited (${howExited(service.child)})`);
    };
    if (exited(service.child)) onExit();
    else service.child.once('exit', onExit);
  }

  /** One exit (or failed start) of the process: schedule the next start, or give up on a crash loop. */
  private exited(what: string): void {
    if (this.closed || this.gaveUp) return;
    const now = Date.now();
    this.exits = [...this.exits.filter((t) => now - t < this.options.windowMs), now];
    const inWindow = this.exits.length;
    if (inWindow > this.options.maxRestarts) {
      this.gaveUp = true;
      const message =
        `${what}: it ended ${inWindow} times within ${duration(this.options.windowMs)}, a crash loop; ` +
        `not restarting it again (see its log lines above)`;
      this.log(`stack: ${message}`);
      this.options.onGiveUp?.(message);
      return;
    }
    const delay = Math.min(this.options.maxDelayMs, this.options.initialDelayMs * 2 ** (inWindow - 1));
    this.log(
      `stack: ${what}; restarting it in ${duration(delay)} (restart ${inWindow} of at most ` +
        `${this.options.maxRestarts} within ${duration(this.options.windowMs)})`,
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.launch().catch(() => {
        /* counted as an exit by launch */
      });
    }, delay);
  }

  private launch(): Promise<S> {
    const starting = this.start().then(
      (service) => {
        this.starting = undefined;
        this.current = service;
        this.restarts++;
        this.onStarted(service);
        for (const resolve of this.waiting.splice(0)) resolve(service);
        if (this.closed) return service; // the stack's close stops it
        this.log(`stack: ${this.name} restarted on port ${service.port} (pid ${service.child.pid})`);
        this.watch(service);
        return service;
      },
      (error: Error) => {
        this.starting = undefined;
        this.exited(`${this.name} failed to start again (${error.message})`);
        throw error;
      },
    );
    this.starting = starting;
    return starting;
  }
}
