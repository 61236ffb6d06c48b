/**
 * The environment variables of every process, checked in one place with zod: `npm start` and the stack launcher (the
 * edge's variables and the ports of all three processes), the broker's and the simulator's mains, and the edge worker
 * itself (workers/config.ts reads its bindings through `readWorkerEnvironment`). Every variable's rule and default is
 * written here once. A wrong value is named in one line per variable that says what it must be, instead of a stack
 * trace or a silent fallback later on: the Node processes refuse to start with it; the edge worker, which cannot
 * refuse to be deployed, logs the same line and serves with the variable's documented fallback (see
 * `readWorkerEnvironment`). Empty counts as unset (a `VAR=` line in a shell or compose file).
 *
 * Pure: it reads the record it is given, never `process.env` itself, so the same rules are unit-tested directly and
 * run in the worker. Secret variables are never echoed back in a message.
 */
import { z } from 'zod';
import { parseCorsOrigins } from './corsOrigins.js';
import { parseAddressRanges, type AddressRange } from './addressRanges.js';
import { MAX_BROKERS_PER_PLATFORM, parseBrokerUrls } from './brokerUrls.js';
import { parseRegionBrokerRoutes, type RegionBrokerRoutes } from './brokerRoutes.js';
import { FAILBACK_HOLD_DOWN_MS } from './frames.js';
import {
  DEFAULT_REPLICA_MAX_ROWS,
  DEFAULT_REPLICA_STORED_ROWS,
  MAX_REPLICA_MAX_ROWS,
  MAX_REPLICA_STORED_ROWS,
} from './replication.js';
import { isRegion, REGIONS, type Region } from './regions.js';

export type EnvironmentRecord = Record<string, string | undefined>;

/** Every problem found, one per variable, each a sentence starting with the variable's name. */
export class EnvironmentError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'EnvironmentError';
  }
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

interface VariableRule<T> {
  parse(raw: string): Parsed<T>;
  /** Secrets are refused without quoting what was given. */
  secret?: boolean;
  /** What the edge worker serves with when the value is wrong, when that is better than the default. */
  salvage?: (raw: string) => T;
}

/** Each variable's rule and default, for the worker's reading that replaces a wrong value instead of refusing it. */
const fallbacks = new WeakMap<z.ZodType, { rule: VariableRule<unknown>; fallback: unknown }>();

/** One variable: unset or empty gives `fallback`, anything else must pass `rule`. */
function variable<T, F extends T | undefined>(rule: VariableRule<T>, fallback: F) {
  const schema = z
    .string()
    .optional()
    .transform((raw, ctx): T | F => {
      if (raw === undefined || raw.trim() === '') return fallback;
      const parsed = rule.parse(raw.trim());
      if (parsed.ok) return parsed.value;
      ctx.addIssue({
        code: 'custom',
        message: rule.secret ? parsed.problem : `${parsed.problem}, got ${JSON.stringify(raw)}`,
      });
      return z.NEVER;
    });
  fallbacks.set(schema, { rule, fallback });
  return schema;
}

const integer = (min: number, max: number, what: string): VariableRule<number> => ({
  parse(raw) {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max)
      return { ok: false, problem: `must be ${what}` };
    return { ok: true, value };
  },
});

const PORT = integer(0, 65535, 'a port number from 0 to 65535 (0: any free port)');
const SEED = integer(0, 2 ** 32 - 1, 'an integer from 0 to 4294967295');
const positive = (max: number, unit: string) => integer(1, max, `a whole number of ${unit} from 1 to ${max}`);
const count = (max: number, what: string) => integer(0, max, `a whole number of ${what} from 0 to ${max}`);
/** A plain decimal number (`2.5`, `0.0003`), above `min` (or from it, `inclusive`) and at most `max`. */
const decimal = (min: number, max: number, inclusive: boolean, what: string): VariableRule<number> => ({
  parse(raw) {
    const value = Number(raw);
    if (!/^\d+(\.\d+)?$|^\.\d+$/.test(raw) || (inclusive ? value < min : value <= min) || value > max)
      return { ok: false, problem: `must be ${what}` };
    return { ok: true, value };
  },
});
/** `1` or `0`. */
const flag = (what: string): VariableRule<boolean> => ({
  parse: (raw) =>
    raw === '1' || raw === '0' ? { ok: true, value: raw === '1' } : { ok: false, problem: `must be ${what}` },
});

