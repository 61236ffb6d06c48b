/**
 * Broker process entry. Environment: BROKER_SECRET (required: the edge links' shared secret, never logged),
 * BROKER_PORT (default 8790, 0 = any free port), BROKER_HOST (default 127.0.0.1), BROKER_PLATFORMS_FILE (default
 * `$DATA_DIR/broker-platforms.json`, DATA_DIR defaulting to `.data`), BROKER_ID (default "local"), LOG_LEVEL.
 * Prints one JSON ready line `{"msg":"broker listening","port":N}`, then JSON log lines; SIGINT/SIGTERM close every
 * session and exit.
 */
import { join } from 'node:path';
import { startBroker } from './broker.js';
import { jsonLineLogger, parseLogLevel } from './observability/log.js';

async function main(): Promise<void> {
  const log = jsonLineLogger(parseLogLevel(process.env.LOG_LEVEL));
  const secret = process.env.BROKER_SECRET;
  if (!secret) {
    log('error', { msg: 'BROKER_SECRET is required: the edge links authenticate with it' });
    process.exit(1);
  }
  const rawPort = process.env.BROKER_PORT ?? '8790';
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    log('error', { msg: 'BROKER_PORT must be an integer between 0 and 65535', value: rawPort });
    process.exit(1);
  }
  const platformsFile = process.env.BROKER_PLATFORMS_FILE || join(process.env.DATA_DIR || '.data', 'broker-platforms.json');
  const broker = await startBroker({
    secret,
    port,
    host: process.env.BROKER_HOST || '127.0.0.1',
    platformsFile,
    brokerId: process.env.BROKER_ID || 'local',
    log,
  });
  process.stdout.write(`${JSON.stringify({ msg: 'broker listening', port: broker.port })}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', { msg: 'broker stopping', signal });
    const force = setTimeout(() => process.exit(1), 5000);
    force.unref();
    broker.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: Error) => {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'broker failed to start', error: error.message })}\n`);
  process.exit(1);
});
