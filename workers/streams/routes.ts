/**
 * The live stream routes. Both authenticate with the API's bearer token and resolve the platform within the caller's
 * organization (another organization's platform is answered exactly as an unknown one), then hand the request to the
 * platform's stream object (`PlatformStream`), which holds the platform's one broker subscription on the first healthy
 * broker of the platform's list (told it as comma-separated URLs).
 *
 * - `GET /api/v2/PF4/{tradePlatform}/Stream` and the PF5 twin: Server-Sent Events. Topics by query: `ticks` (all
 *   symbols) or `ticks=EURUSD,GBPUSD`, and any of `trades`, `users`, `symbols`, `margin` (PF4) or `positions`,
 *   `orders`, `deals`, `users`, `margin` (PF5), e.g. `?ticks=EURUSD&trades`, and `lastEventId` for a client that cannot
 *   send `Last-Event-ID`; a query value with a control character is refused (`Validation`, as the API's inputs are).
 *   Under /api/, so the token middleware runs first.
 * - `/hubs/pf4/v2` and `/hubs/pf5/v2` with `?tradePlatform=`: the SignalR hubs. `POST …/negotiate?negotiateVersion=1`
 *   (token in the Authorization header) offers the WebSockets transport; the WebSocket (token in the `access_token`
 *   query, as browsers send it, or the header) speaks the JSON hub protocol with the stream object.
 *
 * Refusals go through `refuse` (envelope/refusal.ts): the SSE routes answer the v2 envelope; the hubs, outside
 * /api/v2/, answer negotiate and upgrade refusals with their HTTP status and the v1 error body (a SignalR client reads
 * the status), and token refusals with the RFC 6750 challenge, as the API does.
 */
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env.js';
import { configOf } from '../config.js';
import { FAMILIES, type Family } from '../../shared/protocol.js';
import { topicsOf } from '../../shared/streams.js';
import { authenticate } from '../auth/requireToken.js';
import { admit, apiRateRefusal } from '../limits/rateLimit.js';
import { refuse, unknownPlatform } from '../envelope/index.js';
import { textProblem } from '../../shared/catalog/inputs.js';
import { platformOf } from '../registry/index.js';
import { STREAM_HEADERS } from './streamRequest.js';
import { streamObjectName, streamShard } from './fanout.js';
import { mutable } from '../api/answerHeaders.js';
import { nearPlacement, type Placement } from '../regions/placement.js';
import { placedStub } from '../regions/objects.js';
import { routeBrokerUrls } from '../../shared/brokerRoutes.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The platform as the stream object is told it, with its brokers in order (the registry's list, else BROKER_URL), and
 * where the stream objects serving this caller are: in the caller's region (docs/regions.md).
 */
type Found = { platform: string; family: Family; brokerUrls: readonly string[]; near: Placement };

async function findPlatform(c: Context<AppEnv>, id: string, family: Family): Promise<Found | null> {
  if (!UUID.test(id)) return null;
  const found = await platformOf(c, id);
  if (!found || found.platform.type !== family) return null;
  const config = configOf(c.env);
  const near = nearPlacement(found, c.get('region'), config.HOME_REGION);
  return {
    platform: found.platform.id,
    family,
    // Reached the way the stream objects' region reaches them (REGION_BROKER_ROUTES).
    brokerUrls: routeBrokerUrls(found.brokerUrls ?? config.BROKER_URL, near.region, config.REGION_BROKER_ROUTES),
    near,
  };
}

function toObject(
  c: Context<AppEnv>,
  found: Found,
  request: Request,
  extra: Record<string, string>,
): Promise<Response> {
  const caller = c.get('caller');
  // The platform's clients spread over its stream objects; a reconnect goes back to the one its event id names.
  const shard = streamShard(request.headers.get('last-event-id'), configOf(c.env).STREAM_SHARDS);
  const stub = placedStub(c.env.STREAMS, streamObjectName(found.platform, found.near.region, shard), found.near);
  const headers = new Headers({
    [STREAM_HEADERS.platform]: found.platform,
    [STREAM_HEADERS.family]: found.family,
    [STREAM_HEADERS.broker]: found.brokerUrls.join(','),
    [STREAM_HEADERS.shard]: String(shard),
    ...extra,
    // Who connected, so the object can end the stream when the token expires or the client loses its standing.
    [STREAM_HEADERS.client]: caller.clientId,
    [STREAM_HEADERS.organization]: caller.organizationId,
    [STREAM_HEADERS.expires]: String(caller.expiresAt ?? Date.now()),
    [STREAM_HEADERS.address]: caller.address ?? '',
  });
  for (const name of ['upgrade', 'last-event-id']) {
    const v = request.headers.get(name);
    if (v !== null) headers.set(name, v);
  }
  return stub.fetch(new Request('https://stream.internal/', { headers }));
}

