/**
 * Worker entry: the edge app and the Durable Object classes the runtime binds: link objects as LINKS, idempotency
 * ledgers as IDEMPOTENCY, the per-client rate-limit counter as RATE_LIMITER, stream objects as STREAMS, and the
 * organizations' audit trails as AUDIT.
 */
import { createApp } from './app.js';

export { PlatformLink, IdempotencyLedger } from './gateway/index.js';
export { ClientRateLimiter } from './limits/clientRateLimiter.js';
export { PlatformStream } from './streams/platformStream.js';
export { AuditTrail } from './audit/auditTrail.js';
export default createApp();
