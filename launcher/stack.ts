/**
 * Brings up the whole stack on one machine: the simulator and one or more brokers as child processes, the edge in
 * local workerd, the registry seeded with the demo organization, its two platforms and the demo API client. `npm
 * start`, the benchmark and the end-to-end tests all start it through here, so they exercise the same wiring.
 *
 * Brokers in pairs and fleets (`brokers`, `platformBrokers`): every broker shares the one BROKER_SECRET and has a
 * platforms file of its own in the data folder (`broker-platforms.json` for the first, `broker-<i>-platforms.json`
 * for the others) naming the demo platforms it serves, each hot or a cold standby. The edge's BROKER_URL lists every
 * broker in order; a demo platform given its own order has it written into the registry (`broker_urls`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { randomUUID } from 'node:crypto';
import { buildWorker, OBJECTS_ENTRY, startEdge, type D1Like, type Edge, type EdgeOptions } from './edge.js';
import { nodeServiceBundle } from './bundles.js';
import { ensurePrivateDir, tightenTree, writePrivateFile } from './privateData.js';
import { Supervisor, type SuperviseOptions } from './supervisor.js';
import { hashSecret, type SecretHash } from '../shared/secrets.js';
import {
  edgeEnvironment,
  listenProblem,
  readEnvironment,
  stackEnvironment,
  WORKER_VARIABLES,
} from '../shared/environment.js';
import { SCOPES } from '../shared/catalog/operation.js';
import { defaultConfig } from '../sim/config/simConfig.js';
import { brokerUrlsColumn, MAX_BROKERS_PER_PLATFORM } from '../shared/brokerUrls.js';
import {
  DEMO_MANAGER_LOGIN,
  DEMO_ORG_ID,
  DEMO_PASSWORD_ENV,
  DEMO_PF4_ID,
  DEMO_PF4_SERVER,
  DEMO_PF5_ID,
  DEMO_PF5_SERVER,
} from './demo.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The demo platforms by their short names. */
export type DemoPlatform = 'pf4' | 'pf5';
const DEMO_PLATFORMS: readonly DemoPlatform[] = ['pf4', 'pf5'];

/** One broker of the stack: the demo platforms it serves and how it stands by for each. */
export interface BrokerSpec {
  /** The demo platforms written into its platforms file. Default: both. */
  platforms?: DemoPlatform[];
  /** `cold`: the broker logs in to the platform on the first call that needs it, not at start. Default: hot. */
  standby?: Partial<Record<DemoPlatform, 'hot' | 'cold'>>;
}

export interface StackOptions {
  /** Folder for persistent state (registry, keys, broker platform file). Omitted: a temporary folder removed on close. */
  dataDir?: string;
  edgePort?: number;
  /** The first broker's port; the others take any free port. */
  brokerPort?: number;
  /**
   * The brokers to start: a count (each serving both demo platforms, hot) or one spec per broker. Default 1. With
   * more than one, broker i reports itself as `broker-<i>` (BROKER_ID) unless `brokerEnv` names it.
   */
  brokers?: number | BrokerSpec[];
  /**
   * The ordered broker indexes serving a demo platform, written into the registry (`broker_urls`; NULL when it is
   * every broker in order, the edge's default list). A platform not named here keeps what its registry row says.
   */
  platformBrokers?: Partial<Record<DemoPlatform, number[]>>;
  simPort?: number;
  /**
   * The trading server a demo platform's brokers connect to instead of the simulator's (`ws://host:port/<name>`: a
   * bridge, examples/bridge-minimal/); its manager logs in with the demo manager's login and password. The simulator
   * still starts and serves the other platform.
   */
  tradingServers?: Partial<Record<DemoPlatform, string>>;
  /** Simulator seed (SIM_SEED). */
  seed?: number;
  /** Simulator configuration (written to a file passed as SIM_CONFIG); omitted: the simulator's embedded default. */
  simConfig?: unknown;
  /**
   * The quote rate of the embedded default's two demo trading servers (10 ticks a second across their symbols when
   * omitted), written as SIM_CONFIG: tests that wait for ticks of one symbol get them sooner. Not with `simConfig`.
   */
  ticksPerSecond?: number;
  clientId?: string;
  clientSecret?: string;
  /** Receives every log line of the child processes, prefixed with the process name. */
  log?: (line: string) => void;
  /** Extra environment for every broker process. */
  brokerEnv?: Record<string, string>;
  /** Extra edge variables. */
  edgeVars?: Record<string, string>;
  /** Another edge entry module than workers/index.ts: the real app with routes of its own (`npm run bench`'s). */
  edgeEntry?: string;
  /** Open the edge's inspector (`EdgeOptions.inspect`). */
  edgeInspector?: boolean;
  /**
   * Keep the edge's registry and objects in the data folder even when the folder is a temporary one (by default a
   * temporary stack's edge keeps them in memory): `restartEdge` then finds them again, as after a real restart.
   */
  persistEdge?: boolean;
  /**
   * Start the simulator and the broker again, on the same ports, when they exit on their own (launcher/supervisor.ts:
   * exponential backoff, a log line per restart, a crash loop given up). `npm start` turns it on; off by default.
   */
  supervise?: boolean | SuperviseOptions;
  /**
   * Run the broker inside this process instead of as a child (default: STACK_BROKER_IN_PROCESS=1), so that a tool
   * that watches this process (the mutation tester) sees and changes the broker's code. Such a broker has no child
   * process to kill: `broker.child` throws, and `supervise` is refused.
   */
  brokerInProcess?: boolean;
}