export function streamRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  for (const family of FAMILIES) {
    app.get(`/api/v2/${family}/:tradePlatform/Stream`, async (c) => {
      const id = c.req.param('tradePlatform');
      if (!UUID.test(id)) return refuse(c, { kind: 'Validation', message: 'tradePlatform: must be a uuid' });
      const found = await findPlatform(c, id, family);
      if (!found) return refuse(c, unknownPlatform(id));
      const url = new URL(c.req.url);
      const served = topicsOf(family) as readonly string[];
      const unknown = [...url.searchParams.keys()].filter((k) => !served.includes(k) && k !== 'lastEventId');
      if (unknown.length > 0)
        return refuse(c, {
          kind: 'Validation',
          message: `${unknown[0]}: not a topic of ${family} streams (${served.join(', ')})`,
        });
      const topics = served.filter((t) => url.searchParams.has(t));
      if (topics.length === 0)
        return refuse(c, { kind: 'Validation', message: `name at least one topic: ${served.join(', ')}` });
      // The symbols and the event id go on to the stream object in headers: no value may hold a control character.
      for (const [name, value] of url.searchParams) {
        const problem = textProblem(value, name);
        if (problem) return refuse(c, { kind: 'Validation', message: problem });
      }
      const symbols = (url.searchParams.get('ticks') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const request = c.req.raw;
      const lastEventId = url.searchParams.get('lastEventId');
      const forwarded =
        lastEventId && !request.headers.has('last-event-id')
          ? new Request(request, { headers: { ...Object.fromEntries(request.headers), 'last-event-id': lastEventId } })
          : request;
      c.set('outcome', 'ok');
      return mutable(
        await toObject(c, found, forwarded, {
          [STREAM_HEADERS.kind]: 'sse',
          [STREAM_HEADERS.topics]: topics.join(','),
          ...(symbols.length ? { [STREAM_HEADERS.symbols]: symbols.join(',') } : {}),
        }),
      );
    });

    const base = `/hubs/${family.toLowerCase()}/v2`;
    app.post(`${base}/negotiate`, async (c) => {
      const found = await hubCaller(c, family);
      if (found instanceof Response) return found;
      const version = Number(c.req.query('negotiateVersion') ?? 0);
      const connectionId = crypto.randomUUID();
      return c.json({
        negotiateVersion: version >= 1 ? 1 : 0,
        connectionId,
        ...(version >= 1 ? { connectionToken: crypto.randomUUID() } : {}),
        availableTransports: [{ transport: 'WebSockets', transferFormats: ['Text'] }],
      });
    });
    app.get(base, async (c) => {
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
        return refuse(c, {
          kind: 'Validation',
          message: 'this hub speaks the SignalR JSON protocol over WebSockets only: negotiate first',
        });
      }
      const found = await hubCaller(c, family);
      if (found instanceof Response) return found;
      return mutable(await toObject(c, found, c.req.raw, { [STREAM_HEADERS.kind]: 'hub' }));
    });
  }
  return app;
}

/** The hub's caller and platform: the token from the header or `access_token`, then the platform as the API finds it. */
async function hubCaller(c: Context<AppEnv>, family: Family): Promise<Found | Response> {
  const queryToken = c.req.query('access_token');
  let source = c;
  if (queryToken && !c.req.header('authorization')) {
    // The same checks as the API's, reading the token from the query (browsers cannot set headers on a WebSocket).
    const req = Object.create(c.req, {
      header: {
        value: (name: string) => (name.toLowerCase() === 'authorization' ? `Bearer ${queryToken}` : c.req.header(name)),
      },
    }) as Context<AppEnv>['req'];
    source = Object.create(c, { req: { value: req } }) as Context<AppEnv>;
  }
  const caller = await authenticate(source);
  if (caller instanceof Response) return caller;
  c.set('caller', caller);
  // Negotiating and connecting are calls of the client's API budget, as the hub's invocations are (PlatformStream).
  const admission = await admit(c.env, 'api', caller.clientId);
  if (!admission.ok) return apiRateRefusal(c, admission.retryAfterSeconds);
  const id = c.req.query('tradePlatform') ?? '';
  const found = await findPlatform(c, id, family);
  if (!found) return refuse(c, unknownPlatform(id));
  return found;
}
