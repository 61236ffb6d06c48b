/** Registry operations: trade platforms and organizations, scoped to the caller's organization. */
import { defineOperation } from './operation.js';

export const registryOperations = {
  TradePlatforms: defineOperation({
    name: 'TradePlatforms', generation: 'registry', family: null, method: 'GET', path: '/api/TradePlatforms',
    tag: 'TradePlatforms', summary: "List the caller's organization's trade platforms.",
    response: 'TradePlatform[]', timeout: 'read', read: 'local',
  }),
  TradePlatform: defineOperation({
    name: 'TradePlatform', generation: 'registry', family: null, method: 'GET', path: '/api/TradePlatforms/{tradePlatform}',
    tag: 'TradePlatforms', summary: 'Read one trade platform.',
    response: 'TradePlatform', timeout: 'read', read: 'local',
  }),
  Ping: defineOperation({
    name: 'Ping', op: 'Ping', generation: 'registry', family: null, method: 'GET', path: '/api/TradePlatforms/{tradePlatform}/Ping',
    tag: 'TradePlatforms', summary: 'Connect and ping the trading server through the manager session; reports the round trip.',
    response: 'PingResult', timeout: 'read', read: 'live', answer: { kind: 'custom' },
  }),
  Organizations: defineOperation({
    name: 'Organizations', generation: 'registry', family: null, method: 'GET', path: '/api/Organizations',
    tag: 'Organizations', summary: "List the caller's organization.",
    response: 'Organization[]', timeout: 'read', read: 'local',
  }),
};