const httpUrl: VariableRule<string> = {
  parse(raw) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return { ok: false, problem: 'must be an absolute http(s) URL' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { ok: false, problem: 'must be an absolute http(s) URL' };
    return { ok: true, value: raw };
  },
};

/** One broker base URL, or an ordered list of them separated by commas (shared/brokerUrls.ts). */
const brokerUrls: VariableRule<string[]> = { parse: (raw) => parseBrokerUrls(raw) };

/** Each region's routes to the brokers, as JSON (shared/brokerRoutes.ts). */
const regionBrokerRoutes: VariableRule<RegionBrokerRoutes> = { parse: (raw) => parseRegionBrokerRoutes(raw) };

/** One of the location-hint regions (shared/regions.ts). */
const region: VariableRule<Region> = {
  parse: (raw) =>
    isRegion(raw) ? { ok: true, value: raw } : { ok: false, problem: `must be one of ${REGIONS.join(', ')}` },
};

const text: VariableRule<string> = { parse: (raw) => ({ ok: true, value: raw }) };
const secretText: VariableRule<string> = { parse: (raw) => ({ ok: true, value: raw }), secret: true };

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
const logLevel: VariableRule<LogLevelName> = {
  parse: (raw) =>
    (LOG_LEVELS as readonly string[]).includes(raw)
      ? { ok: true, value: raw as LogLevelName }
      : { ok: false, problem: `must be one of ${LOG_LEVELS.join(', ')}` },
};

/** A private ES256 JWK as JSON: checked for shape only, so a pasted public key or PEM fails here, not at first token. */
const signingKey: VariableRule<string> = {
  secret: true,
  parse(raw) {
    let jwk: Record<string, unknown>;
    try {
      jwk = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return { ok: false, problem: 'must be a private ES256 JWK as JSON (npm run secrets makes one)' };
    }
    if (
      typeof jwk !== 'object' ||
      jwk === null ||
      jwk.kty !== 'EC' ||
      jwk.crv !== 'P-256' ||
      typeof jwk.d !== 'string'
    ) {
      return {
        ok: false,
        problem: 'must be a private ES256 JWK (kty EC, crv P-256, with d) as JSON (npm run secrets makes one)',
      };
    }
    return { ok: true, value: raw };
  },
};

/** `*` or origins (scheme, host, port) separated by commas or spaces: shared/corsOrigins.ts reads it on the edge. */
const corsOrigins: VariableRule<string> = {
  parse(raw) {
    const { invalid } = parseCorsOrigins(raw);
    if (invalid.length > 0) {
      return {
        ok: false,
        problem: `must be * or origins like https://terminal.example.com (scheme, host and port, no path) separated by commas; not an origin: ${invalid.join(' ')}`,
      };
    }
    return { ok: true, value: raw };
  },
  // The edge keeps the entries that are origins (shared/corsOrigins.ts ignores the others).
  salvage: (raw) => raw,
};

/** IP addresses and CIDR ranges separated by commas or spaces (shared/addressRanges.ts). */
const addressRanges: VariableRule<AddressRange[]> = {
  parse(raw) {
    const { ranges, invalid } = parseAddressRanges(raw);
    if (invalid.length > 0) {
      return {
        ok: false,
        problem: `must be IP addresses or CIDR ranges (10.0.0.5, 172.29.79.0/24, fd00::/8) separated by commas; not one: ${invalid.join(' ')}`,
      };
    }
    return { ok: true, value: ranges };
  },
};

/** A shared secret presented by callers: long enough not to be guessed. */
const token = (minLength: number): VariableRule<string> => ({
  secret: true,
  parse: (raw) =>
    raw.length >= minLength
      ? { ok: true, value: raw }
      : { ok: false, problem: `must be at least ${minLength} characters` },
});

/** The local ports (`PORT`, `BROKER_PORT`, `SIM_PORT`), and so the loopback URLs of the edge and the broker. */
const DEFAULT_EDGE_PORT = 8787;
const DEFAULT_BROKER_PORT = 8790;
const DEFAULT_SIM_PORT = 8791;

/**
 * Every variable of the edge worker (workers/env.ts types the bindings; this is where each one's rule and default
 * live). The worker reads them once per bindings object (workers/config.ts); the launcher checks the ones it passes
 * through (`edgeEnvironment`).
 */
