/**
 * Worker entry: the edge app and the Durable Object classes the runtime binds: link objects as LINKS, idempotency
 * ledgers as IDEMPOTENCY, the per-client rate-limit counter as RATE_LIMITER, stream objects as STREAMS, the
 * organizations' audit trails as AUDIT, and webhooks' deliveries and sources as WEBHOOKS and WEBHOOK_SOURCES; the
 * consumer of the webhook queues; and the minute's cron.
 */
import { createApp } from './app.js';
import type { Env } from './env.js';
import { webhookQueue } from './webhooks/webhookQueue.js';
import { startHeardSources } from './webhooks/webhookSource.js';
import { forwardOperatorRows } from './audit/operatorForward.js';
import { expireLocalKeys } from './registry/localKeys.js';
import type { QueuedDelivery } from './webhooks/webhookDeliveries.js';

export { PlatformLink, IdempotencyLedger } from './gateway/index.js';
export { ClientRateLimiter } from './limits/clientRateLimiter.js';
export { PlatformStream } from './streams/platformStream.js';
export { AuditTrail } from './audit/auditTrail.js';
export { WebhookDeliveries } from './webhooks/webhookDeliveries.js';
export { WebhookSource } from './webhooks/webhookSource.js';

const app = createApp();

export default {
  fetch: app.fetch,
  // The webhook deliveries queue and its dead-letter queue (wrangler.toml).
  queue: webhookQueue,
  // Each minute (wrangler.toml `[triggers]`): the webhook sources of the platforms endpoints hear, and the registry
  // CLI's audit rows forwarded to their organizations' trails, and the expired keys of the edge's own changes deleted.
  scheduled: (_controller, env, ctx) => {
    const logged = (job: string) => (error: unknown) =>
      console.error(JSON.stringify({ msg: 'scheduled job failed', job, error: String(error) }));
    ctx.waitUntil(startHeardSources(env).catch(logged('webhook sources')));
    ctx.waitUntil(forwardOperatorRows(env).catch(logged('operator audit rows')));
    ctx.waitUntil(expireLocalKeys(env.DB).catch(logged('expired idempotency keys')));
  },
} satisfies ExportedHandler<Env, QueuedDelivery>;
