/**
 * The token endpoint cannot be turned against a client, through the real worker: failed authentications are counted
 * per source address (CF-Connecting-IP, believed behind Cloudflare's front, which Miniflare's own entry stands in for
 * here) and lock out only that source, never the secret's holder elsewhere; the local socket is one source whatever
 * header a caller sends; invented client ids spend no client's counter and no verification; and once the edge's
 * verification budget is spent, every token request is refused alike and the edge says so once in its log. Failures
 * from many addresses are counted in TOKEN_FAILURE_SHARDS objects, each address still on its own limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { ORG_A, startTestEdge, type TestEdge } from '../support/edge.js';
import type { Grant, Limit } from '../../workers/limits/quota.js';
import { objectCall } from '../../launcher/edge.js';
import { shardName, shardOf } from '../../workers/limits/counterShards.js';
import { BROKER_SECRET } from './gatewayFakeBroker.js';

/** An hour's window, so a test seldom has to wait for room in one; the counts are the defaults. */
const WINDOW_SECONDS = 3600;
const WINDOW_MS = WINDOW_SECONDS * 1000;
const WINDOW = { RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS) };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const FAILED = { error: 'invalid_client', error_description: 'client authentication failed' };
/** The clients' secrets are hashed cheaply: what is counted here is checks, not what one costs (auth.test.ts). */
const CHEAP = { iterations: 1_000 };
/** TOKEN_FAILURE_LIMIT's default, which the file's edge keeps. */
const DEFAULT_FAILURE_LIMIT = 30;
let edge: TestEdge;

beforeAll(async () => {
  // The default limits: 30 failures per source, 30 tokens per client, 300 verifications, per window.
  edge = await startTestEdge({ vars: WINDOW });
  await edge.seedClient('holder', 'holder-secret', ORG_A, undefined, CHEAP);
  await edge.seedClient('off', 'off-secret', ORG_A, undefined, CHEAP);
  await (await edge.db()).prepare('UPDATE api_clients SET disabled = 1 WHERE client_id = ?').bind('off').run();
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

const form = (clientId: string, secret: string) =>
  new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });

/** A token request that came through the front from `address` (Miniflare's entry sets `request.cf`). */
const fromAddress = async (target: TestEdge, address: string, clientId: string, secret: string) => {
  const res = await target.miniflare.dispatchFetch(new URL('/connect/token', target.url), {
    method: 'POST',
    headers: { ...FORM, 'CF-Connecting-IP': address },
    body: form(clientId, secret).toString(),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Record<string, unknown>,
  };
};

/** A token request on the local socket, with whatever CF-Connecting-IP the caller chooses to send. */
const onSocket = async (target: TestEdge, clientId: string, secret: string, spoofed?: string) => {
  const res = await fetch(new URL('/connect/token', target.url), {
    method: 'POST',
    headers: { ...FORM, ...(spoofed ? { 'CF-Connecting-IP': spoofed } : {}) },
    body: form(clientId, secret),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Record<string, unknown>,
  };
};

/** Reads a rate-limit counter (spending nothing): what its window has left. */
async function counterLeft(target: TestEdge, key: string, limit: number): Promise<number> {
  return (
    await objectCall<Grant>(target.miniflare, 'RATE_LIMITER', key, 'take', 0, {
      limit,
      windowMs: WINDOW_MS,
    } satisfies Limit)
  ).left;
}

/** The object that counts a source's failures: one of TOKEN_FAILURE_SHARDS, picked under the edge's broker secret. */
const failureShard = async (source: string, shards: number) =>
  shardName('token-fail', await shardOf(BROKER_SECRET, `token-fail:${source}`, shards));

/** Reads what a source's failure window has left (spending nothing), from the object that counts it. */
async function failuresLeft(target: TestEdge, source: string, limit: number, shards = 16): Promise<number> {
  const grant = await objectCall<Grant>(
    target.miniflare,
    'RATE_LIMITER',
    await failureShard(source, shards),
    'take',
    0,
    { limit, windowMs: WINDOW_MS } satisfies Limit,
    `token-fail:${source}`,
  );
  return grant.left;
}

/** Windows are aligned to multiples of their length: wait for the next one unless `needMs` is left of this one. */
async function windowWithRoom(needMs = 15_000) {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 100));
}

const tooManyFailures = (retryAfter: string | null) => ({
  error: 'too_many_requests',
  error_description: `too many failed token requests from this address; retry after ${retryAfter} s`,
});