export interface StopOptions {
  /** How long the process may take after SIGTERM (a broker drains) before it is killed. Default 5 000 ms. */
  graceMs?: number;
}

export interface Service {
  name: string;
  port: number;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after the grace; resolves once the process has exited. */
  stop(options?: StopOptions): Promise<void>;
}

export interface Stack {
  edge: Edge;
  edgeUrl: string;
  /** The first broker's URL (`brokerUrls[0]`). */
  brokerUrl: string;
  /** Every broker's URL, in order: the edge's BROKER_URL. */
  brokerUrls: string[];
  simUrl: string;
  sim: Service;
  /** The first broker (`brokers[0]`). */
  broker: Service;
  /** The running broker processes, by index; a restart replaces its entry. */
  brokers: Service[];
  dataDir: string;
  organizationId: string;
  platforms: { pf4: string; pf5: string };
  clientId: string;
  clientSecret: string;
  /** Fetches a token from the edge's token endpoint with the demo client's credentials. */
  token(): Promise<string>;
  /** Sends a fault-control action to the simulator. */
  control(server: string, action: string, body?: unknown): Promise<unknown>;
  /**
   * Starts broker `index` (default the first) again on its port with the same environment, after it stopped or was
   * killed (fault drills); `brokers[index]` (and `broker` for the first) then names the new process. Waits for the old
   * one to have exited first. Supervised, a restart the supervisor has scheduled happens now instead.
   */
  restartBroker(index?: number): Promise<Service>;
  /**
   * Stops the edge, runs `whileDown` (a change made meanwhile on the trading server), and starts the edge again on
   * its port with the same options; `edge` then names the new one. Its registry and objects survive only where they
   * persist (a stack with a data folder, or `persistEdge`).
   */
  restartEdge(whileDown?: () => Promise<void>): Promise<Edge>;
  /**
   * Sends `signal` (default SIGTERM) to broker `index` and resolves once it has exited; SIGTERM lets it drain for up
   * to `graceMs` before SIGKILL. Supervised, the supervisor then starts it again as after any exit.
   */
  stopBroker(index: number, signal?: NodeJS.Signals, options?: StopOptions): Promise<void>;
  /** The supervisors of the simulator and the brokers (`broker` is `brokers[0]`), when `supervise` is on. */
  supervisors?: { sim: Supervisor<Service>; broker: Supervisor<Service>; brokers: Supervisor<Service>[] };
  close(): Promise<void>;
}

/**
 * Starts a TypeScript entry as a child Node process, from its kept bundle (launcher/bundles.ts) where it has one, and
 * resolves once it prints its `listening` line.
 */
