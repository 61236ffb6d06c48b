/**
 * The webhook resource, /api/v2/Webhooks (shared/catalog/webhooks.ts; docs/webhooks.md): an organization's clients
 * holding `webapi.webhooks` register, list, change, disable and remove its endpoints, rotate their secrets, send a
 * test event, read the attempts and dead letters and ask for redeliveries. Answers are v2 envelopes; an endpoint of
 * another organization is answered exactly like an unknown one; no answer but creation's and rotation's carries a
 * secret. Registering or enabling an endpoint starts the webhook source of every platform it hears.
 */
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../env.js';
import { configOf } from '../config.js';
import { webhookOperations, TEST_EVENT_TYPE, type WebhookEventType } from '../../shared/catalog/webhooks.js';
import { callerOf, localRoute } from '../registry/registryRoutes.js';
import { RegistryError, RegistryStore } from '../registry/registryStore.js';
import { refuse, success } from '../envelope/index.js';
import { WebhookStore, type WebhookEndpoint, type WebhookEndpointChange } from './webhookStore.js';
import { dnsOverHttps, targetProblem } from './webhookTargets.js';
import { startSources } from './webhookSource.js';
import type { WebhookEvent } from './webhookEvents.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const DEFAULT_PAGE = 50;

function answer(c: Context<AppEnv>, data: unknown): Response {
  const shaped = success({ generation: 'v2', family: null, paged: false, traceId: c.get('traceId') }, data);
  return c.body(shaped.body, 200, { 'content-type': JSON_TYPE });
}

function refusal(c: Context<AppEnv>, error: unknown): Response {
  if (!(error instanceof RegistryError)) throw error;
  return refuse(c, { kind: error.kind === 'not_found' ? 'NotFound' : 'Validation', message: error.message });
}

const notFound = (c: Context<AppEnv>, id: string) =>
  refuse(c, { kind: 'NotFound', message: `webhook endpoint ${id} not found` });

/** Where a webhook may be sent, by this edge's rules (docs/webhooks.md, "Where webhooks may go"). */
function urlProblem(c: Context<AppEnv>): (url: string) => Promise<string | null> {
  const allowPrivate = configOf(c.env).WEBHOOK_PRIVATE_TARGETS;
  return (url) => targetProblem(url, { allowPrivate, resolve: dnsOverHttps });
}

/** Starts the sources of the platforms an enabled endpoint hears (waited for, so the first event is not missed). */
async function startFor(c: Context<AppEnv>, endpoint: WebhookEndpoint): Promise<void> {
  if (!endpoint.enabled) return;
  const platforms = await new RegistryStore(c.env.DB).listPlatforms(endpoint.organizationId);
  const heard = platforms.filter((p) => endpoint.platforms === null || endpoint.platforms.includes(p.id));
  await startSources(c.env, endpoint.organizationId, heard);
}

const deliveries = (c: Context<AppEnv>, id: string) => c.env.WEBHOOKS.get(c.env.WEBHOOKS.idFromName(id));

