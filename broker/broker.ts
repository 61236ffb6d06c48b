/**
 * Starting and stopping a whole broker in-process: the platforms from the platform file with their manager sessions
 * and caches, and one HTTP server (on loopback unless told otherwise; HTTPS when given a certificate, so edge links
 * are `wss://`) carrying `/link` (edge links), `/livez` (the process answers), `/readyz` (it serves links: 200 once
 * its platforms are loaded and each session's first connection begun, which is before it listens; 503 while stopping;
 * never about trading servers, so an orchestrator does not restart a broker whose trading server is down), `/healthz`
 * (every platform's manager session and what its trading server declared at login; `?commands` lists the commands
 * too) and `/metrics`. `main.ts` wraps this for the command line; tests call it
 * directly.
 *
 * `drain()` (SIGTERM) hands the broker's work over to the platforms' other brokers before it closes: every edge link
 * is told (`DrainFrame`), new links, calls and subscriptions are refused (`notTaken`, `/readyz` 503), the calls
 * running finish within their deadlines (keyed ones until their late answer), and the broker stays up until every
 * keyed outcome it holds was delivered to an edge and the edges let its links go (closed them, or sent nothing on them for
 * `drainQuietMs`, by default `DRAIN_QUIET_MS`), or `drainTimeoutMs` passed; then it closes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { LINK_PATH } from '../shared/frames.js';
import { CallDispatcher, DEFAULT_LATE_ANSWER_MS, type DispatcherOptions } from './link/callDispatcher.js';
import type { PasswordCheckLimit } from './link/passwordChecks.js';
import { EdgeLinkServer } from './link/edgeLinkServer.js';
import { snapshotEvents } from './stream/streamSnapshot.js';
import type { StreamTopic } from '../shared/streams.js';
import { healthReport, readinessReport } from './observability/health.js';
import { silentLogger, type Logger } from './observability/log.js';
import { BrokerMetrics } from './observability/metrics.js';
import { PlatformSet } from './platforms/platformSet.js';
import { answerFrameBound, type PlatformConfig, type SessionOptions } from './session/managerSession.js';
import type { FairUseLimits } from './session/fairUse.js';
import { ANSWER_MAX_BYTES } from './handlers/handler.js';

export interface BrokerOptions {
  /** Shared secret of the edge links; required. */
  secret: string;
  /** 0 (the default here) picks a free port. */
  port?: number;
  host?: string;
  /** Platform file to load and watch. */
  platformsFile?: string;
  /** Platforms to serve without a file (tests); ignored when `platformsFile` is set. */
  platforms?: PlatformConfig[];
  brokerId?: string;
  log?: Logger;
  /** Keep-alive, backoff and connect timings of the manager sessions. */
  session?: SessionOptions;
  /** How often the platform file is checked for changes. */
  watchIntervalMs?: number;
  /** How often edge links are pinged; a link that missed the previous ping is closed. */
  linkHeartbeatMs?: number;
  /** Calls under an Idempotency-Key: how long past the deadline their answer is awaited, and how outcomes are kept. */
  idempotentCalls?: DispatcherOptions;
  /** The bound on failed password checks per account (default 5 per 60 s; `failures: 0` turns it off). */
  passwordChecks?: PasswordCheckLimit;
  /** PEM certificate chain and private key: the broker terminates TLS itself and edge links are `wss://`. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** The bound on a drain (default: the late-answer window plus 10 s, `drainTimeoutFor`). */
  drainTimeoutMs?: number;
  /** How long a draining broker's link must carry nothing but heartbeats to count as let go (default DRAIN_QUIET_MS). */
  drainQuietMs?: number;
  /** What one answer's `data` may take, in bytes (default ANSWER_MAX_BYTES, 16 MiB; keep it below 32 MiB). */
  answerMaxBytes?: number;
  /** How long a cold standby platform stays logged in with no call, subscription or replication (default 10 min). */
  coldIdleMs?: number;
  /** How each platform's manager session is shared between callers (default DEFAULT_FAIR_USE). */
  fairUse?: FairUseLimits;
}

/**
 * A draining broker exits only after its links were let go, or carried nothing but heartbeats for this long: no call
 * an edge sent before it heard of the drain can still be on its way, to be cut off unanswered.
 */
export const DRAIN_QUIET_MS = 2000;

/** A drain's bound when none is given: time for a keyed call's late answer, and 10 s more to deliver it. */
export function drainTimeoutFor(lateAnswerMs = DEFAULT_LATE_ANSWER_MS): number {
  return lateAnswerMs + 10_000;
}

export interface RunningBroker {
  port: number;
  platforms: PlatformSet;
  metrics: BrokerMetrics;
  /**
   * Drains, then closes: resolves once closed. Ends early when no call runs and no keyed outcome is undelivered,
   * else at `drainTimeoutMs`.
   */
  drain(): Promise<void>;
  /** What a drain waits for: calls running, and keyed outcomes not yet delivered to an edge. */
  pending(): { runningCalls: number; undeliveredOutcomes: number };
  close(): Promise<void>;
}