export async function startService(
  name: string,
  entry: string,
  env: Record<string, string>,
  log: (line: string) => void,
  readyTimeoutMs = 30_000,
): Promise<Service> {
  const bundle = await nodeServiceBundle(entry);
  const args = bundle !== undefined ? ['--enable-source-maps', bundle] : ['--import', 'tsx', join(root, entry)];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // However this process ends (Ctrl-C included: Miniflare's own signal hook exits at once), its children go too.
  const killOnExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  process.once('exit', killOnExit);
  child.once('exit', () => process.removeListener('exit', killOnExit));
  const stop = ({ graceMs = 5_000 }: StopOptions = {}) =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(killer);
        done();
      });
      child.kill('SIGTERM');
    });
  // The child's own account of a failed start: its last error line (JSON `error`, else `msg`), or its last line on
  // standard error (a crash before its logger exists), shown instead of a bare exit code.
  let cause: string | undefined;
  const note = (line: string, stderr: boolean) => {
    try {
      const entry = JSON.parse(line) as { level?: unknown; error?: unknown; msg?: unknown };
      if (entry.level === 'error') cause = String(entry.error ?? entry.msg);
    } catch {
      if (stderr && line.trim() !== '') cause = line.trim();
    }
  };
  createInterface({ input: child.stderr }).on('line', (l) => {
    note(l, true);
    log(`${name} ${l}`);
  });
  return new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${name} did not start within ${readyTimeoutMs} ms`));
    }, readyTimeoutMs);
    const exitedEarly = (code: number | null) => {
      clearTimeout(timer);
      // Lines still buffered in the pipes arrive after 'exit'; 'close' follows them.
      child.once('close', () =>
        reject(new Error(cause ? `${name}: ${cause}` : `${name} exited with code ${code} before it was ready`)),
      );
    };
    child.once('exit', exitedEarly);
    let ready = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      log(`${name} ${line}`);
      if (ready) return;
      note(line, false);
      try {
        const msg = JSON.parse(line) as { msg?: string; port?: number };
        if (typeof msg.msg === 'string' && msg.msg.includes('listening') && typeof msg.port === 'number') {
          ready = true;
          clearTimeout(timer);
          child.removeListener('exit', exitedEarly);
          resolveReady({ name, port: msg.port, child, stop });
        }
      } catch {
        /* not a JSON line */
      }
    });
  });
}

/**
 * The broker started in this process from the same variables its process entry reads (broker/main.ts), logging JSON
 * lines to `log` as the child would print them. Loaded on demand: a stack of child processes does not import it.
 */
async function startBrokerHere(
  name: string,
  env: Record<string, string>,
  log: (line: string) => void,
): Promise<Service> {
  const { startBroker } = await import('../broker/broker.js');
  const { jsonLineLogger } = await import('../broker/observability/log.js');
  // The platform file names the password's variable; this process is the broker's, so it holds it (one in-process
  // broker's stack per process: the mutation tester's).
  const password = env[DEMO_PASSWORD_ENV];
  if (password !== undefined) process.env[DEMO_PASSWORD_ENV] = password;
  const running = await startBroker({
    secret: env.BROKER_SECRET,
    port: Number(env.BROKER_PORT),
    platformsFile: env.BROKER_PLATFORMS_FILE,
    ...(env.BROKER_ID ? { brokerId: env.BROKER_ID } : {}),
    ...(env.BROKER_ANSWER_MAX_BYTES ? { answerMaxBytes: Number(env.BROKER_ANSWER_MAX_BYTES) } : {}),
    log: jsonLineLogger('info', (line) => log(`${name} ${line.trimEnd()}`)),
  });
  let stopped: Promise<void> | undefined;
  return {
    name,
    port: running.port,
    get child(): ChildProcess {
      throw new Error('the broker runs in this process (STACK_BROKER_IN_PROCESS): it has no child process');
    },
    stop: () => (stopped ??= running.close()),
  };
}

/** A secret kept in the data folder so restarts reuse it; an environment value wins. */
function persistentSecret(
  dataDir: string,
  file: string,
  fromEnv: string | undefined,
  make: () => Promise<string> | string,
) {
  if (fromEnv) return Promise.resolve(fromEnv);
  const path = join(dataDir, file);
  if (existsSync(path)) return Promise.resolve(readFileSync(path, 'utf8').trim());
  return Promise.resolve(make()).then((value) => {
    writePrivateFile(path, value);
    return value;
  });
}

const randomSecret = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');

async function newSigningKey(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return JSON.stringify({ ...jwk, kid: `edge-${Date.now().toString(36)}`, alg: 'ES256', use: 'sig' });
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  // The edge's and the launcher's variables from this environment, refused by name before any process starts
  // (EnvironmentError).
  readEnvironment(edgeEnvironment, process.env);
  const { STACK_BROKER_IN_PROCESS } = readEnvironment(stackEnvironment, process.env);
  // The worker, the simulator and the broker are bundled at once (each start takes its bundle from the same
  // promise); a failed bundle is reported by the start that needs it.
  buildWorker().catch(() => {});
  buildWorker(OBJECTS_ENTRY).catch(() => {});
  void nodeServiceBundle('sim/main.ts').catch(() => {});
  void nodeServiceBundle('broker/main.ts').catch(() => {});
  const log = options.log ?? (() => {});
  const temporary = options.dataDir === undefined;
  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), 'gateway-stack-')));
  // Owner-only, and anything an older release left readable tightened (see launcher/privateData.ts).
  ensurePrivateDir(dataDir);
  tightenTree(dataDir);
  const cleanups: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    const brokerSecret = await persistentSecret(dataDir, 'broker-secret', process.env.BROKER_SECRET, randomSecret);
    const managerPassword = await persistentSecret(
      dataDir,
      'manager-password',
      process.env.SIM_MANAGER_PASSWORD,
      randomSecret,
    );
    const signingKey = await persistentSecret(dataDir, 'signing-key.json', process.env.AUTH_SIGNING_KEY, newSigningKey);

    const simEnv: Record<string, string> = {
      SIM_PORT: String(options.simPort ?? 0),
      SIM_MANAGER_PASSWORD: managerPassword,
    };
    if (options.seed !== undefined) simEnv.SIM_SEED = String(options.seed);
    if (options.simConfig !== undefined && options.ticksPerSecond !== undefined)
      throw new Error('ticksPerSecond is for the default simulator configuration: set it in simConfig instead');
    const simConfig =
      options.ticksPerSecond === undefined
        ? options.simConfig
        : {
            servers: defaultConfig(managerPassword).servers.map((server) => ({
              ...server,
              ticksPerSecond: options.ticksPerSecond,
            })),
          };
    if (simConfig !== undefined) {
      const configPath = join(dataDir, 'sim-config.json');
      writePrivateFile(configPath, JSON.stringify(simConfig)); // may hold manager passwords
      simEnv.SIM_CONFIG = configPath;
    }
    const specs = brokerSpecs(options.brokers);
    const orders = platformOrders(options.platformBrokers, specs.length);
    const inProcess = options.brokerInProcess ?? STACK_BROKER_IN_PROCESS;
    if (inProcess && options.supervise) throw new Error('a broker in this process cannot be supervised');
    // The brokers' ports are chosen before any process starts, so that the edge (which names them in BROKER_URL)
    // starts while the simulator and the brokers do.
    const brokerPorts = await Promise.all(
      specs.map((_, i) => (i === 0 && options.brokerPort ? Promise.resolve(options.brokerPort) : unusedPort())),
    );
    const brokerUrls = brokerPorts.map((port) => `http://127.0.0.1:${port}`);
    const brokerUrl = brokerUrls[0];

    const edgePort = options.edgePort ?? 0;
    const publicUrl = process.env.PUBLIC_URL ?? `http://127.0.0.1:${edgePort || 8787}`;
    const clientId = options.clientId ?? process.env.DEMO_CLIENT_ID ?? 'demo';
    const clientSecret = options.clientSecret ?? process.env.DEMO_CLIENT_SECRET ?? 'demo-secret';
    // The demo client's secret is hashed (PBKDF2, tens of milliseconds) while workerd starts, not after the migrations.
    const clientSecretHash = hashSecret(clientSecret);
    clientSecretHash.catch(() => {}); // a failure is reported by the seeding that awaits it
    const edgeOptions = (port: number): EdgeOptions => ({
      port,
      dataDir: temporary && !options.persistEdge ? undefined : join(dataDir, 'edge'),
      // Access-log lines come on the worker's standard output; what it writes to standard error is an error (the
      // worker's JSON lines carry no level of their own, so the launcher's filters are told).
      log: (line, stream) =>
        log(
          `edge ${stream === 'stderr' && line.startsWith('{') && !line.includes('"level":') ? `{"level":"error",${line.slice(1)}` : line}`,
        ),
      vars: {
        BROKER_URL: brokerUrls.join(','),
        BROKER_SECRET: brokerSecret,
        AUTH_SIGNING_KEY: signingKey,
        PUBLIC_URL: publicUrl,
        AUTH_AUDIENCE: process.env.AUTH_AUDIENCE ?? 'webapi',
        TOKEN_TTL_SECONDS: process.env.TOKEN_TTL_SECONDS ?? '3600',
        IDEMPOTENCY_RETENTION_HOURS: process.env.IDEMPOTENCY_RETENTION_HOURS ?? '24',
        ...passThrough(WORKER_VARIABLES.filter((name) => !SET_BY_STACK.has(name))),
        ...options.edgeVars,
      },
      ...(options.edgeEntry !== undefined ? { entry: options.edgeEntry } : {}),
      inspect: options.edgeInspector,
      progress: (message) => log(`stack: ${message}`),
      // Seeded before the edge serves: until then every route answers 503 RegistryNotReady.
      populate: async (db) => {
        await seedDemoRegistry(db, clientId, await clientSecretHash);
        await assignDemoBrokers(db, orders, brokerUrls);
      },
    });
    const startingEdge = portAvailable(edgePort, 'PORT').then(() => startEdge(edgeOptions(edgePort)));

    // Restarts replace the simulator and the brokers; the cleanups stop whichever ones run then (each started one,
    // even when a later one fails to start).
    let currentSim: Service | undefined;
    cleanups.push(() => currentSim?.stop());
    const currentBrokers: Service[] = [];
    cleanups.push(() => Promise.all(currentBrokers.map((b) => b.stop())).then(() => {}));
    // Broker i's name in the log and its environment (its port once it has one: restarts reuse it).
    const brokerName = (i: number) => (i === 0 ? 'broker' : `broker-${i}`);
    let brokerEnvs: Array<Record<string, string>> = [];
    const launchBroker = (i: number, port = brokerPorts[i]) => {
      const env = { ...brokerEnvs[i], BROKER_PORT: String(port) };
      return inProcess
        ? startBrokerHere(brokerName(i), env, log)
        : startService(brokerName(i), 'broker/main.ts', env, log);
    };
    const startingServers = (async () => {
      currentSim = await startService('sim', 'sim/main.ts', simEnv, log);
      const simPort = currentSim.port;
      brokerEnvs = specs.map((spec, i) => {
        const platformsFile = join(dataDir, i === 0 ? 'broker-platforms.json' : `broker-${i}-platforms.json`);
        writeBrokerPlatforms(
          platformsFile,
          {
            pf4: options.tradingServers?.pf4 ?? `ws://127.0.0.1:${simPort}/${DEMO_PF4_SERVER}`,
            pf5: options.tradingServers?.pf5 ?? `ws://127.0.0.1:${simPort}/${DEMO_PF5_SERVER}`,
          },
          spec,
        );
        return {
          BROKER_SECRET: brokerSecret,
          BROKER_PLATFORMS_FILE: platformsFile,
          // The platform file names the variable, never the password (`passwordEnv`).
          [DEMO_PASSWORD_ENV]: managerPassword,
          DATA_DIR: dataDir,
          ...(specs.length > 1 ? { BROKER_ID: `broker-${i}` } : {}),
          ...options.brokerEnv,
        };
      });
      const started = await Promise.allSettled(
        specs.map((_, i) =>
          launchBroker(i).then((b) => {
            currentBrokers[i] = b;
            return b;
          }),
        ),
      );
      const failedStart = started.find((r) => r.status === 'rejected');
      if (failedStart) throw failedStart.reason;
      return currentSim;
    })();
    let edge: Edge;
    let sim: Service;
    try {
      [edge, sim] = await Promise.all([startingEdge, startingServers]);
    } catch (error) {
      // The first failure is reported at once (a taken port, a broker's unreadable certificate), not after an edge
      // migrating a fresh registry: an edge still starting is closed once it is up; processes still starting are
      // waited for, so that the cleanups stop them.
      void startingEdge.then((started) => started.close()).catch(() => {});
      await startingServers.catch(() => {});
      throw error;
    }
    let currentEdge = edge;
    cleanups.push(() => currentEdge.close());
    const simUrl = `http://127.0.0.1:${sim.port}`;
    const brokers = [...currentBrokers];
    const broker = brokers[0];
    const edgeUrl = edge.url.href.replace(/\/$/, '');

    const stack: Stack = {
      edge,
      edgeUrl,
      brokerUrl,
      brokerUrls,
      simUrl,
      sim,
      broker,
      brokers: currentBrokers,
      dataDir,
      organizationId: DEMO_ORG_ID,
      platforms: { pf4: DEMO_PF4_ID, pf5: DEMO_PF5_ID },
      clientId,
      clientSecret,
      async token() {
        const res = await fetch(`${edgeUrl}/connect/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: clientId,
            client_secret: clientSecret,
            scope: 'webapi',
          }),
        });
        const body = (await res.json()) as { access_token?: string; error?: string };
        if (!body.access_token) throw new Error(`token request failed: ${res.status} ${body.error}`);
        return body.access_token;
      },
      async control(server, action, body) {
        const res = await fetch(`${simUrl}/control/${server}/${action}`, {
          method: action === 'state' ? 'GET' : 'POST',
          headers: { 'content-type': 'application/json' },
          body: action === 'state' ? undefined : JSON.stringify(body ?? {}),
        });
        if (!res.ok) throw new Error(`sim control ${action} failed: ${res.status} ${await res.text()}`);
        return res.json() as Promise<unknown>;
      },
      async restartBroker(index = 0) {
        checkIndex(index, brokers.length);
        if (stack.supervisors) return stack.supervisors.brokers[index].restartNow();
        const current = currentBrokers[index];
        if (inProcess) await current.stop();
        else {
          const old = current.child;
          if (old.exitCode === null && old.signalCode === null) await new Promise((r) => old.once('exit', r));
        }
        const next = await launchBroker(index, brokers[index].port);
        brokerStarted(index, next);
        return next;
      },
      async restartEdge(whileDown) {
        await currentEdge.close();
        await whileDown?.();
        currentEdge = await startEdge(edgeOptions(Number(new URL(edgeUrl).port)));
        stack.edge = currentEdge;
        return currentEdge;
      },
      async stopBroker(index, signal = 'SIGTERM', stopOptions) {
        checkIndex(index, brokers.length);
        const current = currentBrokers[index];
        if (inProcess || signal === 'SIGTERM') return current.stop(stopOptions);
        const child = current.child;
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exit = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill(signal);
        await exit;
      },
      close,
    };
    // A new process of broker i: the stack's names follow it.
    function brokerStarted(i: number, service: Service) {
      currentBrokers[i] = service;
      if (i === 0) stack.broker = service;
    }
    if (options.supervise) {
      const superviseOptions = options.supervise === true ? {} : options.supervise;
      const brokerSupervisors = brokers.map(
        (b, i) =>
          new Supervisor(
            b.name,
            b,
            () => launchBroker(i, b.port),
            log,
            (s) => brokerStarted(i, s),
            superviseOptions,
          ),
      );
      stack.supervisors = {
        sim: new Supervisor(
          sim.name,
          sim,
          () => startService('sim', 'sim/main.ts', { ...simEnv, SIM_PORT: String(sim.port) }, log),
          log,
          (s) => {
            currentSim = s;
            stack.sim = s;
          },
          superviseOptions,
        ),
        broker: brokerSupervisors[0],
        brokers: brokerSupervisors,
      };
      // Run first on close (cleanups run in reverse): no restart while the stack stops.
      const { sim: simSupervisor } = stack.supervisors;
      cleanups.push(() =>
        Promise.all([simSupervisor.close(), ...brokerSupervisors.map((s) => s.close())]).then(() => {}),
      );
    }
    return stack;
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Refuses a taken edge port by the variable that chose it, before workerd tries it (it would print a native stack
 * trace of its own). A port taken between this probe and workerd's bind is still reported by Miniflare.
 */
function portAvailable(port: number, variable: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(new Error(listenProblem(error, { port: variable }, port) ?? error.message)));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolvePort()));
  });
}

/**
 * A port free on 127.0.0.1 now, below the range the kernel hands out for port 0 and outgoing connections (Linux's
 * ip_local_port_range), so that nothing the kernel assigns meanwhile takes it before the process it is chosen for
 * binds it.
 */
export async function unusedPort(): Promise<number> {
  const ephemeralFloor = ephemeralRangeStart();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (ephemeralFloor - 10_000));
    const free = await new Promise<boolean>((done) => {
      const probe = createServer();
      probe.once('error', () => done(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port found between 10000 and ${ephemeralFloor}`);
}

function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 11_000) return low;
  } catch {
    /* not Linux: the IANA dynamic range starts at 49152 */
  }
  return 49_152;
}

