/**
 * The environment rules of every process (shared/environment.ts) and the Node.js version check: a wrong value is
 * refused with a sentence naming its variable, secrets are never quoted back, unset and empty take the defaults, the
 * edge worker reads every variable of its own by the same rules and serves a wrong one's fallback, and the required
 * Node.js version is the one package.json declares.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  brokerEnvironment,
  edgeEnvironment,
  EnvironmentError,
  listenProblem,
  readEnvironment,
  readWorkerEnvironment,
  simEnvironment,
  stackEnvironment,
  startEnvironment,
  terminalEnvironment,
  WORKER_DEFAULTS,
  WORKER_VARIABLES,
  type EnvironmentRecord,
  type WorkerEnvironment,
} from './environment.js';
import { nodeVersionProblem, REQUIRED_NODE } from './nodeVersion.js';

function problems(schema: Parameters<typeof readEnvironment>[0], env: EnvironmentRecord): string[] {
  try {
    readEnvironment(schema, env);
  } catch (error) {
    expect(error).toBeInstanceOf(EnvironmentError);
    return (error as EnvironmentError).problems;
  }
  return [];
}

describe('environment of npm start', () => {
  it('takes the documented defaults when nothing is set, and treats empty as unset', () => {
    const env = readEnvironment(startEnvironment, { PORT: '', SIM_SEED: ' ' });
    expect(env).toMatchObject({
      PORT: 8787,
      BROKER_PORT: 8790,
      SIM_PORT: 8791,
      SIM_SEED: undefined,
      DATA_DIR: '.data',
      LOG_LEVEL: 'info',
      TOKEN_TTL_SECONDS: 3600,
      AUTH_AUDIENCE: 'webapi',
      DEMO_CLIENT_ID: 'demo',
      DEMO_CLIENT_SECRET: 'demo-secret',
    });
  });

  it('reads valid values as numbers', () => {
    const env = readEnvironment(startEnvironment, {
      PORT: '0',
      BROKER_PORT: '9000',
      SIM_SEED: '7',
      TOKEN_TTL_SECONDS: '600',
    });
    expect(env).toMatchObject({ PORT: 0, BROKER_PORT: 9000, SIM_SEED: 7, TOKEN_TTL_SECONDS: 600 });
  });

  it('names every wrong variable, with what it must be and what was given', () => {
    const found = problems(startEnvironment, {
      PORT: '80a',
      BROKER_PORT: '70000',
      SIM_PORT: '-1',
      SIM_SEED: '1.5',
      TOKEN_TTL_SECONDS: '0',
      LOG_LEVEL: 'loud',
      PUBLIC_URL: 'localhost:8787',
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'PORT must be a port number from 0 to 65535 (0: any free port), got "80a"',
        'BROKER_PORT must be a port number from 0 to 65535 (0: any free port), got "70000"',
        'SIM_PORT must be a port number from 0 to 65535 (0: any free port), got "-1"',
        'SIM_SEED must be an integer from 0 to 4294967295, got "1.5"',
        'TOKEN_TTL_SECONDS must be a whole number of seconds from 1 to 31536000, got "0"',
        'LOG_LEVEL must be one of debug, info, warn, error, got "loud"',
      ]),
    );
    expect(found.find((p) => p.startsWith('PUBLIC_URL'))).toMatch(/^PUBLIC_URL must be an absolute http\(s\) URL/);
    expect(found).toHaveLength(7);
  });

  it("reads the stream clients' limit and refuses one that would disconnect every client or none", () => {
    expect(readEnvironment(startEnvironment, { STREAM_MAX_BEHIND: '200' })).toMatchObject({ STREAM_MAX_BEHIND: 200 });
    expect(problems(startEnvironment, { STREAM_MAX_BEHIND: '0' })).toEqual([
      'STREAM_MAX_BEHIND must be a whole number of events from 1 to 1000000, got "0"',
    ]);
    expect(problems(startEnvironment, { STREAM_MAX_BEHIND: '2000000' })).toHaveLength(1);
  });

  it("refuses the registry CLI's audit client id as the demo client's", () => {
    expect(problems(startEnvironment, { DEMO_CLIENT_ID: 'registry-cli' })).toEqual([
      `DEMO_CLIENT_ID must not be registry-cli, the registry CLI's client id in the audit trail, got "registry-cli"`,
    ]);
  });

  it('reads BROKERS, the brokers npm start runs, from 1 to 8, and refuses anything else in one line', () => {
    expect(readEnvironment(startEnvironment, {}).BROKERS).toBe(1);
    expect(readEnvironment(startEnvironment, { BROKERS: '2' }).BROKERS).toBe(2);
    expect(problems(startEnvironment, { BROKERS: '9' })).toEqual([
      'BROKERS must be a whole number of brokers from 1 to 8, got "9"',
    ]);
    expect(problems(startEnvironment, { BROKERS: '0' })).toEqual([
      'BROKERS must be a whole number of brokers from 1 to 8, got "0"',
    ]);
    expect(problems(startEnvironment, { BROKERS: 'two' })).toHaveLength(1);
  });

  it('refuses AUTH_ISSUER without AUTH_JWKS_URL, and the reverse, instead of silently issuing local tokens', () => {
    expect(problems(startEnvironment, { AUTH_ISSUER: 'https://id.example.com/' })).toEqual([
      expect.stringMatching(/^AUTH_JWKS_URL must be set when AUTH_ISSUER is/),
    ]);
    expect(problems(edgeEnvironment, { AUTH_JWKS_URL: 'https://id.example.com/jwks' })).toEqual([
      expect.stringMatching(/^AUTH_ISSUER must be set when AUTH_JWKS_URL is/),
    ]);
    expect(
      problems(edgeEnvironment, {
        AUTH_ISSUER: 'https://id.example.com/',
        AUTH_JWKS_URL: 'https://id.example.com/jwks',
      }),
    ).toEqual([]);
  });

  it('refuses a token lifetime the edge itself would refuse', () => {
    expect(problems(edgeEnvironment, { TOKEN_TTL_SECONDS: '7200', TOKEN_MAX_LIFETIME_SECONDS: '3600' })).toEqual([
      expect.stringMatching(/^TOKEN_TTL_SECONDS must not exceed TOKEN_MAX_LIFETIME_SECONDS \(3600\)/),
    ]);
  });

  it('checks the signing key shape and never quotes a secret back', () => {
    const found = problems(edgeEnvironment, { AUTH_SIGNING_KEY: 'not-json-but-secret-material' });
    expect(found).toEqual([expect.stringMatching(/^AUTH_SIGNING_KEY must be a private ES256 JWK/)]);
    expect(found.join()).not.toContain('secret-material');
    const publicOnly = JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b' });
    expect(problems(edgeEnvironment, { AUTH_SIGNING_KEY: publicOnly })).toHaveLength(1);
    expect(
      problems(edgeEnvironment, {
        AUTH_SIGNING_KEY: JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' }),
      }),
    ).toEqual([]);
  });
});

describe('environment of the edge worker', () => {
  const read = (env: EnvironmentRecord) => readWorkerEnvironment(env);
  const value = <K extends keyof WorkerEnvironment>(name: K, raw: string | undefined) =>
    read({ [name]: raw }).values[name];

  it('has a default for every variable that has one, each written once in the schema', () => {
    expect(WORKER_DEFAULTS).toEqual({
      PUBLIC_URL: 'http://127.0.0.1:8787',
      AUTH_AUDIENCE: 'webapi',
      AUTH_ORG_CLAIM: 'org',
      AUTH_JWKS_TIMEOUT_MS: 5000,
      TOKEN_TTL_SECONDS: 3600,
      TOKEN_MAX_LIFETIME_SECONDS: 86_400,
      TOKEN_CLOCK_TOLERANCE_SECONDS: 5,
      TOKEN_RATE_LIMIT: 30,
      TOKEN_FAILURE_LIMIT: 30,
      TOKEN_VERIFY_LIMIT: 300,
      TOKEN_FAILURE_SHARDS: 16,
      API_RATE_LIMIT: 30_000,
      RATE_LIMIT_WINDOW_SECONDS: 60,
      IDEMPOTENCY_RETENTION_HOURS: 24,
      REGISTRY_CACHE_SECONDS: 5,
      AUDIT_RETENTION_DAYS: 400,
      WEBHOOK_RETRY_HOURS: 24,
      WEBHOOK_DISABLE_AFTER_DAYS: 5,
      WEBHOOK_MAX_IN_FLIGHT: 8,
      WEBHOOK_TIMEOUT_SECONDS: 15,
      WEBHOOK_PRIVATE_TARGETS: false,
      STREAM_MAX_BEHIND: 5_000,
      STREAM_SHARDS: 1,
      STREAM_FLUSH_MS: 10,
      STREAM_HUB_QUIET_SECONDS: 30,
      STREAM_HUB_HANDSHAKE_SECONDS: 15,
      LINKS_PER_PLATFORM: 4,
      IDEMPOTENCY_SHARDS: 16,
      IDEMPOTENCY_LEDGER_MAX_MB: 4096,
      IDEMPOTENCY_ANSWER_MAX_BYTES: 1_500_000,
      EDGE_REPLICA_MAX_ROWS: 10_000,
      EDGE_REPLICA_STORED_ROWS: 1_000_000,
      BROKER_URL: ['http://127.0.0.1:8790'],
      BROKER_FAILBACK_SECONDS: 10,
      ACCESS_LOG_BATCH: false,
      EDGE_REGION: 'weur',
      HOME_REGION: 'weur',
      REGION_BROKER_ROUTES: {},
      TERMINAL: false,
    });
    expect(read({})).toEqual({
      values: {
        ...WORKER_DEFAULTS,
        AUTH_SIGNING_KEY: undefined,
        AUTH_ISSUER: undefined,
        AUTH_JWKS_URL: undefined,
        BROKER_SECRET: undefined,
        CORS_ORIGINS: undefined,
        METRICS_TOKEN: undefined,
      },
      problems: [],
    });
    // The local ports are the ones the loopback URLs name.
    expect(readEnvironment(startEnvironment, {})).toMatchObject({ PORT: 8787, BROKER_PORT: 8790 });
  });

  it('covers every variable workers/env.ts declares', () => {
    const declared = [...readFileSync('workers/env.ts', 'utf8').matchAll(/^ {2}([A-Z][A-Z0-9_]+)\?: string;$/gm)]
      .map((m) => m[1])
      .sort();
    expect(declared.length).toBeGreaterThan(20);
    expect([...WORKER_VARIABLES].sort()).toEqual(declared);
  });

  it('reads every variable of the bindings, ignoring the other bindings', () => {
    const { values, problems } = read({
      LINKS_PER_PLATFORM: '2',
      IDEMPOTENCY_SHARDS: '32',
      STREAM_SHARDS: '4',
      STREAM_FLUSH_MS: '25',
      EDGE_REPLICA_MAX_ROWS: '0',
      API_RATE_LIMIT: '0',
      RATE_LIMIT_WINDOW_SECONDS: '3600',
      ACCESS_LOG_BATCH: '1',
      AUTH_ORG_CLAIM: 'tenant',
      BROKER_URL: 'https://broker.example.com',
      DB: {} as unknown as string,
    });
    expect(problems).toEqual([]);
    expect(values).toMatchObject({
      LINKS_PER_PLATFORM: 2,
      IDEMPOTENCY_SHARDS: 32,
      STREAM_SHARDS: 4,
      STREAM_FLUSH_MS: 25,
      EDGE_REPLICA_MAX_ROWS: 0,
      API_RATE_LIMIT: 0,
      RATE_LIMIT_WINDOW_SECONDS: 3600,
      ACCESS_LOG_BATCH: true,
      AUTH_ORG_CLAIM: 'tenant',
      BROKER_URL: ['https://broker.example.com'],
    });
    expect(values).not.toHaveProperty('DB');
  });

  it('takes object counts (links, ledgers, stream objects) as whole numbers from 1 to 256, else the default', () => {
    for (const name of ['LINKS_PER_PLATFORM', 'IDEMPOTENCY_SHARDS', 'STREAM_SHARDS', 'TOKEN_FAILURE_SHARDS'] as const) {
      expect([value(name, '1'), value(name, '17'), value(name, '256'), value(name, ' 8 ')]).toEqual([1, 17, 256, 8]);
      for (const raw of [undefined, '', '0', '-1', '257', '1.5', 'x', 'Infinity'])
        expect(value(name, raw)).toBe(WORKER_DEFAULTS[name]);
    }
    expect(read({ LINKS_PER_PLATFORM: '257' }).problems).toEqual([
      'LINKS_PER_PLATFORM must be a whole number of objects from 1 to 256, got "257"',
    ]);
  });

  it('takes TOKEN_CLOCK_TOLERANCE_SECONDS as whole seconds from 0 to 300, else 5', () => {
    expect([
      value('TOKEN_CLOCK_TOLERANCE_SECONDS', '0'),
      value('TOKEN_CLOCK_TOLERANCE_SECONDS', ' 30 '),
      value('TOKEN_CLOCK_TOLERANCE_SECONDS', '300'),
    ]).toEqual([0, 30, 300]);
    for (const raw of [undefined, '', '-1', '301', '2.5', '5s'])
      expect(value('TOKEN_CLOCK_TOLERANCE_SECONDS', raw)).toBe(5);
    expect(read({ TOKEN_CLOCK_TOLERANCE_SECONDS: '60s' }).problems).toEqual([
      'TOKEN_CLOCK_TOLERANCE_SECONDS must be a whole number of seconds from 0 to 300, got "60s"',
    ]);
  });

  it('takes EDGE_REPLICA_MAX_ROWS from 0 (replicas off) to 100,000, else 10,000', () => {
    expect([
      value('EDGE_REPLICA_MAX_ROWS', '0'),
      value('EDGE_REPLICA_MAX_ROWS', '1'),
      value('EDGE_REPLICA_MAX_ROWS', ' 250 '),
      value('EDGE_REPLICA_MAX_ROWS', '100000'),
    ]).toEqual([0, 1, 250, 100_000]);
    for (const raw of [undefined, '', '   ', '-1', '100001', '2.5', 'many', 'Infinity', 'NaN'])
      expect(value('EDGE_REPLICA_MAX_ROWS', raw)).toBe(10_000);
  });

  it('takes EDGE_REPLICA_STORED_ROWS from 0 (no storage) to 2,000,000, else 1,000,000', () => {
    expect([
      value('EDGE_REPLICA_STORED_ROWS', '0'),
      value('EDGE_REPLICA_STORED_ROWS', '200000'),
      value('EDGE_REPLICA_STORED_ROWS', '2000000'),
    ]).toEqual([0, 200_000, 2_000_000]);
    for (const raw of [undefined, '', '-1', '2000001', '1e6', 'all'])
      expect(value('EDGE_REPLICA_STORED_ROWS', raw)).toBe(1_000_000);
  });

  it('takes REGISTRY_CACHE_SECONDS and IDEMPOTENCY_RETENTION_HOURS as decimal numbers', () => {
    expect([
      value('REGISTRY_CACHE_SECONDS', '0'),
      value('REGISTRY_CACHE_SECONDS', '2.5'),
      value('REGISTRY_CACHE_SECONDS', '30'),
    ]).toEqual([0, 2.5, 30]);
    for (const raw of ['soon', 'Infinity', '-1', '3601']) expect(value('REGISTRY_CACHE_SECONDS', raw)).toBe(5);
    expect(value('IDEMPOTENCY_RETENTION_HOURS', String(1 / 3600))).toBe(1 / 3600);
    expect(value('IDEMPOTENCY_RETENTION_HOURS', '0.5')).toBe(0.5);
    for (const raw of ['0', '-1', '1e3', '8761']) expect(value('IDEMPOTENCY_RETENTION_HOURS', raw)).toBe(24);
    expect(read({ IDEMPOTENCY_RETENTION_HOURS: '0' }).problems).toEqual([
      'IDEMPOTENCY_RETENTION_HOURS must be a number of hours above 0 and at most 8760 (0.5: half an hour), got "0"',
    ]);
  });

  it("takes the bounds of what a ledger stores: megabytes above 0 to 8192, an answer's bytes from 1000 to 1500000", () => {
    expect([
      value('IDEMPOTENCY_LEDGER_MAX_MB', '0.01'),
      value('IDEMPOTENCY_LEDGER_MAX_MB', '256'),
      value('IDEMPOTENCY_LEDGER_MAX_MB', '8192'),
    ]).toEqual([0.01, 256, 8192]);
    for (const raw of [undefined, '0', '-1', '8193', '1e3', '1GB'])
      expect(value('IDEMPOTENCY_LEDGER_MAX_MB', raw)).toBe(4096);
    expect(read({ IDEMPOTENCY_LEDGER_MAX_MB: '0' }).problems).toEqual([
      'IDEMPOTENCY_LEDGER_MAX_MB must be a number of megabytes above 0 and at most 8192 (0.5: half a megabyte), got "0"',
    ]);
    expect([
      value('IDEMPOTENCY_ANSWER_MAX_BYTES', '1000'),
      value('IDEMPOTENCY_ANSWER_MAX_BYTES', '65536'),
      value('IDEMPOTENCY_ANSWER_MAX_BYTES', '1500000'),
    ]).toEqual([1000, 65_536, 1_500_000]);
    for (const raw of [undefined, '999', '1500001', '2.5', '64k'])
      expect(value('IDEMPOTENCY_ANSWER_MAX_BYTES', raw)).toBe(1_500_000);
    expect(read({ IDEMPOTENCY_ANSWER_MAX_BYTES: '2000000' }).problems).toEqual([
      'IDEMPOTENCY_ANSWER_MAX_BYTES must be a whole number of bytes from 1000 to 1500000, got "2000000"',
    ]);
  });

  it('takes the flush interval from 1 to 1000 ms, and the access-log switch as 1 or 0', () => {
    expect(value('STREAM_FLUSH_MS', '25')).toBe(25);
    for (const raw of [undefined, '0', '2.5', '100000']) expect(value('STREAM_FLUSH_MS', raw)).toBe(10);
    expect([value('ACCESS_LOG_BATCH', '1'), value('ACCESS_LOG_BATCH', '0'), value('ACCESS_LOG_BATCH', 'yes')]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it("serves a wrong value's fallback and names every problem in the sentence npm start refuses it with", () => {
    const env = {
      TOKEN_RATE_LIMIT: '30k',
      RATE_LIMIT_WINDOW_SECONDS: '0',
      PUBLIC_URL: 'gateway.example.com',
      BROKER_URL: 'ws://broker',
    };
    const { values, problems } = read(env);
    expect(values).toMatchObject({
      TOKEN_RATE_LIMIT: 30,
      RATE_LIMIT_WINDOW_SECONDS: 60,
      PUBLIC_URL: 'http://127.0.0.1:8787',
      BROKER_URL: ['http://127.0.0.1:8790'],
    });
    expect(problems).toEqual([
      'PUBLIC_URL must be an absolute http(s) URL, got "gateway.example.com"',
      'TOKEN_RATE_LIMIT must be a whole number of requests from 0 to 1000000000, got "30k"',
      'RATE_LIMIT_WINDOW_SECONDS must be a whole number of seconds from 1 to 86400, got "0"',
      'BROKER_URL must be absolute http(s) URLs separated by commas; not one: ws://broker, got "ws://broker"',
    ]);
    const launcher = problems.filter((p) => !p.startsWith('BROKER_URL'));
    expect(problems.filter((p) => p.startsWith('BROKER_URL'))).toHaveLength(1);
    expect(
      launcher.every((p) =>
        (() => {
          try {
            readEnvironment(startEnvironment, env);
          } catch (e) {
            return (e as EnvironmentError).problems.includes(p);
          }
          return false;
        })(),
      ),
    ).toBe(true);
  });

  it('takes BROKER_URL as one broker or an ordered list of them, separated by commas or spaces', () => {
    expect(value('BROKER_URL', 'https://a.example.com')).toEqual(['https://a.example.com']);
    expect(value('BROKER_URL', ' https://b.example.com, http://10.0.0.1:8790 ,https://c.example.com')).toEqual([
      'https://b.example.com',
      'http://10.0.0.1:8790',
      'https://c.example.com',
    ]);
    expect(read({ BROKER_URL: 'https://a.example.com,https://a.example.com/' }).problems).toEqual([
      'BROKER_URL names https://a.example.com/ twice, got "https://a.example.com,https://a.example.com/"',
    ]);
    expect(
      read({ BROKER_URL: Array.from({ length: 9 }, (_, i) => `https://b${i}.example.com`).join(',') }).problems[0],
    ).toMatch(/^BROKER_URL must name at most 8 broker URLs/);
    expect(value('BROKER_URL', 'https://a.example.com,ftp://b')).toEqual(['http://127.0.0.1:8790']);
  });

  it('takes BROKER_FAILBACK_SECONDS from 0 to 3600 seconds, decimals allowed, else 10', () => {
    expect([
      value('BROKER_FAILBACK_SECONDS', '0'),
      value('BROKER_FAILBACK_SECONDS', '2.5'),
      value('BROKER_FAILBACK_SECONDS', '3600'),
    ]).toEqual([0, 2.5, 3600]);
    for (const raw of [undefined, '-1', '3601', 'soon']) expect(value('BROKER_FAILBACK_SECONDS', raw)).toBe(10);
  });

  it('takes REGION_BROKER_ROUTES as JSON of region to broker routes, else none, naming the rule', () => {
    expect(value('REGION_BROKER_ROUTES', '{"oc":{"http://b:8790":"http://r:9102"}}')).toEqual({
      oc: { 'http://b:8790': 'http://r:9102' },
    });
    expect(value('REGION_BROKER_ROUTES', undefined)).toEqual({});
    expect(read({ REGION_BROKER_ROUTES: '{"x":{}}' }).problems).toEqual([
      'REGION_BROKER_ROUTES names region x: regions are wnam, enam, sam, weur, eeur, apac, oc, afr, me, got "{\\"x\\":{}}"',
    ]);
  });

  it('takes HOME_REGION as one of the nine location hints, else weur, naming the rule', () => {
    expect(value('HOME_REGION', 'oc')).toBe('oc');
    expect(value('HOME_REGION', undefined)).toBe('weur');
    expect(read({ HOME_REGION: 'eu' }).problems).toEqual([
      'HOME_REGION must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me, got "eu"',
    ]);
  });

  it('takes EDGE_REGION as one of the nine location hints, else weur, naming the rule', () => {
    expect([value('EDGE_REGION', 'apac'), value('EDGE_REGION', 'me')]).toEqual(['apac', 'me']);
    for (const raw of [undefined, 'APAC', 'eu', '']) expect(value('EDGE_REGION', raw)).toBe('weur');
    expect(read({ EDGE_REGION: 'mars' }).problems).toEqual([
      'EDGE_REGION must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me, got "mars"',
    ]);
  });

  it('takes AUTH_JWKS_TIMEOUT_MS as whole milliseconds from 1 to 60000, else 5000', () => {
    expect([value('AUTH_JWKS_TIMEOUT_MS', '1'), value('AUTH_JWKS_TIMEOUT_MS', '60000')]).toEqual([1, 60_000]);
    for (const raw of [undefined, '0', '60001', '2.5', 'soon']) expect(value('AUTH_JWKS_TIMEOUT_MS', raw)).toBe(5000);
  });

  it('keeps the origins of a CORS_ORIGINS with entries that are not, and names those', () => {
    const { values, problems } = read({ CORS_ORIGINS: 'https://a.example.com https://b.example.com/path' });
    expect(values.CORS_ORIGINS).toBe('https://a.example.com https://b.example.com/path');
    expect(problems).toEqual([
      expect.stringMatching(/^CORS_ORIGINS must be \* or origins .*not an origin: https:\/\/b\.example\.com\/path/),
    ]);
  });

  it('names the rules across variables, leaving the values as given for the edge to apply them', () => {
    const { values, problems } = read({
      AUTH_ISSUER: 'https://id.example.com/',
      TOKEN_TTL_SECONDS: '7200',
      TOKEN_MAX_LIFETIME_SECONDS: '3600',
    });
    expect(values).toMatchObject({
      AUTH_ISSUER: 'https://id.example.com/',
      AUTH_JWKS_URL: undefined,
      TOKEN_TTL_SECONDS: 7200,
      TOKEN_MAX_LIFETIME_SECONDS: 3600,
    });
    expect(problems).toEqual([
      expect.stringMatching(/^AUTH_JWKS_URL must be set when AUTH_ISSUER is/),
      expect.stringMatching(/^TOKEN_TTL_SECONDS must not exceed TOKEN_MAX_LIFETIME_SECONDS \(3600\)/),
    ]);
  });

  it('takes the signing key as given, for the edge to import, while the launcher checks its shape; never quoting it', () => {
    const key = 'not-json-but-secret-material';
    expect(read({ AUTH_SIGNING_KEY: key })).toEqual({
      values: expect.objectContaining({ AUTH_SIGNING_KEY: key }),
      problems: [],
    });
    expect(problems(edgeEnvironment, { AUTH_SIGNING_KEY: key })).toHaveLength(1);
    expect(read({ BROKER_SECRET: ' ' }).values.BROKER_SECRET).toBeUndefined();
  });
});

describe('environment of the broker and the simulator', () => {
  it('requires the broker secret and names it', () => {
    expect(problems(brokerEnvironment, {})).toEqual([expect.stringMatching(/^BROKER_SECRET is required/)]);
    expect(readEnvironment(brokerEnvironment, { BROKER_SECRET: 's' })).toMatchObject({
      BROKER_PORT: 8790,
      BROKER_HOST: '127.0.0.1',
      BROKER_ID: 'local',
    });
  });

  it('bounds a drain at 130 s by default (the late-answer window plus 10 s), from 1 to 3600 s', () => {
    expect(readEnvironment(brokerEnvironment, { BROKER_SECRET: 's' }).BROKER_DRAIN_SECONDS).toBe(130);
    expect(
      readEnvironment(brokerEnvironment, { BROKER_SECRET: 's', BROKER_DRAIN_SECONDS: '3600' }).BROKER_DRAIN_SECONDS,
    ).toBe(3600);
    expect(problems(brokerEnvironment, { BROKER_SECRET: 's', BROKER_DRAIN_SECONDS: '3601' })).toEqual([
      'BROKER_DRAIN_SECONDS must be a whole number of seconds from 1 to 3600, got "3601"',
    ]);
  });

  it('bounds one answer at 16 MiB by default, from 1 KiB to 31 MiB (below the 32 MiB one link message may take)', () => {
    expect(readEnvironment(brokerEnvironment, { BROKER_SECRET: 's' }).BROKER_ANSWER_MAX_BYTES).toBe(16 * 1024 * 1024);
    expect(
      readEnvironment(brokerEnvironment, { BROKER_SECRET: 's', BROKER_ANSWER_MAX_BYTES: '65536' })
        .BROKER_ANSWER_MAX_BYTES,
    ).toBe(65536);
    expect(
      problems(brokerEnvironment, { BROKER_SECRET: 's', BROKER_ANSWER_MAX_BYTES: String(32 * 1024 * 1024) }),
    ).toEqual([
      'BROKER_ANSWER_MAX_BYTES must be a whole number of bytes from 1024 to 32505856 (31 MiB), got "33554432"',
    ]);
  });

  it('bounds failed password checks at 5 per 60 s by default, 0 turning the bound off, and refuses other values by name', () => {
    expect(readEnvironment(brokerEnvironment, { BROKER_SECRET: 's' })).toMatchObject({
      PASSWORD_CHECK_FAILURES: 5,
      PASSWORD_CHECK_WINDOW_SECONDS: 60,
    });
    expect(
      readEnvironment(brokerEnvironment, {
        BROKER_SECRET: 's',
        PASSWORD_CHECK_FAILURES: '0',
        PASSWORD_CHECK_WINDOW_SECONDS: '900',
      }),
    ).toMatchObject({ PASSWORD_CHECK_FAILURES: 0, PASSWORD_CHECK_WINDOW_SECONDS: 900 });
    expect(
      problems(brokerEnvironment, {
        BROKER_SECRET: 's',
        PASSWORD_CHECK_FAILURES: '-1',
        PASSWORD_CHECK_WINDOW_SECONDS: '0',
      }),
    ).toEqual([
      'PASSWORD_CHECK_FAILURES must be a whole number of checks from 0 to 1000000, got "-1"',
      'PASSWORD_CHECK_WINDOW_SECONDS must be a whole number of seconds from 1 to 86400, got "0"',
    ]);
  });

  it('wants a TLS certificate and its key together', () => {
    expect(problems(brokerEnvironment, { BROKER_SECRET: 's', BROKER_TLS_CERT: '/c.pem' })).toEqual([
      expect.stringMatching(/^BROKER_TLS_KEY must be set when BROKER_TLS_CERT is/),
    ]);
    expect(problems(brokerEnvironment, { BROKER_SECRET: 's', BROKER_TLS_KEY: '/k.pem' })).toEqual([
      expect.stringMatching(/^BROKER_TLS_CERT must be set when BROKER_TLS_KEY is/),
    ]);
  });

  it("reads the simulator's allowed peers as addresses and ranges, loopback only by default, and a control token", () => {
    const defaults = readEnvironment(simEnvironment, {});
    expect([defaults.SIM_MANAGER_ALLOW, defaults.SIM_CONTROL_TOKEN]).toStrictEqual([[], undefined]);
    expect(
      readEnvironment(simEnvironment, { SIM_MANAGER_ALLOW: '172.29.79.0/24, 10.0.0.5 ::ffff:192.168.1.9,fd00::/8 ::1' })
        .SIM_MANAGER_ALLOW,
    ).toStrictEqual([
      { family: 'ipv4', address: '172.29.79.0', prefix: 24 },
      { family: 'ipv4', address: '10.0.0.5', prefix: 32 },
      { family: 'ipv4', address: '192.168.1.9', prefix: 32 },
      { family: 'ipv6', address: 'fd00::', prefix: 8 },
      { family: 'ipv6', address: '::1', prefix: 128 },
    ]);
    expect(
      problems(simEnvironment, {
        SIM_MANAGER_ALLOW: 'sim, 10.0.0.256, 10.0.0.0/33, fd00::/129, 10.0.0.0/, fe80::1%eth0',
      }),
    ).toEqual([
      'SIM_MANAGER_ALLOW must be IP addresses or CIDR ranges (10.0.0.5, 172.29.79.0/24, fd00::/8) separated by commas; not one: sim 10.0.0.256 10.0.0.0/33 fd00::/129 10.0.0.0/ fe80::1%eth0, got "sim, 10.0.0.256, 10.0.0.0/33, fd00::/129, 10.0.0.0/, fe80::1%eth0"',
    ]);
    expect(readEnvironment(simEnvironment, { SIM_CONTROL_TOKEN: 'a-control-token-of-length' }).SIM_CONTROL_TOKEN).toBe(
      'a-control-token-of-length',
    );
    // A secret: refused without being quoted.
    expect(problems(simEnvironment, { SIM_CONTROL_TOKEN: 'tooShortToken' })).toEqual([
      'SIM_CONTROL_TOKEN must be at least 16 characters',
    ]);
  });

  it('refuses a wrong simulator port or seed by name', () => {
    expect(problems(simEnvironment, { SIM_PORT: 'x', SIM_SEED: 'forty-two' })).toEqual([
      'SIM_PORT must be a port number from 0 to 65535 (0: any free port), got "x"',
      'SIM_SEED must be an integer from 0 to 4294967295, got "forty-two"',
    ]);
  });
});

describe('listen failures', () => {
  it('names the variable that chose a taken port', () => {
    const inUse = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
    expect(listenProblem(inUse, { port: 'BROKER_PORT' }, 8790)).toBe(
      'port 8790 on 127.0.0.1 is already in use (another copy running, or npm start?): set BROKER_PORT to a free port, or 0 for any',
    );
    expect(
      listenProblem(
        Object.assign(new Error('x'), { code: 'EADDRNOTAVAIL' }),
        { port: 'SIM_PORT', host: 'SIM_HOST' },
        1,
        '10.9.9.9',
      ),
    ).toMatch(/^10\.9\.9\.9 is not an address of this machine: set SIM_HOST/);
    expect(listenProblem(new Error('other'), { port: 'PORT' }, 1)).toBeNull();
  });
});

describe('Node.js version', () => {
  it('is the version package.json requires', () => {
    const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe(`>=${REQUIRED_NODE}`);
  });

  it('refuses older versions in one line and accepts newer ones', () => {
    expect(nodeVersionProblem('v18.20.4')).toBe(
      'Node.js v18.20.4 is too old: this project needs Node.js 20.19 or newer (engines.node in package.json); install a newer Node.js and run again',
    );
    expect(nodeVersionProblem('v20.18.3')).toMatch(/too old/);
    expect(nodeVersionProblem('v20.19.0')).toBeNull();
    expect(nodeVersionProblem('v20.20.2')).toBeNull();
    expect(nodeVersionProblem('v22.1.0')).toBeNull();
    expect(nodeVersionProblem(process.version)).toBeNull();
  });
});

describe('environment of npm run terminal and of the launcher library', () => {
  it('serves the terminal on 8788 for the gateway on 8787 unless told otherwise', () => {
    expect(readEnvironment(terminalEnvironment, {})).toEqual({
      TERMINAL_PORT: 8788,
      GATEWAY_URL: 'http://127.0.0.1:8787',
    });
    expect(
      readEnvironment(terminalEnvironment, { TERMINAL_PORT: '0', GATEWAY_URL: 'https://gateway.example.com' }),
    ).toEqual({ TERMINAL_PORT: 0, GATEWAY_URL: 'https://gateway.example.com' });
  });

  it('names a terminal port or gateway that is not one, instead of serving on NaN', () => {
    expect(() => readEnvironment(terminalEnvironment, { TERMINAL_PORT: 'abc', GATEWAY_URL: 'ftp://x' })).toThrow(
      new EnvironmentError([
        'TERMINAL_PORT must be a port number from 0 to 65535 (0: any free port), got "abc"',
        'GATEWAY_URL must be an absolute http(s) URL, got "ftp://x"',
      ]),
    );
  });

  it('runs the broker in the calling process only when STACK_BROKER_IN_PROCESS is 1', () => {
    expect(readEnvironment(stackEnvironment, {}).STACK_BROKER_IN_PROCESS).toBe(false);
    expect(readEnvironment(stackEnvironment, { STACK_BROKER_IN_PROCESS: '1' }).STACK_BROKER_IN_PROCESS).toBe(true);
    expect(() => readEnvironment(stackEnvironment, { STACK_BROKER_IN_PROCESS: 'yes' })).toThrow(
      'STACK_BROKER_IN_PROCESS must be 1',
    );
  });
});
