/**
 * Registry operations: trade platforms and organizations, scoped to the caller's organization, and the organization's
 * API clients for its administrators (`webapi.admin`): read them, and set where each may be used from.
 */
import { z } from 'zod';
import { defineOperation } from './operation.js';

/**
 * Client ids travel in HTTP Basic credentials, form bodies and paths; unreserved URI characters avoid any ambiguity
 * with the `:` separator and need no percent-encoding in any of them.
 */
export const clientIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{1,128}$/, 'client id must be 1-128 characters of A-Z a-z 0-9 . _ ~ -');

/** The most networks one client's allow-list holds (a partner's offices and data centres, not a country's routes). */
export const MAX_CLIENT_NETWORKS = 64;

const clientParams = z.object({ clientId: clientIdSchema });

export const registryOperations = {
  TradePlatforms: defineOperation({
    name: 'TradePlatforms',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/TradePlatforms',
    tag: 'TradePlatforms',
    summary: "List the caller's organization's trade platforms.",
    response: 'TradePlatform[]',
    timeout: 'read',
    read: 'local',
  }),
  TradePlatform: defineOperation({
    name: 'TradePlatform',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/TradePlatforms/{tradePlatform}',
    tag: 'TradePlatforms',
    summary: 'Read one trade platform.',
    response: 'TradePlatform',
    timeout: 'read',
    read: 'local',
  }),
  Ping: defineOperation({
    name: 'Ping',
    op: 'Ping',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/TradePlatforms/{tradePlatform}/Ping',
    tag: 'TradePlatforms',
    summary: 'Connect and ping the trading server through the manager session; reports the round trip.',
    response: 'PingResult',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'custom' },
  }),
  Organizations: defineOperation({
    name: 'Organizations',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/Organizations',
    tag: 'Organizations',
    summary: "List the caller's organization.",
    response: 'Organization[]',
    timeout: 'read',
    read: 'local',
  }),
  Clients: defineOperation({
    name: 'Clients',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/Clients',
    tag: 'Clients',
    summary: "List the caller's organization's API clients, without secret material.",
    response: 'ApiClient[]',
    timeout: 'read',
    read: 'local',
    scope: 'webapi.admin',
  }),
  Client: defineOperation({
    name: 'Client',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/Clients/{clientId}',
    tag: 'Clients',
    summary: 'Read one API client of the organization, without secret material.',
    params: clientParams,
    response: 'ApiClient',
    timeout: 'read',
    read: 'local',
    scope: 'webapi.admin',
  }),
  ClientAllowedNetworks: defineOperation({
    name: 'ClientAllowedNetworks',
    generation: 'registry',
    family: null,
    method: 'PUT',
    path: '/api/Clients/{clientId}/AllowedNetworks',
    tag: 'Clients',
    summary:
      'Replace the networks an API client of the organization may be used from (token requests, calls and streams); an empty list allows any source.',
    params: clientParams,
    body: z.object({
      allowedNetworks: z
        .array(z.string().regex(/^\S{1,64}$/, 'must be one network or address of at most 64 characters, no spaces'))
        .max(MAX_CLIENT_NETWORKS, `must hold at most ${MAX_CLIENT_NETWORKS} networks`),
    }),
    response: 'ApiClient',
    timeout: 'change',
    read: 'local',
    mutating: true,
    scope: 'webapi.admin',
  }),
};
