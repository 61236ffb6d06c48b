/**
 * API clients of the demo organization the attack drill registers, and the token requests it makes: on the edge's
 * local socket (one source for every caller), or through Miniflare's own entry, which sets `request.cf` from
 * `CF-Connecting-IP` as Cloudflare's front does, so that each request can come from an address of the drill's choice.
 */
import { randomUUID } from 'node:crypto';
import type { Stack } from '../../launcher/stack.js';
import { hashSecret } from '../../shared/secrets.js';
import { FORM, tokenForm } from './http.js';

export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** A token request on the edge's local socket: status and body. */
export async function tokenOnSocket(stack: Stack, clientId: string, secret: string): Promise<TokenAnswer> {
  const res = await fetch(`${stack.edgeUrl}/connect/token`, {
    method: 'POST',
    headers: FORM,
    body: tokenForm(clientId, secret),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

/** A token request that came through the front from `address` (Miniflare's entry sets `request.cf`). */
export async function tokenFrom(stack: Stack, address: string, clientId: string, secret: string): Promise<TokenAnswer> {
  const res = await stack.edge.miniflare.dispatchFetch(`${stack.edgeUrl}/connect/token`, {
    method: 'POST',
    headers: { ...FORM, 'CF-Connecting-IP': address },
    body: tokenForm(clientId, secret),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

/** Registers a client of the demo organization holding `scopes`; answers its id, secret and a token. */
export async function newClient(
  stack: Stack,
  name: string,
  scopes = 'webapi',
): Promise<{ clientId: string; secret: string; token: string }> {
  const clientId = `drill-${name}-${randomUUID().slice(0, 8)}`;
  const secret = randomUUID();
  const h = await hashSecret(secret);
  const db = await stack.edge.db();
  await db
    .prepare(
      'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, scopes, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    )
    .bind(clientId, stack.organizationId, clientId, h.hash, h.salt, h.iterations, scopes, new Date().toISOString())
    .run();
  const answer = await tokenOnSocket(stack, clientId, secret);
  if (answer.status !== 200)
    throw new Error(`no token for ${clientId}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { clientId, secret, token: answer.body.access_token as string };
}