const workerVariables = {
  PUBLIC_URL: variable(httpUrl, `http://127.0.0.1:${DEFAULT_EDGE_PORT}`),
  AUTH_AUDIENCE: variable(text, 'webapi'),
  /**
   * The worker takes the key as given and imports it at first use: a key that cannot be imported answers the token
   * endpoint and /api/ 500 `server_error` ("the token signing key is not usable"). The launcher checks its shape
   * before anything starts (`edgeEnvironment`).
   */
  AUTH_SIGNING_KEY: variable(secretText, undefined),
  AUTH_ISSUER: variable(text, undefined),
  AUTH_JWKS_URL: variable(httpUrl, undefined),
  AUTH_ORG_CLAIM: variable(text, 'org'),
  /** How long a fetch of the external identity provider's keys may take before its calls are answered 503. */
  AUTH_JWKS_TIMEOUT_MS: variable(positive(60_000, 'milliseconds'), 5000),
  TOKEN_TTL_SECONDS: variable(positive(31_536_000, 'seconds'), 3600),
  TOKEN_MAX_LIFETIME_SECONDS: variable(positive(31_536_000, 'seconds'), 86_400),
  /** How far past its `exp` (and before its `nbf` and `iat`) a token is still accepted, on REST and streams alike. */
  TOKEN_CLOCK_TOLERANCE_SECONDS: variable(count(300, 'seconds'), 5),
  TOKEN_RATE_LIMIT: variable(count(1_000_000_000, 'requests'), 30),
  TOKEN_FAILURE_LIMIT: variable(count(1_000_000_000, 'requests'), 30),
  /**
   * Each verification is a 100,000-iteration hash, the token endpoint's one expensive step: the default keeps the
   * hashing of a window to a small share of one isolate's time, however many callers ask (what a check costs:
   * docs/perf/2026-11-27-figures-behind-defaults.md).
   */
  TOKEN_VERIFY_LIMIT: variable(count(1_000_000_000, 'verifications'), 300),
  /** The objects that count TOKEN_FAILURE_LIMIT, every source address hashed onto one (workers/limits/counterShards.ts). */
  TOKEN_FAILURE_SHARDS: variable(positive(256, 'objects'), 16),
  API_RATE_LIMIT: variable(count(1_000_000_000, 'requests'), 30_000),
  RATE_LIMIT_WINDOW_SECONDS: variable(positive(86_400, 'seconds'), 60),
  IDEMPOTENCY_RETENTION_HOURS: variable(
    decimal(0, 8760, false, 'a number of hours above 0 and at most 8760 (0.5: half an hour)'),
    24,
  ),
  REGISTRY_CACHE_SECONDS: variable(
    decimal(0, 3600, true, 'a number of seconds from 0 to 3600 (0: read the registry on every call)'),
    5,
  ),
  /**
   * Days an organization's audit trail keeps a row (workers/audit/): 400 by default, a year and a month, what
   * compliance teams commonly ask of a year's records; 0 turns the trail off (nothing is recorded).
   */
  AUDIT_RETENTION_DAYS: variable(count(36_500, 'days'), 400),
  /** Hours a webhook delivery is tried again before it goes to the endpoint's dead letters (docs/webhooks.md). */
  WEBHOOK_RETRY_HOURS: variable(positive(720, 'hours'), 24),
  /** Days an endpoint may fail every delivery before it is disabled with the reason (0: never disabled for it). */
  WEBHOOK_DISABLE_AFTER_DAYS: variable(count(365, 'days'), 5),
  /** Deliveries one endpoint may have in flight at once; more wait their turn. */
  WEBHOOK_MAX_IN_FLIGHT: variable(positive(100, 'deliveries'), 8),
  /** Seconds a receiver has to answer a delivery before the attempt counts as failed. */
  WEBHOOK_TIMEOUT_SECONDS: variable(positive(60, 'seconds'), 15),
  /**
   * Lets webhook endpoints be http and loopback or private addresses: for a local edge and its tests only (a deployed
   * edge refuses them, docs/webhooks.md).
   */
  WEBHOOK_PRIVATE_TARGETS: variable(flag('1 (webhooks may go to http and private addresses) or 0'), false),
  STREAM_MAX_BEHIND: variable(positive(1_000_000, 'events'), 5_000),
  STREAM_SHARDS: variable(positive(256, 'objects'), 1),
  STREAM_FLUSH_MS: variable(positive(1000, 'milliseconds'), 10),
  STREAM_HUB_QUIET_SECONDS: variable(positive(3600, 'seconds'), 30),
  STREAM_HUB_HANDSHAKE_SECONDS: variable(positive(3600, 'seconds'), 15),
  LINKS_PER_PLATFORM: variable(positive(256, 'objects'), 4),
  IDEMPOTENCY_SHARDS: variable(positive(256, 'objects'), 16),
  /**
   * Megabytes of stored answers one idempotency ledger (a share of one client's keys) holds before it refuses new keys;
   * at most well under what an object's storage holds, leaving room for the rows' other columns and the indexes
   * (docs/operating.md says why the default).
   */
  IDEMPOTENCY_LEDGER_MAX_MB: variable(
    decimal(0, 8192, false, 'a number of megabytes above 0 and at most 8192 (0.5: half a megabyte)'),
    4096,
  ),
  /** Bytes (UTF-8) of one answer a ledger stores for replay, a larger one stored as a note: below what one row may hold. */
  IDEMPOTENCY_ANSWER_MAX_BYTES: variable(
    integer(1000, 1_500_000, 'a whole number of bytes from 1000 to 1500000'),
    1_500_000,
  ),
  EDGE_REPLICA_MAX_ROWS: variable(count(MAX_REPLICA_MAX_ROWS, 'rows'), DEFAULT_REPLICA_MAX_ROWS),
  EDGE_REPLICA_STORED_ROWS: variable(count(MAX_REPLICA_STORED_ROWS, 'rows'), DEFAULT_REPLICA_STORED_ROWS),
  BROKER_URL: variable(brokerUrls, [`http://127.0.0.1:${DEFAULT_BROKER_PORT}`]),
  BROKER_SECRET: variable(secretText, undefined),
  BROKER_FAILBACK_SECONDS: variable(
    decimal(0, 3600, true, 'a number of seconds from 0 to 3600'),
    FAILBACK_HOLD_DOWN_MS / 1000,
  ),
  ACCESS_LOG_BATCH: variable(
    flag('1 (each access-log line written on its own) or 0 (lines written in batches)'),
    false,
  ),
  CORS_ORIGINS: variable(corsOrigins, undefined),
  /**
   * The region of a request the front tells nothing of (no `request.cf`): every request on a local edge, unless it
   * names its own in `X-Gateway-Region` (docs/regions.md).
   */
  EDGE_REGION: variable(region, 'weur'),
  /**
   * The home region of a platform whose registry row names none: where the objects taking its live reads and writes
   * live (docs/regions.md).
   */
  HOME_REGION: variable(region, 'weur'),
  /**
   * Where each region's objects connect to the brokers, when not at the brokers' own URLs (a relay near the region,
   * the regions bench's delay proxy): JSON, region → broker URL → URL (docs/regions.md). Unset: no routes.
   */
  REGION_BROKER_ROUTES: variable(regionBrokerRoutes, {}),
  /** `1`: the edge serves the reference web terminal (examples/web-terminal) at /terminal; off unless set. */
  TERMINAL: variable(flag('1 (serve the reference web terminal at /terminal) or 0'), false),
  /** The bearer token of the edge's `GET /metrics` (workers/metrics); unset: no /metrics. */
  METRICS_TOKEN: variable(secretText, undefined),
};