describe('failed token requests per source', () => {
  it('lets 31 wrong secrets from one address lock out only that address: the right secret elsewhere still gets a token', async () => {
    await windowWithRoom();
    const attacker = '203.0.113.7';
    for (let i = 0; i < 30; i++)
      expect(await fromAddress(edge, attacker, 'holder', `guess-${i}`)).toMatchObject({ status: 401, body: FAILED });
    const refused = await fromAddress(edge, attacker, 'holder', 'guess-30');
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(refused.body).toEqual(tooManyFailures(refused.retryAfter));
    // The attacker's address is refused whatever it sends, the right secret and unknown ids included.
    expect((await fromAddress(edge, attacker, 'holder', 'holder-secret')).body.error).toBe('too_many_requests');
    expect((await fromAddress(edge, attacker, 'nobody', 'x')).body.error).toBe('too_many_requests');

    // The holder, elsewhere, is untouched: from another address and from the local socket.
    const elsewhere = await fromAddress(edge, '198.51.100.9', 'holder', 'holder-secret');
    expect(elsewhere.status).toBe(200);
    expect(decodeJwt(elsewhere.body.access_token as string)).toMatchObject({ client_id: 'holder', org: ORG_A });
    expect((await onSocket(edge, 'holder', 'holder-secret')).status).toBe(200);
    // Two tokens spent of the holder's 30; the wrong secrets spent none of them.
    expect(await counterLeft(edge, 'token:holder', 30)).toBe(28);
  }, 30_000);

  it('counts an IPv6 caller by its /64: another address of the same network is the same source', async () => {
    await windowWithRoom();
    for (let i = 0; i < 30; i++)
      expect((await fromAddress(edge, `2001:db8:aa:1::${(i + 1).toString(16)}`, 'nobody', 'x')).status).toBe(401);
    expect((await fromAddress(edge, '2001:db8:aa:1:ffff::1', 'holder', 'holder-secret')).status).toBe(429);
    expect((await fromAddress(edge, '2001:db8:aa:2::1', 'holder', 'holder-secret')).status).toBe(200);
  }, 30_000);

  it('spends no counter of an invented client id, and none of the verification budget', async () => {
    await windowWithRoom();
    const source = '192.0.2.44';
    const verificationsBefore = await counterLeft(edge, 'token-verify:all', 300);
    const invented = Array.from({ length: 20 }, (_, i) => `invented-${i}-${Math.random().toString(36).slice(2)}`);
    for (const id of invented)
      expect(await fromAddress(edge, source, id, 'guess')).toMatchObject({ status: 401, body: FAILED });
    for (const id of invented) expect(await counterLeft(edge, `token:${id}`, 30)).toBe(30);
    expect(await counterLeft(edge, 'token-verify:all', 300)).toBe(verificationsBefore);
    // What they spent is their source's failure budget.
    expect(await failuresLeft(edge, source, 30)).toBe(10);
  }, 30_000);

  it('treats every caller of the local socket as one source, whatever CF-Connecting-IP it sends', async () => {
    // On the file's edge, last of the cases that use its socket: the socket's source ends this case locked out.
    await windowWithRoom();
    for (let i = 0; i < DEFAULT_FAILURE_LIMIT; i++)
      expect((await onSocket(edge, 'holder', 'wrong', `203.0.113.${i + 1}`)).status).toBe(401);
    const refused = await onSocket(edge, 'holder', 'holder-secret', '198.51.100.77');
    expect([refused.status, refused.body]).toEqual([429, tooManyFailures(refused.retryAfter)]);
    expect((await onSocket(edge, 'holder', 'holder-secret')).status).toBe(429);
    // Through the front, the holder's own address is its own source.
    expect((await fromAddress(edge, '198.51.100.77', 'holder', 'holder-secret')).status).toBe(200);
  }, 60_000);
});

