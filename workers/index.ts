/**
 * Worker entry: the edge app and the Durable Object classes the runtime binds: link objects as LINKS, idempotency
 * ledgers as IDEMPOTENCY, the per-client rate-limit counter as RATE_LIMITER, stream objects as STREAMS, the
 * organizations' audit trails as AUDIT, and webhooks' deliveries and sources as WEBHOOKS and WEBHOOK_SOURCES; and
 * the consumer of the webhook queues.
 */
import { createApp } from './app.js';
import type { Env } from './env.js';
import { webhookQueue } from './webhooks/webhookQueue.js';
import { startHeardSources } from './webhooks/webhookSource.js';
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
  // Each minute (wrangler.toml `[triggers]`): the webhook sources of the platforms endpoints hear.
  scheduled: (_controller, env, ctx) => ctx.waitUntil(startHeardSources(env)),
} satisfies ExportedHandler<Env, QueuedDelivery>;
