/**
 * The local edge's objects worker (launcher/edge.ts): the Durable Object classes alone, without the app's routes and
 * the assets they serve (the /docs page's Swagger UI, the web terminal), so that the second copy workerd loads and
 * Miniflare writes into its configuration is the part the objects run. On Cloudflare there is one worker,
 * workers/index.ts, which exports the same classes.
 */
export { PlatformLink, IdempotencyLedger } from './gateway/index.js';
export { ClientRateLimiter } from './limits/clientRateLimiter.js';
export { PlatformStream } from './streams/platformStream.js';
export { AuditTrail } from './audit/auditTrail.js';
export { WebhookDeliveries } from './webhooks/webhookDeliveries.js';
export { WebhookSource } from './webhooks/webhookSource.js';

/** Nothing reaches the objects worker but its objects' bindings. */
export default { fetch: () => new Response(null, { status: 404 }) };
