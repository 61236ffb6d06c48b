/** The platform gateway Durable Object, its broker link and the messages they exchange with the edge. */
export { PlatformGateway } from './platformGateway.js';
export { BrokerLink, LINK_GRACE_MS } from './brokerLink.js';
export * from './messages.js';