/** The names of the edge worker's variables. */
export const WORKER_VARIABLES = Object.keys(workerVariables) as ReadonlyArray<keyof typeof workerVariables>;

/** The edge worker's variables as read: each typed, unset ones at their defaults. */
export type WorkerEnvironment = { [K in keyof typeof workerVariables]: z.output<(typeof workerVariables)[K]> };

/**
 * Variables of the edge worker as the local launcher reads them from its environment and passes them through
 * (docs/operating.md, "Configuration"): every one of the worker's, the signing key checked for shape before start.
 */
const edgeVariables = {
  ...workerVariables,
  // Checked for shape before start, so a pasted public key or PEM fails here, not at the first token.
  AUTH_SIGNING_KEY: variable(signingKey, undefined),
};

type EdgeShape = { [K in keyof typeof edgeVariables]: unknown } & {
  AUTH_ISSUER?: string;
  AUTH_JWKS_URL?: string;
  TOKEN_TTL_SECONDS: number;
  TOKEN_MAX_LIFETIME_SECONDS: number;
};

/**
 * Rules across variables: what each alone cannot say. Run even when a single variable is already wrong (`when`), so
 * one start names every mistake at once; a wrong value then reaches here as zod's abort marker and compares as false.
 */
function edgeConsistency(env: EdgeShape, ctx: z.RefinementCtx): void {
  if (env.AUTH_ISSUER && !env.AUTH_JWKS_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_JWKS_URL'],
      message:
        'must be set when AUTH_ISSUER is: an external identity provider needs both (or unset AUTH_ISSUER for the local token endpoint)',
    });
  }
  if (env.AUTH_JWKS_URL && !env.AUTH_ISSUER) {
    ctx.addIssue({
      code: 'custom',
      path: ['AUTH_ISSUER'],
      message:
        'must be set when AUTH_JWKS_URL is: an external identity provider needs both (or unset AUTH_JWKS_URL for the local token endpoint)',
    });
  }
  if (env.TOKEN_TTL_SECONDS > env.TOKEN_MAX_LIFETIME_SECONDS) {
    ctx.addIssue({
      code: 'custom',
      path: ['TOKEN_TTL_SECONDS'],
      message: `must not exceed TOKEN_MAX_LIFETIME_SECONDS (${env.TOKEN_MAX_LIFETIME_SECONDS}): the edge would refuse its own tokens`,
    });
  }
}