export async function startBroker(options: BrokerOptions): Promise<RunningBroker> {
  if (!options.secret) throw new Error('the broker needs a link secret');
  const log = options.log ?? silentLogger;
  const answerMaxBytes = options.answerMaxBytes ?? options.idempotentCalls?.answerMaxBytes ?? ANSWER_MAX_BYTES;
  const sessionOptions: SessionOptions = {
    ...options.session,
    fairUse: options.fairUse ?? options.session?.fairUse,
    maxAnswerFrameBytes: options.session?.maxAnswerFrameBytes ?? answerFrameBound(answerMaxBytes),
  };
  const platforms = new PlatformSet(options.platformsFile, sessionOptions, log, options.coldIdleMs);
  const metrics = new BrokerMetrics(platforms);
  const dispatcherOptions: DispatcherOptions = {
    ...options.idempotentCalls,
    passwordChecks: options.passwordChecks ?? options.idempotentCalls?.passwordChecks,
    answerMaxBytes: options.answerMaxBytes ?? options.idempotentCalls?.answerMaxBytes,
  };
  const dispatcher = new CallDispatcher(platforms, metrics, log, dispatcherOptions);
  const links = new EdgeLinkServer(
    options.secret,
    dispatcher,
    log,
    options.brokerId ?? 'local',
    options.linkHeartbeatMs,
    {
      ...metrics.linkEvents,
      // Calls moved here from another broker: this broker's cached reads of the platform wait until it has caught up
      // with the trading server (TradePlatform.fenceReads), so a caller never reads older data than it just did there.
      failover: (labels, platform) => {
        metrics.linkEvents.failover?.(labels, platform);
        if (labels.kind === 'link') platforms.get(platform)?.fenceReads();
      },
    },
    (id) => {
      const platform = platforms.get(id);
      return (
        platform && {
          family: platform.family,
          events: platform.events,
          use: () => platform.use(),
          snapshot: (topics: readonly StreamTopic[]) => snapshotEvents(platform.family, platform.cache, topics),
        }
      );
    },
    (id) => {
      const platform = platforms.get(id);
      return (
        platform && {
          family: platform.family,
          cache: platform.cache,
          feed: platform.feed,
          use: () => platform.use(),
          readFence: () => platform.readFence,
          // What the trading server's latest login declared: a table its events do not fill is not replicated.
          get session() {
            return platform.session;
          },
        }
      );
    },
    (id) => platforms.get(id)?.state ?? 'absent',
  );
  metrics.countLinks(() => links.linkCount);
  const drainTimeoutMs = options.drainTimeoutMs ?? drainTimeoutFor(dispatcherOptions.lateAnswerMs);
  let closing: Promise<void> | null = null;
  let draining: Promise<void> | null = null;

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    void route(req, res);
  };
  const http = options.tls
    ? createTlsServer({ cert: options.tls.cert, key: options.tls.key }, handler)
    : createServer(handler);
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [path, query = ''] = (req.url ?? '/').split('?');
    if (req.method === 'GET' && path === '/livez') {
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok');
    } else if (req.method === 'GET' && path === '/readyz') {
      const { statusCode, body } = readinessReport(platforms, closing !== null, links.linkCount, links.draining);
      res
        .writeHead(statusCode, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(body));
    } else if (req.method === 'GET' && path === '/healthz') {
      const { statusCode, body } = healthReport(platforms, { commands: new URLSearchParams(query).has('commands') });
      res
        .writeHead(statusCode, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        .end(JSON.stringify(body));
    } else if (req.method === 'GET' && path === '/metrics') {
      const text = await metrics.text();
      res.writeHead(200, { 'content-type': metrics.contentType }).end(text);
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
    }
  }
  http.on('upgrade', (req, socket, head) => {
    if ((req.url ?? '').split('?')[0] === LINK_PATH) {
      links.handleUpgrade(req, socket, head);
    } else {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      socket.destroy();
    }
  });

  if (options.platformsFile) await platforms.start(options.watchIntervalMs);
  else await platforms.apply(options.platforms ?? []);

  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        http.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await platforms.close();
    throw error;
  }
  const port = (http.address() as AddressInfo).port;

  async function drainThenClose(): Promise<void> {
    const began = Date.now();
    metrics.drainStarted();
    const told = links.startDrain();
    log('info', {
      msg: 'broker draining',
      links: told,
      runningCalls: dispatcher.running,
      undeliveredOutcomes: dispatcher.outcomes.undelivered,
      boundMs: drainTimeoutMs,
    });
    let bound: ReturnType<typeof setTimeout> | undefined;
    // Quiet: nothing runs, every keyed outcome was delivered, and every edge let its link go (an edge closes a
    // draining broker's link once its calls there are answered), so no frame still on its way is cut off.
    const settled = async (): Promise<true> => {
      // Both at once: a frame that came meanwhile (an outcome query, a call to refuse) means looking again.
      for (;;) {
        await dispatcher.whenQuiet();
        await links.whenLetGo(options.drainQuietMs ?? DRAIN_QUIET_MS);
        if (dispatcher.running === 0 && dispatcher.outcomes.undelivered === 0) return true;
      }
    };
    const quiet = await Promise.race([
      settled(),
      new Promise<false>((resolve) => {
        bound = setTimeout(() => resolve(false), drainTimeoutMs);
      }),
    ]);
    clearTimeout(bound);
    log(quiet ? 'info' : 'warn', {
      msg: quiet ? 'broker drained' : 'broker drain bound reached',
      ms: Date.now() - began,
      runningCalls: dispatcher.running,
      undeliveredOutcomes: dispatcher.outcomes.undelivered,
    });
    await close();
  }

  function close(): Promise<void> {
    closing ??= (async () => {
      links.close();
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await platforms.close();
      await stopped;
    })();
    return closing;
  }

  return {
    port,
    platforms,
    metrics,
    drain() {
      if (closing) return closing;
      draining ??= drainThenClose();
      return draining;
    },
    pending: () => ({ runningCalls: dispatcher.running, undeliveredOutcomes: dispatcher.outcomes.undelivered }),
    close,
  };
}