/** The brokers asked for, one spec each: a count is that many brokers serving both demo platforms hot. */
function brokerSpecs(brokers: StackOptions['brokers']): BrokerSpec[] {
  const specs = typeof brokers === 'number' ? Array.from({ length: brokers }, () => ({})) : (brokers ?? [{}]);
  if (!Number.isInteger(specs.length) || specs.length < 1 || specs.length > MAX_BROKERS_PER_PLATFORM) {
    throw new Error(
      `brokers must be 1 to ${MAX_BROKERS_PER_PLATFORM}, got ${typeof brokers === 'number' ? brokers : specs.length}`,
    );
  }
  return specs;
}

/** `platformBrokers` checked against the brokers started: indexes in range, none twice, at least one. */
function platformOrders(
  orders: StackOptions['platformBrokers'],
  count: number,
): Partial<Record<DemoPlatform, number[]>> {
  for (const [platform, order] of Object.entries(orders ?? {})) {
    if (!DEMO_PLATFORMS.includes(platform as DemoPlatform))
      throw new Error(`platformBrokers: no demo platform ${platform}`);
    if (
      order.length === 0 ||
      new Set(order).size !== order.length ||
      order.some((i) => !Number.isInteger(i) || i < 0 || i >= count)
    ) {
      throw new Error(
        `platformBrokers.${platform} must list broker indexes from 0 to ${count - 1}, none twice, got [${order.join(', ')}]`,
      );
    }
  }
  return orders ?? {};
}

