/**
 * Test support for the edge: runs the real worker in local workerd (launcher/edge.ts) with an in-memory registry,
 * seeds organizations, platforms and clients, and mints tokens with the edge's own signing key.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { startEdge, type Edge, type EdgeOptions } from '../../launcher/edge.js';
import { hashSecret } from '../../shared/secrets.js';
import { fileURLToPath } from 'node:url';
import { WORKER_DEFAULTS } from '../../shared/environment.js';
import type { Placement } from '../../workers/regions/placement.js';

export const ORG_A = '0a000000-0000-4000-8000-00000000000a';
export const ORG_B = '0b000000-0000-4000-8000-00000000000b';
export const PF4_A = 'a4000000-0000-4000-8000-0000000000a4';
export const PF5_A = 'a5000000-0000-4000-8000-0000000000a5';
export const PF4_B = 'b4000000-0000-4000-8000-0000000000b4';
export const AUDIENCE = 'webapi';
/**
 * Where the gateway objects of a local edge and of a testing worker are (docs/regions.md): neither sets EDGE_REGION or
 * HOME_REGION, so every caller's region and every platform's home is the default (weur), and no platform is pinned to
 * a jurisdiction. Their objects are named `…@weur…`.
 */
export const LOCAL_HOME: Placement = { region: WORKER_DEFAULTS.HOME_REGION, jurisdiction: null };
/** Every scope a client can hold: what test tokens carry unless a test says otherwise. */
export const ALL_SCOPES = 'webapi webapi.write webapi.admin';

export interface TestEdge extends Edge {
  issuer: string;
  privateJwk: JWK;
  /**
   * Signs a token with the edge's key; claims override the defaults (client `client-a` of ORG_A, every scope). The
   * token's client is registered (every scope) unless it already is, since the edge refuses tokens of unknown clients.
   */
  token(claims?: Record<string, unknown>, options?: { expiresIn?: string | number; alg?: string }): Promise<string>;
  /**
   * Registers (or re-keys) a client; scopes default to the registry's default, `webapi` alone. The secret is hashed
   * with the production iteration count unless `iterations` says otherwise: the edge checks a secret with the count
   * stored beside it, so a test of the token endpoint's counting rather than its hashing may store a cheaper hash.
   */
  seedClient(
    clientId: string,
    secret: string,
    organizationId: string,
    scopes?: string,
    options?: { iterations?: number },
  ): Promise<void>;
}

export async function generateSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: `test-${Math.random().toString(36).slice(2, 10)}`, alg: 'ES256', use: 'sig' };
}

/** Edges running in this test process under mutation testing: the ones whose coverage test/mutation/setup.ts asks. */
const mutationEdges = new Set<URL>();
export const liveMutationEdges = (): URL[] => [...mutationEdges];

/**
 * Under mutation testing (the instrumented code's namespace exists in this process), the worker is built from the
 * coverage-reporting entry and started with this run's active mutant; otherwise nothing changes.
 */
function mutationOptions(): Pick<EdgeOptions, 'entry' | 'prelude'> {
  const prelude = mutationPrelude();
  if (!prelude) return {};
  return { entry: fileURLToPath(new URL('./workers/mutationEntry.ts', import.meta.url)), prelude };
}

/** Under mutation testing, the line put before a worker bundle that makes this run's mutant active in workerd; else ''. */
export function mutationPrelude(): string {
  const ns = (globalThis as { __stryker__?: { activeMutant?: string } }).__stryker__;
  return ns
    ? `globalThis.__stryker__ = { activeMutant: ${JSON.stringify(ns.activeMutant ?? null)} ?? undefined };\n`
    : '';
}

/**
 * Under mutation testing, has test/mutation/setup.ts ask the worker at `url` for its coverage after each test (the
 * worker must answer test/support/workers/mutationCoverage.ts on COVERAGE_PATH); answers the function that stops it.
 */
export function watchMutationCoverage(url: URL): () => void {
  if (!mutationPrelude()) return () => {};
  mutationEdges.add(url);
  return () => {
    mutationEdges.delete(url);
  };
}

export async function startTestEdge(options: EdgeOptions & { seed?: boolean } = {}): Promise<TestEdge> {
  const privateJwk = await generateSigningKey();
  const issuer = 'http://127.0.0.1:8787';
  const mutation = mutationOptions();
  const started = await startEdge({
    ...options,
    ...mutation,
    vars: {
      AUTH_SIGNING_KEY: JSON.stringify(privateJwk),
      PUBLIC_URL: issuer,
      AUTH_AUDIENCE: AUDIENCE,
      BROKER_SECRET: 'test-broker-secret',
      ...options.vars,
    },
  });
  // Both isolates count coverage: the edge worker's and the objects worker's (the gateway objects run there).
  const coverage = [started.url, ...(started.objectsUrl ? [started.objectsUrl] : [])];
  const edge: Edge = mutation.entry
    ? (coverage.forEach((u) => mutationEdges.add(u)),
      {
        ...started,
        close: () => {
          coverage.forEach((u) => mutationEdges.delete(u));
          return started.close();
        },
      })
    : started;
  const db = await edge.db();
  const now = new Date().toISOString();
  if (options.seed !== false) {
    await db.batch([
      db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(ORG_A, 'Org A', now),
      db.prepare('INSERT INTO organizations (id, name, created) VALUES (?, ?, ?)').bind(ORG_B, 'Org B', now),
      db
        .prepare(
          'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .bind(PF4_A, 'A PF4', 'PF4', ORG_A, null, now),
      db
        .prepare(
          'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .bind(PF5_A, 'A PF5', 'PF5', ORG_A, null, now),
      db
        .prepare(
          'INSERT INTO trade_platforms (id, name, type, organization_id, broker_url, created) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .bind(PF4_B, 'B PF4', 'PF4', ORG_B, null, now),
    ]);
  }
  const { d: _d, ...publicPart } = privateJwk;
  void publicPart;
  const key = await crypto.subtle.importKey(
    'jwk',
    privateJwk as JsonWebKey,
    { name: 'ECDSA', namedCurve: 'P-256' },
    false,
    ['sign'],
  );
  return {
    ...edge,
    issuer,
    privateJwk,
    async token(claims = {}, opts = {}) {
      const body: Record<string, unknown> = { scope: ALL_SCOPES, client_id: 'client-a', org: ORG_A, ...claims };
      if (typeof body.client_id === 'string' && typeof body.org === 'string' && /^[0-9a-f-]{36}$/i.test(body.org)) {
        await db
          .prepare(`INSERT OR IGNORE INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, scopes, created)
          VALUES (?, ?, ?, 'unused', 'unused', 1, ?, ?)`)
          .bind(body.client_id, body.org.toLowerCase(), body.client_id, ALL_SCOPES, now)
          .run();
      }
      return new SignJWT(body)
        .setProtectedHeader({ alg: opts.alg ?? 'ES256', kid: privateJwk.kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setNotBefore('0s')
        .setExpirationTime(opts.expiresIn ?? '10m')
        .sign(key);
    },
    async seedClient(clientId, secret, organizationId, scopes = 'webapi', seedOptions = {}) {
      const h = await hashSecret(secret, seedOptions.iterations);
      await db
        .prepare(`INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, scopes, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (client_id) DO UPDATE SET organization_id = excluded.organization_id, secret_hash = excluded.secret_hash,
          secret_salt = excluded.secret_salt, iterations = excluded.iterations, scopes = excluded.scopes`)
        .bind(clientId, organizationId, clientId, h.hash, h.salt, h.iterations, scopes, now)
        .run();
    },
  };
}