/** The edge's variables, as the launcher and the tests' stack read them from their environment. */
export const edgeEnvironment = z.object(edgeVariables).superRefine(edgeConsistency, { when: () => true });

/** Every variable of the edge worker, with the rules across them. */
export const workerEnvironment = z.object(workerVariables).superRefine(edgeConsistency, { when: () => true });

/** The edge worker's variables when none is set: the defaults, for code that addresses the worker's objects. */
export const WORKER_DEFAULTS: Readonly<WorkerEnvironment> = Object.freeze(workerEnvironment.parse({}));

/**
 * The edge worker's reading of its bindings: every variable by its rule, and every problem in the sentences
 * `readEnvironment` throws (one per variable, naming it), for the worker to log. A deployed worker cannot refuse to
 * start, and refusing every request over one wrong limit would be an outage, so instead of refusing, a wrong value
 * is replaced by what the edge has always served with: the variable's default (CORS_ORIGINS: the entries that are
 * origins). The rules across variables need nothing replaced: the edge verifies against an external identity
 * provider only when AUTH_ISSUER and AUTH_JWKS_URL are both set, and never issues a token longer than
 * TOKEN_MAX_LIFETIME_SECONDS (workers/auth/authConfig.ts).
 */
export function readWorkerEnvironment(env: EnvironmentRecord): { values: WorkerEnvironment; problems: string[] } {
  let problems: string[] = [];
  try {
    return { values: readEnvironment(workerEnvironment, env), problems };
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    problems = error.problems;
  }
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(workerVariables)) {
    const read = schema.safeParse(env[name]);
    if (read.success) {
      values[name] = read.data;
      continue;
    }
    const { rule, fallback } = fallbacks.get(schema)!;
    const raw = env[name];
    values[name] = rule.salvage && typeof raw === 'string' ? rule.salvage(raw.trim()) : fallback;
  }
  return { values: values as WorkerEnvironment, problems };
}

/** A V8 flag: `--name` or `--name=value` (a short value of letters, digits and . , : + -). */
const V8_FLAG = /^--[a-z0-9][a-z0-9_-]*(=[\w.,:+-]{1,64})?$/i;
/** V8 flags separated by spaces, or `none`. */
const v8Flags: VariableRule<string[]> = {
  parse(raw) {
    if (raw === 'none') return { ok: true, value: [] };
    const flags = raw.split(/\s+/);
    return flags.every((flag) => V8_FLAG.test(flag))
      ? { ok: true, value: flags }
      : { ok: false, problem: 'must be V8 flags separated by spaces (--name or --name=value), or none' };
  },
};

/**
 * V8 flags of the local edge's workerd unless `EDGE_V8_FLAGS` gives others: each isolate's heap is held to 128 MB, the
 * memory Cloudflare gives an isolate, so the local process's memory is bounded under load (V8 otherwise sizes its
 * heaps by the allocation rate, far above what they hold) and an isolate that would outgrow Cloudflare's limit fails
 * locally too (docs/capacity.md, "What the edge holds over time").
 */