function checkIndex(index: number, count: number) {
  if (!Number.isInteger(index) || index < 0 || index >= count)
    throw new Error(`no broker ${index}: the stack runs ${count}`);
}

/**
 * Writes each ordered demo platform's brokers into the registry: `broker_urls` NULL when the order is every broker
 * (the edge's default list), and `broker_url` its first entry for an edge of the previous version (migration 0005).
 */
async function assignDemoBrokers(db: D1Like, orders: Partial<Record<DemoPlatform, number[]>>, brokerUrls: string[]) {
  const ids: Record<DemoPlatform, string> = { pf4: DEMO_PF4_ID, pf5: DEMO_PF5_ID };
  const statements = Object.entries(orders).map(([platform, order]) => {
    const urls = order.map((i) => brokerUrls[i]);
    const column = urls.join(',') === brokerUrls.join(',') ? null : urls;
    return db
      .prepare('UPDATE trade_platforms SET broker_urls = ?, broker_url = ? WHERE id = ?')
      .bind(brokerUrlsColumn(column), column?.[0] ?? null, ids[platform as DemoPlatform]);
  });
  if (statements.length > 0) await db.batch(statements);
}

/**
 * A broker's view of the demo platforms it serves (`spec`): where their trading servers are (`servers`), how its
 * manager logs in, and whether it stands by cold. Platforms of the file that are not demo platforms are kept.
 */
