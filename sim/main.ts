/**
 * Simulator process entry. Environment (checked at start, see shared/environment.ts): SIM_PORT (default 8791, 0 = any
 * free port), SIM_SEED (default 42), SIM_CONFIG (JSON config file; default: demo-pf4 and demo-pf5),
 * SIM_MANAGER_PASSWORD (the default config's manager 1000, default "manager-demo"), SIM_HOST (bind address, default
 * 127.0.0.1), SIM_MANAGER_ALLOW (addresses and CIDR ranges besides loopback that may open manager sessions; default
 * none), SIM_CONTROL_TOKEN (lets those peers use the fault controls with it as a bearer token; default: loopback only).
 * Prints one JSON ready line, then JSON log lines; never a password or the token. A start that fails (a wrong
 * variable, a port in use, a bad config file) ends with one JSON error line on standard error naming the cause, and
 * exit code 1.
 */
import '../shared/requireNode.js';
import { startSim, DEFAULT_SEED } from './sim.js';
import { loadConfigFile, DEFAULT_MANAGER_PASSWORD } from './config/simConfig.js';
import { EnvironmentError, listenProblem, readEnvironment, simEnvironment } from '../shared/environment.js';

function log(entry: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

/** The one line a failed start ends with; launchers (launcher/stack.ts) show its `error`. */
function failed(error: string): never {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'sim failed to start', error })}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let env;
  try {
    env = readEnvironment(simEnvironment, process.env);
  } catch (error) {
    if (error instanceof EnvironmentError) failed(error.problems.join('; '));
    throw error;
  }
  const port = env.SIM_PORT;
  let config;
  try {
    config = env.SIM_CONFIG ? loadConfigFile(env.SIM_CONFIG) : undefined;
  } catch (error) {
    failed(`SIM_CONFIG ${env.SIM_CONFIG}: ${(error as Error).message}`);
  }
  const sim = await startSim({
    port,
    host: env.SIM_HOST,
    seed: env.SIM_SEED ?? DEFAULT_SEED,
    config,
    managerPassword: env.SIM_MANAGER_PASSWORD ?? DEFAULT_MANAGER_PASSWORD,
    allow: env.SIM_MANAGER_ALLOW,
    controlToken: env.SIM_CONTROL_TOKEN,
    log,
  }).catch((error: unknown) =>
    failed(
      listenProblem(error, { port: 'SIM_PORT', host: 'SIM_HOST' }, port, env.SIM_HOST) ?? (error as Error).message,
    ),
  );
  // The ready line is exactly this shape (launchers parse it), so it carries no timestamp.
  process.stdout.write(`${JSON.stringify({ msg: 'sim listening', port: sim.port, servers: sim.servers })}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log({ msg: 'sim stopping', signal });
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
    setTimeout(() => process.exit(1), 5000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: Error) => failed(err.message));