export const DEFAULT_EDGE_V8_FLAGS: readonly string[] = Object.freeze(['--max-heap-size=128']);

/** The local edge's own variables (launcher/edge.ts), read wherever one starts: `npm start`, the tests, the benches. */
export const localEdgeVariables = {
  EDGE_V8_FLAGS: variable(v8Flags, DEFAULT_EDGE_V8_FLAGS as string[]),
};

/** `npm start`: the three processes' ports and the demo, plus the edge's variables. */
export const startEnvironment = z
  .object({
    ...edgeVariables,
    ...localEdgeVariables,
    PORT: variable(PORT, DEFAULT_EDGE_PORT),
    BROKER_PORT: variable(PORT, DEFAULT_BROKER_PORT),
    /** Brokers started, each serving both demo platforms (the first on BROKER_PORT, the others on free ports). */
    BROKERS: variable(positive(MAX_BROKERS_PER_PLATFORM, 'brokers'), 1),
    SIM_PORT: variable(PORT, DEFAULT_SIM_PORT),
    SIM_SEED: variable(SEED, undefined),
    DATA_DIR: variable(text, '.data'),
    LOG_LEVEL: variable(logLevel, 'info'),
    DEMO_CLIENT_ID: variable(
      {
        parse: (raw) =>
          raw === 'registry-cli'
            ? { ok: false, problem: "must not be registry-cli, the registry CLI's client id in the audit trail" }
            : /^[A-Za-z0-9._~-]{1,128}$/.test(raw)
              ? { ok: true, value: raw }
              : { ok: false, problem: 'must be 1 to 128 letters, digits or . _ ~ - (a registry client id)' },
      },
      'demo',
    ),
    DEMO_CLIENT_SECRET: variable(secretText, 'demo-secret'),
    SIM_MANAGER_PASSWORD: variable(secretText, undefined),
  })
  .superRefine(edgeConsistency, { when: () => true });

/** Both or neither: a certificate without its key (or the reverse) is a mistake, not a choice. */
function tlsPair(env: { BROKER_TLS_CERT?: string; BROKER_TLS_KEY?: string }, ctx: z.RefinementCtx): void {
  if (env.BROKER_TLS_CERT && !env.BROKER_TLS_KEY)
    ctx.addIssue({
      code: 'custom',
      path: ['BROKER_TLS_KEY'],
      message: "must be set when BROKER_TLS_CERT is (the PEM file of the certificate's private key)",
    });
  if (env.BROKER_TLS_KEY && !env.BROKER_TLS_CERT)
    ctx.addIssue({
      code: 'custom',
      path: ['BROKER_TLS_CERT'],
      message: 'must be set when BROKER_TLS_KEY is (the PEM certificate chain file)',
    });
}

/** `broker/main.ts`. */
export const brokerEnvironment = z
  .object({
    BROKER_SECRET: variable(secretText, undefined).refine((v) => v !== undefined, {
      message: 'is required: the edge links authenticate with it (npm run secrets makes one)',
    }),
    BROKER_PORT: variable(PORT, DEFAULT_BROKER_PORT),
    BROKER_HOST: variable(text, '127.0.0.1'),
    BROKER_PLATFORMS_FILE: variable(text, undefined),
    BROKER_ID: variable(text, 'local'),
    BROKER_TLS_CERT: variable(text, undefined),
    BROKER_TLS_KEY: variable(text, undefined),
    /** Failed password checks of one account allowed per window, across the whole edge (0: no bound). */
    PASSWORD_CHECK_FAILURES: variable(count(1_000_000, 'checks'), 5),
    PASSWORD_CHECK_WINDOW_SECONDS: variable(positive(86_400, 'seconds'), 60),
    /**
     * The bound on a drain (SIGTERM): how long the broker stays up finishing its calls and delivering its keyed outcomes
     * before it exits. The default is the late-answer window (120 s) plus 10 s.
     */
    BROKER_DRAIN_SECONDS: variable(positive(3600, 'seconds'), 130),
    /**
     * What one answer's data may take, in bytes (default 16 MiB): the edge closes its broker link on a message past
     * workerd's 32 MiB, and holds an answer in up to three copies within an isolate's 128 MB. At most 31 MiB.
     */
    BROKER_ANSWER_MAX_BYTES: variable(
      integer(1024, 31 * 1024 * 1024, 'a whole number of bytes from 1024 to 32505856 (31 MiB)'),
      16 * 1024 * 1024,
    ),
    /**
     * Fair use of each platform's manager session (broker/session/fairUse.ts): callers' commands on the wire at once,
     * and the answer bytes they are expected to bring in all.
     */
    BROKER_MANAGER_CALLS: variable(integer(1, 1024, 'a whole number of commands from 1 to 1024'), 16),
    BROKER_MANAGER_BYTES: variable(
      integer(1024 * 1024, 1024 * 1024 * 1024, 'a whole number of bytes from 1048576 (1 MiB) to 1073741824 (1 GiB)'),
      32 * 1024 * 1024,
    ),
    DATA_DIR: variable(text, '.data'),
    LOG_LEVEL: variable(logLevel, 'info'),
  })
  .superRefine(tlsPair, { when: () => true });

