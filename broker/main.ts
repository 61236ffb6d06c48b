/**
 * Broker process entry. Environment (checked at start, see shared/environment.ts): BROKER_SECRET (required: the edge
 * links' shared secret, never logged), BROKER_PORT (default 8790, 0 = any free port), BROKER_HOST (default
 * 127.0.0.1), BROKER_PLATFORMS_FILE (default `$DATA_DIR/broker-platforms.json`, DATA_DIR defaulting to `.data`),
 * BROKER_ID (default "local"), BROKER_TLS_CERT and BROKER_TLS_KEY (PEM files: serve HTTPS, links become `wss://`),
 * PASSWORD_CHECK_FAILURES and PASSWORD_CHECK_WINDOW_SECONDS (failed password checks of one account allowed per
 * window, default 5 per 60 s; 0 failures: no bound), BROKER_DRAIN_SECONDS (the bound on a drain, default 130),
 * BROKER_ANSWER_MAX_BYTES (what one answer's data may take, default 16 MiB, below workerd's 32 MiB), LOG_LEVEL.
 * Prints one JSON ready line `{"msg":"broker listening","port":N}`, then JSON log lines. SIGTERM drains
 * (`RunningBroker.drain`: the platforms' other brokers take the work over) and exits 0 once drained or at the bound;
 * SIGINT (an operator's Ctrl-C) closes every session at once and exits; a SIGTERM during a drain is ignored, a SIGINT
 * cuts it short. A start that fails (a wrong variable, a port in use, an unreadable file) ends with
 * one JSON error line on standard error naming the cause, and exit code 1.
 */
import '../shared/requireNode.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBroker } from './broker.js';
import { DEFAULT_FAIR_USE } from './session/fairUse.js';
import { jsonLineLogger } from './observability/log.js';
import { brokerEnvironment, EnvironmentError, listenProblem, readEnvironment } from '../shared/environment.js';

/** The one line a failed start ends with; launchers (launcher/stack.ts) show its `error`. */
function failed(error: string): never {
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'broker failed to start', error })}\n`,
  );
  process.exit(1);
}

function readPem(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    return failed(
      `${variable}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

async function main(): Promise<void> {
  let env;
  try {
    env = readEnvironment(brokerEnvironment, process.env);
  } catch (error) {
    if (error instanceof EnvironmentError) failed(error.problems.join('; '));
    throw error;
  }
  const log = jsonLineLogger(env.LOG_LEVEL);
  const tls =
    env.BROKER_TLS_CERT && env.BROKER_TLS_KEY
      ? { cert: readPem('BROKER_TLS_CERT', env.BROKER_TLS_CERT), key: readPem('BROKER_TLS_KEY', env.BROKER_TLS_KEY) }
      : undefined;
  const platformsFile = env.BROKER_PLATFORMS_FILE ?? join(env.DATA_DIR, 'broker-platforms.json');
  const broker = await startBroker({
    secret: env.BROKER_SECRET,
    port: env.BROKER_PORT,
    host: env.BROKER_HOST,
    platformsFile,
    brokerId: env.BROKER_ID,
    passwordChecks: { failures: env.PASSWORD_CHECK_FAILURES, windowMs: env.PASSWORD_CHECK_WINDOW_SECONDS * 1000 },
    drainTimeoutMs: env.BROKER_DRAIN_SECONDS * 1000,
    answerMaxBytes: env.BROKER_ANSWER_MAX_BYTES,
    fairUse: { ...DEFAULT_FAIR_USE, calls: env.BROKER_MANAGER_CALLS, bytes: env.BROKER_MANAGER_BYTES },
    log,
    tls,
  }).catch((error: unknown) =>
    failed(
      listenProblem(error, { port: 'BROKER_PORT', host: 'BROKER_HOST' }, env.BROKER_PORT, env.BROKER_HOST) ??
        (error as Error).message,
    ),
  );
  process.stdout.write(`${JSON.stringify({ msg: 'broker listening', port: broker.port })}\n`);

  // Past the drain's bound closing gets this long before the process is ended regardless.
  const CLOSE_MARGIN_MS = 5000;
  let stopping: 'drain' | 'close' | null = null;
  const stop = (signal: string, how: 'drain' | 'close') => {
    if (stopping === 'close' || stopping === how) return;
    stopping = how;
    log('info', { msg: 'broker stopping', signal });
    const force = setTimeout(
      () => process.exit(1),
      (how === 'drain' ? env.BROKER_DRAIN_SECONDS * 1000 : 0) + CLOSE_MARGIN_MS,
    );
    force.unref();
    (how === 'drain' ? broker.drain() : broker.close()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => stop('SIGINT', 'close'));
  process.on('SIGTERM', () => stop('SIGTERM', 'drain'));
}

main().catch((error: Error) => failed(error.message));