describe('failure counters of many addresses', () => {
  it('counts failures from ever new addresses in TOKEN_FAILURE_SHARDS objects, each address still limited on its own', async () => {
    const SHARDS = 4;
    const LIMIT = 3;
    const sharded = await startTestEdge({
      vars: { ...WINDOW, TOKEN_FAILURE_LIMIT: String(LIMIT), TOKEN_FAILURE_SHARDS: String(SHARDS) },
    });
    try {
      await sharded.seedClient('holder', 'holder-secret', ORG_A, undefined, CHEAP);
      await windowWithRoom(30_000);
      // 60 addresses, one failure each (an invented id, or the holder with a wrong secret), 8 at a time.
      const addresses = Array.from({ length: 60 }, (_, i) => `198.18.${i >> 4}.${i & 15}`);
      for (let i = 0; i < addresses.length; i += 8) {
        const answers = await Promise.all(
          addresses.slice(i, i + 8).map((a, j) => fromAddress(sharded, a, j % 2 ? 'holder' : `invented-${a}`, 'wrong')),
        );
        for (const answer of answers) expect(answer).toMatchObject({ status: 401, body: FAILED });
      }
      // No address has an object of its own: each is counted, once, in one of the four.
      for (const a of addresses)
        expect(await objectCall(sharded.miniflare, 'RATE_LIMITER', `token-fail:${a}`, 'saved'), a).toBeNull();
      const counted = await Promise.all(
        Array.from({ length: SHARDS }, (_, n) =>
          objectCall<Record<string, number>>(sharded.miniflare, 'RATE_LIMITER', shardName('token-fail', n), 'counted'),
        ),
      );
      const all = Object.assign({}, ...counted) as Record<string, number>;
      expect(Object.keys(all).sort()).toEqual(addresses.map((a) => `token-fail:${a}`).sort());
      expect(new Set(Object.values(all))).toEqual(new Set([1]));
      expect(counted.reduce((sum, shard) => sum + Object.keys(shard).length, 0)).toBe(addresses.length);

      // One address spends its limit and is refused, the right secret included; another counted by the same object is not.
      const [spender] = addresses;
      const shard = counted.findIndex((c) => `token-fail:${spender}` in c);
      expect(shardName('token-fail', shard)).toBe(await failureShard(spender, SHARDS));
      const neighbour = Object.keys(counted[shard])
        .map((k) => k.slice('token-fail:'.length))
        .find((a) => a !== spender)!;
      expect(neighbour).toBeDefined();
      for (let i = 1; i < LIMIT; i++)
        expect(await fromAddress(sharded, spender, 'holder', `guess-${i}`)).toMatchObject({
          status: 401,
          body: FAILED,
        });
      const refused = await fromAddress(sharded, spender, 'holder', 'guess-last');
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(WINDOW_SECONDS);
      expect(refused.body).toEqual(tooManyFailures(refused.retryAfter));
      expect((await fromAddress(sharded, spender, 'holder', 'holder-secret')).status).toBe(429);
      expect(await failuresLeft(sharded, spender, LIMIT, SHARDS)).toBe(0);

      expect(await fromAddress(sharded, neighbour, 'holder', 'wrong')).toMatchObject({ status: 401, body: FAILED });
      const allowed = await fromAddress(sharded, neighbour, 'holder', 'holder-secret');
      expect(allowed.status).toBe(200);
      expect(decodeJwt(allowed.body.access_token as string)).toMatchObject({ client_id: 'holder', org: ORG_A });
      expect(await failuresLeft(sharded, neighbour, LIMIT, SHARDS)).toBe(1);
      expect(
        (
          await objectCall<Record<string, number>>(
            sharded.miniflare,
            'RATE_LIMITER',
            shardName('token-fail', shard),
            'counted',
          )
        )[`token-fail:${spender}`],
      ).toBe(LIMIT);
    } finally {
      await sharded.close();
    }
  }, 90_000);
});

describe('the verification budget', () => {
  it('refuses registered and unknown ids alike once TOKEN_VERIFY_LIMIT secrets were checked, logging it once at warn', async () => {
    const lines: string[] = [];
    const limited = await startTestEdge({
      vars: { ...WINDOW, TOKEN_VERIFY_LIMIT: '4' },
      log: (line) => {
        lines.push(line);
      },
    });
    try {
      await limited.seedClient('holder', 'holder-secret', ORG_A, undefined, CHEAP);
      await limited.seedClient('off', 'off-secret', ORG_A, undefined, CHEAP);
      await (await limited.db()).prepare('UPDATE api_clients SET disabled = 1 WHERE client_id = ?').bind('off').run();
      await windowWithRoom();
      // Invented ids from many addresses check no secret, so they spend none of the four.
      for (let i = 0; i < 40; i++)
        expect((await fromAddress(limited, `192.0.2.${i % 10}`, `invented-${i}`, 'x')).status).toBe(401);
      const checked = [
        await fromAddress(limited, '198.51.100.1', 'holder', 'holder-secret'),
        await fromAddress(limited, '198.51.100.1', 'holder', 'wrong'),
        await fromAddress(limited, '198.51.100.2', 'off', 'off-secret'),
        await fromAddress(limited, '198.51.100.2', 'holder', 'holder-secret'),
      ];
      expect(checked.map((r) => r.status)).toEqual([200, 401, 401, 200]);

      const refusals = [
        await fromAddress(limited, '198.51.100.3', 'holder', 'holder-secret'),
        await fromAddress(limited, '198.51.100.3', 'holder', 'wrong'),
        await fromAddress(limited, '198.51.100.4', 'off', 'off-secret'),
        await fromAddress(limited, '198.51.100.4', 'nobody', 'x'),
        await onSocket(limited, 'holder', 'holder-secret'),
      ];
      for (const refused of refusals) {
        expect(refused.status).toBe(429);
        expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(refused.body).toEqual({
          error: 'too_many_requests',
          error_description: `too many token requests; retry after ${refused.retryAfter} s`,
        });
      }
      const budgetLines = () => lines.filter((l) => l.includes('token verification budget spent'));
      await expect.poll(() => budgetLines().length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
      const warned = budgetLines();
      expect(warned).toHaveLength(1);
      expect(JSON.parse(warned[0])).toMatchObject({ level: 'warn', limit: 4, windowSeconds: WINDOW_SECONDS });
    } finally {
      await limited.close();
    }
  }, 60_000);
});
