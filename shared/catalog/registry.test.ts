/**
 * The small catalog files: the registry operations (shared/catalog/registry.ts), the v2 operations both families
 * declare once (v2/common.ts) and the v2 path prefixes (v2/paths.ts), each entry pinned field by field, and the
 * assembled catalog (index.ts): its order, the handler names sent to the broker, look-up by id, and the refusal of a
 * catalog that declares an id twice.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { brokerOps, catalog, findOperation, type Operation } from './index.js';
import { registryOperations } from './registry.js';
import { webhookOperations } from './webhooks.js';
import { commonV2 } from './v2/common.js';
import { V2_PF4, V2_PF5, v2Prefix } from './v2/paths.js';
import { pf4V2Areas } from './v2/pf4/index.js';
import { pf5V2 } from './v2/pf5.js';
import { pf4V1 } from './v1/pf4.js';
import { pf5V1 } from './v1/pf5.js';
import type { Family } from '../protocol.js';

const local = {
  generation: 'registry',
  family: null,
  method: 'GET',
  timeout: 'read',
  mutating: false,
  destructive: false,
  scope: 'webapi',
} as const;

describe('registry operations', () => {
  it('declares the trade platform and organization reads answered by the edge, and Ping answered live by its own handler', () => {
    expect(registryOperations).toStrictEqual({
      TradePlatforms: {
        ...local,
        name: 'TradePlatforms',
        op: 'Registry.TradePlatforms',
        id: 'registry.Registry.TradePlatforms',
        path: '/api/TradePlatforms',
        tag: 'TradePlatforms',
        summary: "List the caller's organization's trade platforms.",
        response: 'TradePlatform[]',
        read: 'local',
      },
      TradePlatform: {
        ...local,
        name: 'TradePlatform',
        op: 'Registry.TradePlatform',
        id: 'registry.Registry.TradePlatform',
        path: '/api/TradePlatforms/{tradePlatform}',
        tag: 'TradePlatforms',
        summary: 'Read one trade platform.',
        response: 'TradePlatform',
        read: 'local',
      },
      Ping: {
        ...local,
        name: 'Ping',
        op: 'Ping',
        id: 'registry.Registry.Ping',
        path: '/api/TradePlatforms/{tradePlatform}/Ping',
        tag: 'TradePlatforms',
        summary: 'Connect and ping the trading server through the manager session; reports the round trip.',
        response: 'PingResult',
        read: 'live',
        answer: { kind: 'custom' },
      },
      Organizations: {
        ...local,
        name: 'Organizations',
        op: 'Registry.Organizations',
        id: 'registry.Registry.Organizations',
        path: '/api/Organizations',
        tag: 'Organizations',
        summary: "List the caller's organization.",
        response: 'Organization[]',
        read: 'local',
      },
      Clients: {
        ...local,
        name: 'Clients',
        op: 'Registry.Clients',
        id: 'registry.Registry.Clients',
        path: '/api/Clients',
        tag: 'Clients',
        summary: "List the caller's organization's API clients, without secret material.",
        response: 'ApiClient[]',
        read: 'local',
        scope: 'webapi.admin',
      },
      Client: {
        ...local,
        name: 'Client',
        op: 'Registry.Client',
        id: 'registry.Registry.Client',
        path: '/api/Clients/{clientId}',
        tag: 'Clients',
        summary: 'Read one API client of the organization, without secret material.',
        params: expect.any(Object),
        response: 'ApiClient',
        read: 'local',
        scope: 'webapi.admin',
      },
      ClientAllowedNetworks: {
        ...local,
        name: 'ClientAllowedNetworks',
        op: 'Registry.ClientAllowedNetworks',
        id: 'registry.Registry.ClientAllowedNetworks',
        method: 'PUT',
        path: '/api/Clients/{clientId}/AllowedNetworks',
        tag: 'Clients',
        summary:
          'Replace the networks an API client of the organization may be used from (token requests, calls and streams); an empty list allows any source.',
        params: expect.any(Object),
        body: expect.any(Object),
        response: 'ApiClient',
        timeout: 'change',
        read: 'local',
        mutating: true,
        scope: 'webapi.admin',
      },
      AuditEvents: {
        ...local,
        name: 'AuditEvents',
        op: 'Registry.AuditEvents',
        id: 'registry.Registry.AuditEvents',
        path: '/api/AuditEvents',
        tag: 'Audit',
        summary:
          "The organization's audit trail, oldest first: every call that is not a read, with its client, source, operation, platform, outcome and redacted arguments. Paged by `cursor` (`nextCursor` of the page before).",
        query: expect.any(Object),
        response: 'AuditEventPage',
        read: 'local',
        scope: 'webapi.audit',
      },
      AuditEventsExport: {
        ...local,
        name: 'AuditEventsExport',
        op: 'Registry.AuditEventsExport',
        id: 'registry.Registry.AuditEventsExport',
        path: '/api/AuditEvents/Export',
        tag: 'Audit',
        summary:
          'The audit trail as CSV (text/csv), oldest first, with the same filters, streamed: any time range, a month of rows included.',
        query: expect.any(Object),
        response: { type: 'string', description: 'CSV with a header row' },
        timeout: 'history',
        read: 'local',
        scope: 'webapi.audit',
      },
    });
  });

  it("validates the clients' path and body: the client id rule, and at most 64 networks of one word each", () => {
    const { Client, ClientAllowedNetworks } = registryOperations;
    expect(Client.params!.safeParse({ clientId: 'partner-crm.1' }).success).toBe(true);
    expect(Client.params!.safeParse({ clientId: 'a b' }).error?.issues[0].message).toBe(
      'client id must be 1-128 characters of A-Z a-z 0-9 . _ ~ -',
    );
    const body = ClientAllowedNetworks.body!;
    expect(body.safeParse({ allowedNetworks: [] }).success).toBe(true);
    expect(body.safeParse({ allowedNetworks: ['203.0.113.0/24', '2001:db8::/32'] }).success).toBe(true);
    expect(body.safeParse({ allowedNetworks: ['10.0.0.0/8 10.1.0.0/16'] }).error?.issues[0]).toMatchObject({
      path: ['allowedNetworks', 0],
      message: 'must be one network or address of at most 64 characters, no spaces',
    });
    expect(body.safeParse({ allowedNetworks: [''] }).success).toBe(false);
    const many = Array.from({ length: 65 }, (_, i) => `10.0.${i}.0/24`);
    expect(body.safeParse({ allowedNetworks: many }).error?.issues[0].message).toBe('must hold at most 64 networks');
    expect(body.safeParse({}).success).toBe(false);
  });
});

describe('v2 operations common to both families', () => {
  it('declares ServerTime once, routed under each family and answered by the live ServerTime command', () => {
    const entry = (family: Family) => ({
      name: 'ServerTime',
      op: 'ServerTime',
      id: `v2.${family}.ServerTime`,
      generation: 'v2',
      family,
      method: 'GET',
      path: `/api/v2/${family}/{tradePlatform}/ServerTime`,
      tag: 'Common',
      summary: 'Trading server time (live).',
      response: { type: 'string', format: 'date-time' },
      timeout: 'read',
      read: 'live',
      answer: { kind: 'live', command: 'ServerTime' },
      mutating: false,
      destructive: false,
      scope: 'webapi',
    });
    expect(commonV2).toStrictEqual({ ServerTime: [entry('PF4'), entry('PF5')] });
  });

  it("prefixes each family's v2 paths with its own name and the trade platform", () => {
    expect([V2_PF4, V2_PF5]).toStrictEqual(['/api/v2/PF4/{tradePlatform}', '/api/v2/PF5/{tradePlatform}']);
    expect(v2Prefix('PF4')).toBe('/api/v2/PF4/{tradePlatform}');
    expect(v2Prefix('PF5')).toBe('/api/v2/PF5/{tradePlatform}');
  });
});

describe('the assembled catalog', () => {
  const flat = (group: Record<string, Operation | readonly Operation[]>) => Object.values(group).flat();

  it('holds every declared entry once, in order: registry, webhooks, common v2, PF4 v2 areas, PF5 v2, PF4 v1, PF5 v1', () => {
    const declared = [
      ...flat(registryOperations),
      ...flat(webhookOperations),
      ...flat(commonV2),
      ...pf4V2Areas.flatMap(flat),
      ...flat(pf5V2),
      ...flat(pf4V1),
      ...flat(pf5V1),
    ];
    expect(catalog).toHaveLength(declared.length);
    declared.forEach((entry, i) => expect(catalog[i], entry.id).toBe(entry));
  });

  it('sends the broker the handler names of exactly the entries the edge does not answer itself', () => {
    expect(catalog.filter((e) => e.read === 'local').map((e) => e.id)).toStrictEqual([
      'registry.Registry.TradePlatforms',
      'registry.Registry.TradePlatform',
      'registry.Registry.Organizations',
      'registry.Registry.Clients',
      'registry.Registry.Client',
      'registry.Registry.ClientAllowedNetworks',
      'registry.Registry.AuditEvents',
      'registry.Registry.AuditEventsExport',
      'registry.Registry.Webhooks',
      'registry.Registry.WebhookCreate',
      'registry.Registry.Webhook',
      'registry.Registry.WebhookUpdate',
      'registry.Registry.WebhookDelete',
      'registry.Registry.WebhookRotateSecret',
      'registry.Registry.WebhookTest',
      'registry.Registry.WebhookAttempts',
      'registry.Registry.WebhookDeadLetters',
      'registry.Registry.WebhookRedeliver',
    ]);
    expect(brokerOps).toStrictEqual(new Set(catalog.filter((e) => e.read !== 'local').map((e) => e.op)));
    expect(brokerOps.has('Ping')).toBe(true);
    expect(brokerOps.has('ServerTime')).toBe(true);
    expect(brokerOps.has('Registry.Organizations')).toBe(false);
  });

  it('finds an entry by its id, and nothing for an unknown id', () => {
    for (const entry of [catalog[0], catalog[5], catalog[catalog.length - 1]])
      expect(findOperation(entry.id)).toBe(entry);
    expect(findOperation('v2.PF4.ServerTime')).toBe(commonV2.ServerTime[0]);
    expect(findOperation('v2.PF4.NoSuchOperation')).toBeUndefined();
    expect(findOperation('')).toBeUndefined();
  });

  describe('with an id declared twice', () => {
    afterEach(() => {
      vi.doUnmock('./registry.js');
      vi.resetModules();
    });

    it('refuses to load, naming the id', async () => {
      vi.resetModules();
      vi.doMock('./registry.js', async () => {
        const { defineOperation } = await import('./operation.js');
        const twice = defineOperation({
          name: 'Twice',
          generation: 'registry',
          family: null,
          method: 'GET',
          path: '/api/Twice',
          tag: 't',
          summary: 's',
          response: 'X',
          timeout: 'read',
          read: 'local',
        });
        return { registryOperations: { First: twice, Again: { ...twice, path: '/api/Twice/again' } } };
      });
      await expect(import('./index.js')).rejects.toThrow(new Error('duplicate catalog id registry.Registry.Twice'));
    });
  });
});