/** `sim/main.ts`. */
export const simEnvironment = z.object({
  SIM_PORT: variable(PORT, DEFAULT_SIM_PORT),
  SIM_HOST: variable(text, '127.0.0.1'),
  SIM_SEED: variable(SEED, undefined),
  SIM_CONFIG: variable(text, undefined),
  SIM_MANAGER_PASSWORD: variable(secretText, undefined),
  /** Peers besides loopback that may open manager sessions (and read /healthz); unset: loopback only. */
  SIM_MANAGER_ALLOW: variable(addressRanges, [] as AddressRange[]),
  /** Lets an allowed non-loopback peer use the fault controls with `Authorization: Bearer <token>`; unset: loopback only. */
  SIM_CONTROL_TOKEN: variable(token(16), undefined),
});

/** The port `npm run terminal` serves the reference web terminal on unless TERMINAL_PORT says otherwise. */
export const DEFAULT_TERMINAL_PORT = 8788;

/** `npm run terminal` (scripts/terminal.ts): its port, and the gateway the page signs in at (an origin: launcher/terminal.ts). */
export const terminalEnvironment = z.object({
  TERMINAL_PORT: variable(PORT, DEFAULT_TERMINAL_PORT),
  GATEWAY_URL: variable(httpUrl, `http://127.0.0.1:${DEFAULT_EDGE_PORT}`),
});

/** The launcher library as the tests and tools start stacks with it (launcher/stack.ts). */
export const stackEnvironment = z.object({
  /** `1`: the stack runs the broker inside the calling process (mutation testing sees its code there). */
  STACK_BROKER_IN_PROCESS: variable(flag('1 (the broker runs inside the process that starts the stack) or 0'), false),
});

/**
 * Every process's variables, for the docs check (scripts/checkDocs.ts): each declared name must be a row of
 * docs/operating.md's configuration table, and every variable a doc names one of these.
 */
export const ENVIRONMENTS = {
  worker: workerEnvironment,
  edge: edgeEnvironment,
  localEdge: z.object(localEdgeVariables),
  start: startEnvironment,
  broker: brokerEnvironment,
  sim: simEnvironment,
  terminal: terminalEnvironment,
  stack: stackEnvironment,
};

/**
 * Reads `env` through `schema`: the typed values, or an EnvironmentError listing `NAME: problem` for every variable
 * that is wrong (`NAME must be …, got "…"`), in the schema's order.
 */
export function readEnvironment<S extends z.ZodType<unknown, EnvironmentRecord>>(
  schema: S,
  env: EnvironmentRecord,
): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${String(issue.path[0] ?? 'environment')} ${issue.message}`);
  throw new EnvironmentError([...new Set(problems)]);
}

/**
 * Why a server could not listen, naming the variable that chooses its port or address: a port in use (another copy
 * of the process, or `npm start` still running), a privileged port, an address this machine does not have. Null for
 * any other error, which the caller reports as it is.
 */
export function listenProblem(
  error: unknown,
  variables: { port: string; host?: string },
  port: number,
  host = '127.0.0.1',
): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE' || code === 'ERR_ADDRESS_IN_USE') {
    return `port ${port} on ${host} is already in use (another copy running, or npm start?): set ${variables.port} to a free port, or 0 for any`;
  }
  if (code === 'EACCES')
    return `port ${port} needs privileges this process does not have: set ${variables.port} to a port above 1023`;
  if (code === 'EADDRNOTAVAIL' && variables.host)
    return `${host} is not an address of this machine: set ${variables.host} to one it has (127.0.0.1, or 0.0.0.0 for all)`;
  return null;
}
