/**
 * Registry operations: trade platforms and organizations, scoped to the caller's organization, and the organization's
 * API clients for its administrators (`webapi.admin`): read them, and set where each may be used from.
 */
import { z } from 'zod';
import { defineOperation } from './operation.js';
import { dateTimeText, intText } from './fields.js';

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

/** The outcomes an audit row can have (workers/audit/auditRecord.ts). */
export const AUDIT_OUTCOME_NAMES = ['applied', 'refused', 'unknown'] as const;
/** The most rows one page of the audit trail answers. */
export const AUDIT_PAGE_MAX = 1000;

/** What the audit trail is read by: a time range (from inclusive, to exclusive), a client, an operation, a platform, an outcome. */
const auditFilter = {
  from: dateTimeText('from').optional(),
  to: dateTimeText('to').optional(),
  clientId: clientIdSchema.optional(),
  operation: z
    .string()
    .regex(/^[A-Za-z0-9.]{1,128}$/, 'operation must be a catalog operation id (v2.PF4.UserDeposit)')
    .optional(),
  platform: z.uuid('platform must be a uuid').optional(),
  outcome: z
    .enum(AUDIT_OUTCOME_NAMES, { error: () => `outcome must be one of ${AUDIT_OUTCOME_NAMES.join(', ')}` })
    .optional(),
};

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
  AuditEvents: defineOperation({
    name: 'AuditEvents',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/AuditEvents',
    tag: 'Audit',
    summary:
      "The organization's audit trail, oldest first: every call that is not a read, with its client, source, operation, platform, outcome and redacted arguments. Paged by `cursor` (`nextCursor` of the page before).",
    query: z.object({
      ...auditFilter,
      limit: intText('limit', 1, AUDIT_PAGE_MAX).optional(),
      cursor: z
        .string()
        .regex(/^\d{1,15}$/, 'cursor must be the nextCursor of a page')
        .optional(),
    }),
    response: 'AuditEventPage',
    timeout: 'read',
    read: 'local',
    scope: 'webapi.audit',
  }),
  AuditEventsExport: defineOperation({
    name: 'AuditEventsExport',
    generation: 'registry',
    family: null,
    method: 'GET',
    path: '/api/AuditEvents/Export',
    tag: 'Audit',
    summary:
      'The audit trail as CSV (text/csv), oldest first, with the same filters, streamed: any time range, a month of rows included.',
    query: z.object(auditFilter),
    response: { type: 'string', description: 'CSV with a header row' },
    timeout: 'history',
    read: 'local',
    scope: 'webapi.audit',
  }),
};
