/**
 * The gateway objects and the messages they exchange with the edge: link objects (`PlatformLink`, several per
 * platform, each with one broker link) and idempotency ledgers (`IdempotencyLedger`, per API client).
 */
export { PlatformLink } from './platformLink.js';
export { IdempotencyLedger } from './idempotencyLedger.js';
export { BrokerLink, LINK_GRACE_MS } from './brokerLink.js';
export * from './messages.js';
export * from './names.js';