function writeBrokerPlatforms(file: string, servers: Record<DemoPlatform, string>, spec: BrokerSpec = {}) {
  const serves = spec.platforms ?? DEMO_PLATFORMS;
  const standby = (platform: DemoPlatform) => (spec.standby?.[platform] === 'cold' ? { standby: 'cold' } : {});
  const platforms = [
    ...(serves.includes('pf4')
      ? [
          {
            id: DEMO_PF4_ID,
            family: 'PF4',
            server: servers.pf4,
            login: DEMO_MANAGER_LOGIN,
            passwordEnv: DEMO_PASSWORD_ENV,
            ...standby('pf4'),
          },
        ]
      : []),
    ...(serves.includes('pf5')
      ? [
          {
            id: DEMO_PF5_ID,
            family: 'PF5',
            server: servers.pf5,
            login: DEMO_MANAGER_LOGIN,
            passwordEnv: DEMO_PASSWORD_ENV,
            ...standby('pf5'),
          },
        ]
      : []),
  ];
  let others: Array<{ id: string }> = [];
  if (existsSync(file)) {
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { platforms?: Array<{ id: string }> };
      others = (saved.platforms ?? []).filter((p) => p.id !== DEMO_PF4_ID && p.id !== DEMO_PF5_ID);
    } catch {
      /* a damaged file is rewritten with the demo platforms */
    }
  }
  writePrivateFile(file, JSON.stringify({ platforms: [...platforms, ...others] }, null, 2));
}

