/**
 * A typed client of the gateway: the generated types (./api.d.ts, `npm run gen:client`) with openapi-fetch. Paths,
 * path and query parameters, headers, request bodies and answers are all checked by the compiler; a typo in a path
 * or a field is a compile error, not a 404.
 *
 *   npx tsx clients/typescript/example.ts [gateway URL] [client id] [client secret]
 *
 * With `npm start` running it needs no arguments (the demo client on http://127.0.0.1:8787). test/e2e/client.test.ts
 * compiles this file and runs `example()` against the whole stack.
 */
import createClient from 'openapi-fetch';
import { pathToFileURL } from 'node:url';
import type { components, paths } from './api.js';

export type Gateway = ReturnType<typeof createClient<paths>>;
export type PF4User = components['schemas']['PF4User'];
export type TradePlatform = components['schemas']['TradePlatform'];

/** An access token from the gateway's client-credentials endpoint (RFC 6749 §4.4, client_secret_basic). */
export async function fetchToken(baseUrl: string, clientId: string, clientSecret: string): Promise<string> {
  const anonymous = createClient<paths>({ baseUrl });
  const { data, error, response } = await anonymous.POST('/connect/token', {
    headers: {
      authorization: `Basic ${btoa(`${clientId}:${clientSecret}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: { grant_type: 'client_credentials', scope: 'webapi' },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
  });
  if (!data?.access_token) throw new Error(`token request refused (${response.status}): ${JSON.stringify(error)}`);
  return data.access_token;
}

/** A client that sends the token with every call. */
export function gateway(baseUrl: string, token: string): Gateway {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
}

/** A v2 answer's data, or an error carrying the envelope's error code (v2 answers HTTP 200 either way). */
function dataOf<T>(
  envelope: { data?: T | null; error?: components['schemas']['ApiError'] | null } | undefined,
  what: string,
): T {
  if (!envelope) throw new Error(`${what}: no answer`);
  if (envelope.error) throw new Error(`${what}: ${envelope.error.code} ${envelope.error.message ?? ''}`);
  if (envelope.data === null || envelope.data === undefined) throw new Error(`${what}: no data`);
  return envelope.data;
}

export interface ExampleResult {
  platform: TradePlatform;
  /** A v2 read: the first accounts of the PF4 platform, and whether more follow. */
  users: PF4User[];
  hasMore: boolean;
  /** A v2 write under an Idempotency-Key: the account it created, and the same call repeated (replayed, not re-sent). */
  created: PF4User;
  replayed: boolean;
  /** The budget the gateway applied to the read, from X-Request-Timeout-Applied. */
  timeoutApplied: number;
}

/** Gets a token, finds the caller's PF4 platform, reads three accounts (v2) and creates one (v2, idempotent). */
export async function example(baseUrl: string, clientId: string, clientSecret: string): Promise<ExampleResult> {
  const api = gateway(baseUrl, await fetchToken(baseUrl, clientId, clientSecret));

  const platforms = await api.GET('/api/TradePlatforms');
  const platform = platforms.data?.find((p) => p.type === 'PF4');
  if (!platform) throw new Error(`no PF4 platform for this client (${platforms.response.status})`);
  const tradePlatform = platform.id;

  const read = await api.GET('/api/v2/PF4/{tradePlatform}/UsersRequest', {
    params: { path: { tradePlatform }, query: { limit: 3 }, header: { 'X-Request-Timeout': 10 } },
  });
  const users = dataOf(read.data, 'UsersRequest');

  const key = `typed-client-${crypto.randomUUID()}`;
  const create = () =>
    api.POST('/api/v2/PF4/{tradePlatform}/UserRecordNew', {
      params: { path: { tradePlatform }, header: { 'Idempotency-Key': key } },
      body: { login: 0, group: 'demo\\pro', name: 'Typed Client', email: 'typed.client@example.com', leverage: 100 },
    });
  const created = dataOf((await create()).data, 'UserRecordNew');
  const again = await create();

  return {
    platform,
    users,
    hasMore: read.data?.meta?.paging?.hasMore ?? false,
    created,
    replayed:
      again.response.headers.get('Idempotency-Replayed') === 'true' &&
      dataOf(again.data, 'UserRecordNew').login === created.login,
    timeoutApplied: Number(read.response.headers.get('X-Request-Timeout-Applied')),
  };
}

// Run directly: print what the example did.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [baseUrl = 'http://127.0.0.1:8787', clientId = 'demo', clientSecret = 'demo-secret'] = process.argv.slice(2);
  const result = await example(baseUrl, clientId, clientSecret);
  console.log(`platform ${result.platform.name} (${result.platform.id})`);
  for (const user of result.users)
    console.log(`  account ${user.login} ${user.name} ${user.group} balance ${user.balance}`);
  console.log(
    `created account ${result.created.login} (${result.created.group}); repeated with the same key: replayed ${result.replayed}`,
  );
}
