/**
 * Simulator process entry. Environment: SIM_PORT (default 8791, 0 = any free port), SIM_SEED (default 42),
 * SIM_CONFIG (JSON config file; default: demo-pf4 and demo-pf5), SIM_MANAGER_PASSWORD (the default config's
 * manager 1000, default "manager-demo"). Prints one JSON ready line, then JSON log lines; never a password.
 */
import { startSim, DEFAULT_SEED } from './sim.js';
import { loadConfigFile, DEFAULT_MANAGER_PASSWORD } from './config/simConfig.js';

function log(entry: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
}

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return value;
}

async function main(): Promise<void> {
  const port = intFromEnv('SIM_PORT', 8791);
  if (port < 0 || port > 65535) throw new Error('SIM_PORT must be between 0 and 65535');
  const seed = intFromEnv('SIM_SEED', DEFAULT_SEED);
  const configPath = process.env.SIM_CONFIG;
  const sim = await startSim({
    port,
    seed,
    config: configPath ? loadConfigFile(configPath) : undefined,
    managerPassword: process.env.SIM_MANAGER_PASSWORD || DEFAULT_MANAGER_PASSWORD,
    log,
  });
  // The ready line is exactly this shape (launchers parse it), so it carries no timestamp.
  process.stdout.write(`${JSON.stringify({ msg: 'sim listening', port: sim.port, servers: sim.servers })}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log({ msg: 'sim stopping', signal });
    sim.close().then(() => process.exit(0), () => process.exit(1));
    setTimeout(() => process.exit(1), 5000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: Error) => {
  process.stderr.write(`${JSON.stringify({ msg: 'sim failed to start', error: err.message })}\n`);
  process.exit(1);
});
