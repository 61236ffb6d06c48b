/**
 * `npm run bridge:minimal -- [flags]` (options.ts lists them): loads the world file, serves it as a PF4 trading
 * server over the manager protocol, and prints one JSON ready line with the URL to register with a broker
 * (`{"msg":"bridge-minimal listening","url":"ws://127.0.0.1:8792/minimal-pf4","port":8792}`), then the kit's log
 * lines as JSON. Never prints the manager's password. A start that fails (a bad flag, an unset password variable, a
 * bad world file, a port in use) ends with one JSON error line on standard error naming the cause, and exit code 1
 * (2 for a bad flag). SIGINT and SIGTERM close every session and stop.
 */
import '../../shared/requireNode.js';
import { listenProblem } from '../../shared/environment.js';
import { startMinimalBridge } from './bridge.js';
import { parseBridgeOptions, USAGE, UsageError } from './options.js';
import { World } from './world.js';

function log(entry: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', ...entry })}\n`);
}

function failed(error: string, code = 1): never {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'bridge-minimal failed to start', error })}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let options;
  try {
    options = parseBridgeOptions(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message === USAGE) {
      process.stdout.write(`${USAGE}\n`);
      return;
    }
    failed(error.message, 2);
  }
  const world = World.load(options.world);
  const bridge = await startMinimalBridge({
    world,
    name: options.name,
    manager: { login: options.login, password: options.password },
    port: options.port,
    host: options.host,
    allow: options.allow,
    log,
  }).catch((error: unknown) =>
    failed(
      listenProblem(error, { port: '--port', host: '--host' }, options.port, options.host) ?? (error as Error).message,
    ),
  );
  // Launchers read this line (launcher/stack.ts, startService): `listening` and the port.
  process.stdout.write(
    `${JSON.stringify({
      msg: 'bridge-minimal listening',
      url: bridge.url,
      port: bridge.port,
      world: options.world,
      users: world.users().length,
      groups: world.groups().length,
    })}\n`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log({ msg: 'bridge-minimal stopping', signal });
    bridge.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
    setTimeout(() => process.exit(1), 5000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: Error) => failed(error.message));