export function webhookRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const store = (c: Context<AppEnv>) => new WebhookStore(c.env.DB);
  const org = (c: Context<AppEnv>) => callerOf(c).organizationId;

  app.get(
    '/api/v2/Webhooks',
    localRoute(webhookOperations.Webhooks, async (c) => answer(c, await store(c).list(org(c)))),
  );

  app.post(
    '/api/v2/Webhooks',
    localRoute(webhookOperations.WebhookCreate, async (c, args) => {
      const body = args.body as {
        url: string;
        description?: string | null;
        eventTypes: WebhookEventType[];
        platforms?: string[] | null;
      };
      try {
        const { endpoint, secret } = await store(c).add(org(c), body, urlProblem(c));
        await startFor(c, endpoint);
        return answer(c, { ...endpoint, secret });
      } catch (error) {
        return refusal(c, error);
      }
    }),
  );

  app.get(
    '/api/v2/Webhooks/:webhookId',
    localRoute(webhookOperations.Webhook, async (c, args) => {
      const found = await store(c).find(org(c), args.webhookId as string);
      if (!found) return notFound(c, args.webhookId as string);
      const { secrets: _secrets, ...endpoint } = found;
      return answer(c, endpoint);
    }),
  );

  app.patch(
    '/api/v2/Webhooks/:webhookId',
    localRoute(webhookOperations.WebhookUpdate, async (c, args) => {
      try {
        const endpoint = await store(c).change(
          org(c),
          args.webhookId as string,
          args.body as WebhookEndpointChange,
          urlProblem(c),
        );
        await deliveries(c, endpoint.id).refresh();
        await startFor(c, endpoint);
        return answer(c, endpoint);
      } catch (error) {
        return refusal(c, error);
      }
    }),
  );

  app.delete(
    '/api/v2/Webhooks/:webhookId',
    localRoute(webhookOperations.WebhookDelete, async (c, args) => {
      try {
        return answer(c, await store(c).remove(org(c), args.webhookId as string));
      } catch (error) {
        return refusal(c, error);
      }
    }),
  );

  app.post(
    '/api/v2/Webhooks/:webhookId/RotateSecret',
    localRoute(webhookOperations.WebhookRotateSecret, async (c, args) => {
      const graceHours = (args.body as { graceHours?: number } | undefined)?.graceHours;
      try {
        const { endpoint, secret } = await store(c).rotate(org(c), args.webhookId as string, graceHours);
        await deliveries(c, endpoint.id).refresh();
        return answer(c, { ...endpoint, secret });
      } catch (error) {
        return refusal(c, error);
      }
    }),
  );

  app.post(
    '/api/v2/Webhooks/:webhookId/Test',
    localRoute(webhookOperations.WebhookTest, async (c, args) => {
      const id = args.webhookId as string;
      const found = await store(c).find(org(c), id);
      if (!found) return notFound(c, id);
      const random = crypto.getRandomValues(new Uint8Array(16));
      const event: WebhookEvent = {
        id: `evt_${[...random].map((b) => b.toString(16).padStart(2, '0')).join('')}`,
        type: TEST_EVENT_TYPE,
        platform: '',
        family: null,
        login: null,
        occurredAt: new Date().toISOString(),
        data: { message: 'a test event, sent on request', requestedBy: callerOf(c).clientId },
      };
      const queued = await deliveries(c, id).accept(id, [event]);
      return answer(c, { queued: queued.length, eventIds: queued });
    }),
  );

  app.get(
    '/api/v2/Webhooks/:webhookId/Attempts',
    localRoute(webhookOperations.WebhookAttempts, async (c, args) => {
      const id = args.webhookId as string;
      if (!(await store(c).find(org(c), id))) return notFound(c, id);
      const limit = (args.limit as number | undefined) ?? DEFAULT_PAGE;
      return answer(c, await deliveries(c, id).attempts(limit, args.eventId as string | undefined));
    }),
  );

  app.get(
    '/api/v2/Webhooks/:webhookId/DeadLetters',
    localRoute(webhookOperations.WebhookDeadLetters, async (c, args) => {
      const id = args.webhookId as string;
      if (!(await store(c).find(org(c), id))) return notFound(c, id);
      return answer(c, await deliveries(c, id).deadLetters((args.limit as number | undefined) ?? DEFAULT_PAGE));
    }),
  );

  app.post(
    '/api/v2/Webhooks/:webhookId/Redeliver',
    localRoute(webhookOperations.WebhookRedeliver, async (c, args) => {
      const id = args.webhookId as string;
      if (!(await store(c).find(org(c), id))) return notFound(c, id);
      const queued = await deliveries(c, id).redeliver(args.body as { eventId: string } | { from: string; to: string });
      return answer(c, { queued: queued.length, eventIds: queued });
    }),
  );

  return app;
}