/**
 * Edge variables the stack gives values of its own (its brokers, their secret, its signing key and public URL; the
 * three defaults it writes out), each still taken from this environment where the stack reads it.
 */
const SET_BY_STACK: ReadonlySet<string> = new Set([
  'BROKER_URL',
  'BROKER_SECRET',
  'AUTH_SIGNING_KEY',
  'PUBLIC_URL',
  'AUTH_AUDIENCE',
  'TOKEN_TTL_SECONDS',
  'IDEMPOTENCY_RETENTION_HOURS',
]);

/** The edge variables of the configuration table (docs/operating.md) that are set, and not empty, in this process's environment. */
function passThrough(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    names.filter((n) => process.env[n] !== undefined && process.env[n] !== '').map((n) => [n, process.env[n]!]),
  );
}

/**
 * Inserts the demo organization, platforms and client when missing; the client's secret (`hashed`, its hash) follows
 * the configuration, and it holds every scope (read, write and admin), so the demo can call every operation.
 */
async function seedDemoRegistry(db: D1Like, clientId: string, hashed: SecretHash) {
  const now = new Date().toISOString();
  await db.batch([
    db
      .prepare('INSERT OR IGNORE INTO organizations (id, name, created) VALUES (?, ?, ?)')
      .bind(DEMO_ORG_ID, 'Demo Broker', now),
    db
      .prepare(
        'INSERT OR IGNORE INTO trade_platforms (id, name, type, organization_id, broker_urls, broker_url, created) VALUES (?, ?, ?, ?, NULL, NULL, ?)',
      )
      .bind(DEMO_PF4_ID, 'Demo PF4', 'PF4', DEMO_ORG_ID, now),
    db
      .prepare(
        'INSERT OR IGNORE INTO trade_platforms (id, name, type, organization_id, broker_urls, broker_url, created) VALUES (?, ?, ?, ?, NULL, NULL, ?)',
      )
      .bind(DEMO_PF5_ID, 'Demo PF5', 'PF5', DEMO_ORG_ID, now),
    db
      .prepare(
        `INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, scopes, created)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (client_id) DO UPDATE SET secret_hash = excluded.secret_hash, secret_salt = excluded.secret_salt,
         iterations = excluded.iterations, scopes = excluded.scopes, disabled = 0`,
      )
      .bind(clientId, DEMO_ORG_ID, 'Demo client', hashed.hash, hashed.salt, hashed.iterations, SCOPES.join(' '), now),
  ]);
}

/**
 * A token carrying the client, organization and scopes of `like` (a token the stack issued), signed with the stack's
 * own key and expiring `inSeconds` from now: what tests and drills use to watch a token expire without waiting an hour.
 */
export async function tokenExpiringIn(stack: Pick<Stack, 'dataDir'>, like: string, inSeconds: number): Promise<string> {
  const claims = decodeJwt(like);
  const jwk = JSON.parse(readFileSync(join(stack.dataDir, 'signing-key.json'), 'utf8')) as JWK;
  const key = await importJWK(jwk, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: claims.scope, client_id: claims.client_id, org: claims.org })
    .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'at+jwt' })
    .setIssuer(claims.iss!)
    .setAudience(claims.aud!)
    .setSubject(String(claims.sub))
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + inSeconds)
    .setJti(randomUUID())
    .sign(key);
}
