/**
 * The platform registry over D1: organizations, their trade platforms and their API clients. The edge reads it per
 * request (always scoped to the caller's organization); the admin CLI writes it. Free of Worker globals so the CLI
 * can use it through Miniflare's D1 handle in Node.
 */
import { hashSecret, newClientSecret } from '../../shared/secrets.js';
import { clientIdSchema, isUuid, OPERATOR_CLIENT, uuidSchema } from './ids.js';
import { SCOPES, type Scope } from '../../shared/catalog/operation.js';
import { brokerUrlsColumn, brokerUrlsOfColumn, checkBrokerUrls } from '../../shared/brokerUrls.js';
import {
  isJurisdiction,
  isRegion,
  JURISDICTION_REGIONS,
  JURISDICTIONS,
  REGIONS,
  regionAllowed,
  type Jurisdiction,
  type Region,
} from '../../shared/regions.js';
import {
  TRADE_PLATFORM_TYPES,
  clientNetworks,
  clientScopes,
  type AdminOrganization,
  type ApiClient,
  type ClientCredentials,
  type ClientStanding,
  type Organization,
  type PlatformEntry,
  type TradePlatform,
  type TradePlatformType,
} from './records.js';

/** A bound D1 statement, as both the Worker's D1Database and Miniflare's Node proxy provide it. */
export interface RegistryStatement {
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
  run(): Promise<unknown>;
}

/** The part of D1 the store uses; structural so the Worker binding and launcher/edge.ts's D1Like both fit. */
export interface RegistryDatabase {
  prepare(sql: string): RegistryStatement & { bind(...values: unknown[]): RegistryStatement };
  batch(statements: RegistryStatement[]): Promise<unknown>;
}

/** A refused admin change (unknown id, duplicate, still in use); the CLI prints the message. */
export class RegistryError extends Error {
  constructor(
    readonly kind: 'not_found' | 'conflict' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

interface OrganizationRow {
  id: string;
  name: string | null;
  created: string;
  jurisdiction?: string | null;
}
interface PlatformRow {
  id: string;
  name: string | null;
  type: TradePlatformType;
  organization_id: string;
  broker_urls: string | null;
  broker_url: string | null;
  home_region: string | null;
  created: string;
  org_name: string | null;
  org_created: string;
  org_jurisdiction: string | null;
}
interface ClientRow {
  client_id: string;
  organization_id: string;
  name: string | null;
  disabled: number;
  grant_types: string;
  scopes: string;
  allowed_networks: string;
  created: string;
  secret_hash: string;
  secret_salt: string;
  iterations: number;
}

/** Stored scopes as the typed list; a name this edge does not know (a newer release wrote it) is held as nothing. */
const scopesOf = (text: string): Scope[] => {
  const names = new Set(text.split(' '));
  return SCOPES.filter((s) => names.has(s));
};

/** Stored allowed networks as the list (written canonical by clientNetworks); '' is none: any source. */
const networksOf = (text: string): string[] => text.split(' ').filter(Boolean);

type StandingRow = Pick<ClientRow, 'client_id' | 'organization_id' | 'disabled' | 'scopes' | 'allowed_networks'>;
const STANDING_COLUMNS = 'client_id, organization_id, disabled, scopes, allowed_networks';
const toStanding = (row: StandingRow): ClientStanding => ({
  clientId: row.client_id,
  organizationId: row.organization_id,
  disabled: row.disabled !== 0,
  scopes: scopesOf(row.scopes),
  allowedNetworks: networksOf(row.allowed_networks),
});

/**
 * The brokers a platform row names, in order; null for the edge's default list. `broker_urls` decides; a row with
 * `broker_url` alone was written by a previous version (migration 0005) and names that one broker.
 */
export function brokerUrlsOfRow(row: { broker_urls: string | null; broker_url: string | null }): string[] | null {
  if (row.broker_urls !== null)
    return brokerUrlsOfColumn(row.broker_urls) ?? (row.broker_url ? [row.broker_url] : null);
  return row.broker_url ? [row.broker_url] : null;
}

/** A list given to the store checked (null: the default list); the refusal names the field and the rule. */
function checkedBrokerUrls(urls: readonly string[] | null | undefined): string[] | null {
  if (urls === null || urls === undefined) return null;
  const checked = checkBrokerUrls(urls);
  if (!checked.ok) throw new RegistryError('invalid', `brokerUrls ${checked.problem}`);
  return [...checked.value];
}

const PLATFORM_SELECT = `SELECT p.id, p.name, p.type, p.organization_id, p.broker_urls, p.broker_url, p.home_region, p.created,
    o.name AS org_name, o.created AS org_created, o.jurisdiction AS org_jurisdiction
  FROM trade_platforms p JOIN organizations o ON o.id = p.organization_id`;

const toOrganization = (r: OrganizationRow): Organization => ({ id: r.id, name: r.name, created: r.created });
const toAdminOrganization = (r: OrganizationRow): AdminOrganization => ({
  ...toOrganization(r),
  jurisdiction: jurisdictionOf(r.jurisdiction),
});

/** A stored region or jurisdiction this edge does not know (a newer release wrote it) reads as none. */
const regionOf = (text: string | null | undefined): Region | null => (isRegion(text) ? text : null);
const jurisdictionOf = (text: string | null | undefined): Jurisdiction | null => (isJurisdiction(text) ? text : null);

/** A home region given to the store checked against the rule and the organization's jurisdiction. */
function checkedHomeRegion(region: string | null | undefined, jurisdiction: Jurisdiction | null): Region | null {
  if (region === null || region === undefined) return null;
  if (!isRegion(region)) throw new RegistryError('invalid', `homeRegion must be one of ${REGIONS.join(', ')}`);
  if (!regionAllowed(region, jurisdiction))
    throw new RegistryError(
      'invalid',
      `homeRegion ${region} lies outside the organization's jurisdiction ${jurisdiction}: one of ${JURISDICTION_REGIONS[jurisdiction!].join(', ')}`,
    );
  return region;
}

function checkedJurisdiction(jurisdiction: string | null | undefined): Jurisdiction | null {
  if (jurisdiction === null || jurisdiction === undefined) return null;
  if (!isJurisdiction(jurisdiction))
    throw new RegistryError('invalid', `jurisdiction must be one of ${JURISDICTIONS.join(', ')}`);
  return jurisdiction;
}

function toPlatformEntry(r: PlatformRow): PlatformEntry {
  return {
    platform: {
      id: r.id,
      name: r.name,
      type: r.type,
      organizationId: r.organization_id,
      organization: { id: r.organization_id, name: r.org_name, created: r.org_created },
      created: r.created,
    },
    brokerUrls: brokerUrlsOfRow(r),
    homeRegion: regionOf(r.home_region),
    jurisdiction: jurisdictionOf(r.org_jurisdiction),
  };
}

const CLIENT_COLUMNS = 'client_id, organization_id, name, disabled, grant_types, scopes, allowed_networks, created';
const toClient = (r: ClientRow): ApiClient => ({
  clientId: r.client_id,
  organizationId: r.organization_id,
  name: r.name,
  disabled: r.disabled !== 0,
  grantTypes: r.grant_types.split(' ').filter(Boolean),
  scopes: scopesOf(r.scopes),
  allowedNetworks: networksOf(r.allowed_networks),
  created: r.created,
});

export interface NewOrganization {
  name: string;
  id?: string;
  /** The jurisdiction its objects are pinned to; null or omitted: none. */
  jurisdiction?: string | null;
}
export interface NewPlatform {
  organizationId: string;
  type: TradePlatformType;
  name: string;
  id?: string;
  /** The brokers that serve it, first preferred; null or omitted: the edge's default list (BROKER_URL). */
  brokerUrls?: readonly string[] | null;
  /** Its home region; null or omitted: the edge's HOME_REGION. */
  homeRegion?: string | null;
}
export interface NewClient {
  organizationId: string;
  name?: string | null;
  clientId?: string;
  /** Scopes the client may hold; `webapi` (read only) when omitted. */
  scopes?: readonly string[];
  /** Networks its calls must come from (clientNetworks); any source when omitted or empty. */
  allowedNetworks?: readonly string[];
}

export class RegistryStore {
  constructor(readonly db: RegistryDatabase) {}

  // ---- reads scoped to a caller's organization (edge) ----

  /** The platform if it belongs to the organization; another organization's platform is null, exactly as unknown. */
  async findPlatform(organizationId: string, id: string): Promise<TradePlatform | null> {
    return (await this.findPlatformEntry(organizationId, id))?.platform ?? null;
  }

  /** Like findPlatform, with the brokers that serve the platform (for routing, never for responses). */
  async findPlatformEntry(organizationId: string, id: string): Promise<PlatformEntry | null> {
    if (!isUuid(id) || !isUuid(organizationId)) return null;
    const row = await this.db
      .prepare(`${PLATFORM_SELECT} WHERE p.id = ? AND p.organization_id = ?`)
      .bind(id.toLowerCase(), organizationId.toLowerCase())
      .first<PlatformRow>();
    return row ? toPlatformEntry(row) : null;
  }

  async listPlatforms(organizationId: string): Promise<TradePlatform[]> {
    const { results } = await this.db
      .prepare(`${PLATFORM_SELECT} WHERE p.organization_id = ? ORDER BY p.created, p.id`)
      .bind(organizationId.toLowerCase())
      .all<PlatformRow>();
    return results.map((r) => toPlatformEntry(r).platform);
  }

  /** The caller's own organization as a one-element list (or empty when it was removed). */
  async listOrganizations(organizationId: string): Promise<Organization[]> {
    const row = await this.findOrganization(organizationId);
    return row ? [row] : [];
  }

  async findOrganization(id: string): Promise<Organization | null> {
    if (!isUuid(id)) return null;
    const row = await this.db
      .prepare('SELECT id, name, created FROM organizations WHERE id = ?')
      .bind(id.toLowerCase())
      .first<OrganizationRow>();
    return row ? toOrganization(row) : null;
  }

  /** The client with its stored secret hash, for the token endpoint. */
  async findClient(clientId: string): Promise<ClientCredentials | null> {
    const row = await this.db
      .prepare(`SELECT ${CLIENT_COLUMNS}, secret_hash, secret_salt, iterations FROM api_clients WHERE client_id = ?`)
      .bind(clientId)
      .first<ClientRow>();
    if (!row) return null;
    return { ...toClient(row), secret: { hash: row.secret_hash, salt: row.secret_salt, iterations: row.iterations } };
  }

  /** Whether a token's client still exists, is enabled, which scopes it holds and where it may call from (cached). */
  async findClientStanding(clientId: string): Promise<ClientStanding | null> {
    const row = await this.db
      .prepare(`SELECT ${STANDING_COLUMNS} FROM api_clients WHERE client_id = ?`)
      .bind(clientId)
      .first<StandingRow>();
    return row ? toStanding(row) : null;
  }

  /** The standings of several clients at once (100 ids a query, D1's bound on parameters); unregistered ids are absent. */
  async findClientStandings(clientIds: readonly string[]): Promise<Map<string, ClientStanding>> {
    const found = new Map<string, ClientStanding>();
    for (let at = 0; at < clientIds.length; at += 100) {
      const ids = clientIds.slice(at, at + 100);
      const { results } = await this.db
        .prepare(`SELECT ${STANDING_COLUMNS} FROM api_clients WHERE client_id IN (${ids.map(() => '?').join(', ')})`)
        .bind(...ids)
        .all<StandingRow>();
      for (const row of results) found.set(row.client_id, toStanding(row));
    }
    return found;
  }

  /** The organization's client, without its secret; a client of another organization is null, exactly as unknown. */
  async findOrganizationClient(organizationId: string, clientId: string): Promise<ApiClient | null> {
    if (!isUuid(organizationId)) return null;
    const row = await this.db
      .prepare(`SELECT ${CLIENT_COLUMNS} FROM api_clients WHERE client_id = ? AND organization_id = ?`)
      .bind(clientId, organizationId.toLowerCase())
      .first<ClientRow>();
    return row ? toClient(row) : null;
  }

  // ---- administration (registry CLI) ----

  async allOrganizations(): Promise<AdminOrganization[]> {
    const { results } = await this.db
      .prepare('SELECT id, name, created, jurisdiction FROM organizations ORDER BY created, id')
      .all<OrganizationRow>();
    return results.map(toAdminOrganization);
  }

  /** An organization with its jurisdiction, for administration. */
  async findAdminOrganization(id: string): Promise<AdminOrganization | null> {
    if (!isUuid(id)) return null;
    const row = await this.db
      .prepare('SELECT id, name, created, jurisdiction FROM organizations WHERE id = ?')
      .bind(id.toLowerCase())
      .first<OrganizationRow>();
    return row ? toAdminOrganization(row) : null;
  }

  /**
   * Pins an organization's objects to a jurisdiction (null: none). Refused while it has platforms: their objects, and
   * the answers its ledgers keep for replay, would stay in the old one.
   */
  async setOrganizationJurisdiction(id: string, jurisdiction: string | null): Promise<AdminOrganization> {
    const checked = checkedJurisdiction(jurisdiction);
    const org = await this.findAdminOrganization(id);
    if (!org) throw new RegistryError('not_found', `organization ${id} not found`);
    const counted = await this.db
      .prepare('SELECT COUNT(*) AS platforms FROM trade_platforms WHERE organization_id = ?')
      .bind(org.id)
      .first<{ platforms: number }>();
    if ((counted?.platforms ?? 0) > 0 && checked !== org.jurisdiction)
      throw new RegistryError(
        'conflict',
        `organization ${org.id} has ${counted!.platforms} platform(s), whose objects and their stored idempotency records would be left ${org.jurisdiction ? `in jurisdiction ${org.jurisdiction}` : 'outside any jurisdiction'}: set its jurisdiction before adding platforms, or remove them first`,
      );
    await this.db.prepare('UPDATE organizations SET jurisdiction = ? WHERE id = ?').bind(checked, org.id).run();
    return { ...org, jurisdiction: checked };
  }

  async allPlatforms(organizationId?: string): Promise<PlatformEntry[]> {
    const stmt = organizationId
      ? this.db
          .prepare(`${PLATFORM_SELECT} WHERE p.organization_id = ? ORDER BY p.created, p.id`)
          .bind(organizationId.toLowerCase())
      : this.db.prepare(`${PLATFORM_SELECT} ORDER BY p.created, p.id`);
    return (await stmt.all<PlatformRow>()).results.map(toPlatformEntry);
  }

  async findAnyPlatform(id: string): Promise<PlatformEntry | null> {
    if (!isUuid(id)) return null;
    const row = await this.db.prepare(`${PLATFORM_SELECT} WHERE p.id = ?`).bind(id.toLowerCase()).first<PlatformRow>();
    return row ? toPlatformEntry(row) : null;
  }

  async listClients(organizationId?: string): Promise<ApiClient[]> {
    const columns = CLIENT_COLUMNS;
    const stmt = organizationId
      ? this.db
          .prepare(`SELECT ${columns} FROM api_clients WHERE organization_id = ? ORDER BY created, client_id`)
          .bind(organizationId.toLowerCase())
      : this.db.prepare(`SELECT ${columns} FROM api_clients ORDER BY created, client_id`);
    return (await stmt.all<ClientRow>()).results.map(toClient);
  }

  async addOrganization(input: NewOrganization): Promise<AdminOrganization> {
    const id = (input.id ?? crypto.randomUUID()).toLowerCase();
    if (!uuidSchema.safeParse(id).success) throw new RegistryError('invalid', `organization id ${id} is not a uuid`);
    const jurisdiction = checkedJurisdiction(input.jurisdiction);
    if (await this.findOrganization(id)) throw new RegistryError('conflict', `organization ${id} already exists`);
    const org: AdminOrganization = { id, name: input.name, created: new Date().toISOString(), jurisdiction };
    await this.db
      .prepare('INSERT INTO organizations (id, name, created, jurisdiction) VALUES (?, ?, ?, ?)')
      .bind(org.id, org.name, org.created, jurisdiction)
      .run();
    return org;
  }

  /** Refused while the organization still has platforms or clients: removing it would orphan them. */
  async removeOrganization(id: string): Promise<AdminOrganization> {
    const org = await this.findAdminOrganization(id);
    if (!org) throw new RegistryError('not_found', `organization ${id} not found`);
    const counts = await this.db
      .prepare(
        `SELECT (SELECT COUNT(*) FROM trade_platforms WHERE organization_id = ?) AS platforms,
              (SELECT COUNT(*) FROM api_clients WHERE organization_id = ?) AS clients,
              (SELECT COUNT(*) FROM webhook_endpoints WHERE organization_id = ?) AS webhooks`,
      )
      .bind(org.id, org.id, org.id)
      .first<{ platforms: number; clients: number; webhooks: number }>();
    if (counts && (counts.platforms > 0 || counts.clients > 0 || counts.webhooks > 0)) {
      throw new RegistryError(
        'conflict',
        `organization ${org.id} still has ${counts.platforms} platform(s), ${counts.clients} client(s) and ${counts.webhooks} webhook endpoint(s); remove them first`,
      );
    }
    await this.db.prepare('DELETE FROM organizations WHERE id = ?').bind(org.id).run();
    return org;
  }

  async addPlatform(input: NewPlatform): Promise<PlatformEntry> {
    const id = (input.id ?? crypto.randomUUID()).toLowerCase();
    if (!uuidSchema.safeParse(id).success) throw new RegistryError('invalid', `platform id ${id} is not a uuid`);
    if (!TRADE_PLATFORM_TYPES.includes(input.type))
      throw new RegistryError('invalid', `platform type must be one of ${TRADE_PLATFORM_TYPES.join(', ')}`);
    const found = await this.findAdminOrganization(input.organizationId);
    if (!found) throw new RegistryError('not_found', `organization ${input.organizationId} not found`);
    const { jurisdiction, ...org } = found;
    const brokerUrls = checkedBrokerUrls(input.brokerUrls);
    const homeRegion = checkedHomeRegion(input.homeRegion, jurisdiction);
    if (await this.findAnyPlatform(id)) throw new RegistryError('conflict', `platform ${id} already exists`);
    const created = new Date().toISOString();
    await this.db
      .prepare(
        'INSERT INTO trade_platforms (id, name, type, organization_id, broker_urls, broker_url, home_region, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .bind(
        id,
        input.name,
        input.type,
        org.id,
        brokerUrlsColumn(brokerUrls),
        brokerUrls?.[0] ?? null,
        homeRegion,
        created,
      )
      .run();
    return {
      platform: { id, name: input.name, type: input.type, organizationId: org.id, organization: org, created },
      brokerUrls,
      homeRegion,
      jurisdiction,
    };
  }

  /**
   * Replaces the brokers that serve a platform (null: the edge's default list). `broker_url` gets the first, for an
   * edge of the previous version. Edge objects follow within the registry cache time.
   */
  async setPlatformBrokers(id: string, urls: readonly string[] | null): Promise<PlatformEntry> {
    const brokerUrls = checkedBrokerUrls(urls);
    const entry = await this.findAnyPlatform(id);
    if (!entry) throw new RegistryError('not_found', `platform ${id} not found`);
    await this.db
      .prepare('UPDATE trade_platforms SET broker_urls = ?, broker_url = ? WHERE id = ?')
      .bind(brokerUrlsColumn(brokerUrls), brokerUrls?.[0] ?? null, entry.platform.id)
      .run();
    return { ...entry, brokerUrls };
  }

  /**
   * Sets a platform's home region (null: the edge's HOME_REGION), inside its organization's jurisdiction. Its live
   * reads and writes go to the new home's objects from the edge's next registry read (docs/regions.md).
   */
  async setPlatformHomeRegion(id: string, region: string | null): Promise<PlatformEntry> {
    const entry = await this.findAnyPlatform(id);
    if (!entry) throw new RegistryError('not_found', `platform ${id} not found`);
    const homeRegion = checkedHomeRegion(region, entry.jurisdiction);
    await this.db
      .prepare('UPDATE trade_platforms SET home_region = ? WHERE id = ?')
      .bind(homeRegion, entry.platform.id)
      .run();
    return { ...entry, homeRegion };
  }

  async removePlatform(id: string): Promise<PlatformEntry> {
    const entry = await this.findAnyPlatform(id);
    if (!entry) throw new RegistryError('not_found', `platform ${id} not found`);
    await this.db.prepare('DELETE FROM trade_platforms WHERE id = ?').bind(entry.platform.id).run();
    return entry;
  }

  /** Registers a client and returns its secret: the only time it exists in clear, since only its hash is stored. */
  async addClient(input: NewClient): Promise<{ client: ApiClient; secret: string }> {
    const clientId = input.clientId ?? `client-${crypto.randomUUID()}`;
    const valid = clientIdSchema.safeParse(clientId);
    if (!valid.success) throw new RegistryError('invalid', valid.error.issues[0]?.message ?? 'invalid client id');
    if (clientId === OPERATOR_CLIENT)
      throw new RegistryError('invalid', `client id ${OPERATOR_CLIENT} is the registry CLI's in the audit trail`);
    const org = await this.findOrganization(input.organizationId);
    if (!org) throw new RegistryError('not_found', `organization ${input.organizationId} not found`);
    const scopes = clientScopes(input.scopes ?? []);
    if (!scopes.ok) throw new RegistryError('invalid', scopes.message);
    const networks = clientNetworks(input.allowedNetworks ?? []);
    if (!networks.ok) throw new RegistryError('invalid', networks.message);
    if (await this.findClient(clientId)) throw new RegistryError('conflict', `client ${clientId} already exists`);
    const secret = newClientSecret();
    const hashed = await hashSecret(secret);
    const client: ApiClient = {
      clientId,
      organizationId: org.id,
      name: input.name ?? null,
      disabled: false,
      grantTypes: ['client_credentials'],
      scopes: scopes.scopes,
      allowedNetworks: networks.networks,
      created: new Date().toISOString(),
    };
    await this.db
      .prepare(
        'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, disabled, scopes, allowed_networks, created) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)',
      )
      .bind(
        clientId,
        org.id,
        client.name,
        hashed.hash,
        hashed.salt,
        hashed.iterations,
        client.scopes.join(' '),
        client.allowedNetworks.join(' '),
        client.created,
      )
      .run();
    return { client, secret };
  }

  /**
   * Replaces the scopes a client may hold. Tokens already issued lose a removed scope within the registry cache time:
   * the token check intersects a token's scopes with the client's current ones.
   */
  async setClientScopes(clientId: string, names: readonly string[]): Promise<ApiClient> {
    const scopes = clientScopes(names);
    if (!scopes.ok) throw new RegistryError('invalid', scopes.message);
    const client = await this.findClient(clientId);
    if (!client) throw new RegistryError('not_found', `client ${clientId} not found`);
    await this.db
      .prepare('UPDATE api_clients SET scopes = ? WHERE client_id = ?')
      .bind(scopes.scopes.join(' '), clientId)
      .run();
    const { secret: _secret, ...rest } = client;
    return { ...rest, scopes: scopes.scopes };
  }

  /**
   * Replaces the networks a client's token requests and calls must come from (none: any source). Tokens already issued
   * are held to the new list within the registry cache time, open streams at their next re-check. With
   * `organizationId` (the admin API) a client of another organization is not found, exactly as an unknown one.
   */
  async setClientNetworks(clientId: string, entries: readonly string[], organizationId?: string): Promise<ApiClient> {
    const networks = clientNetworks(entries);
    if (!networks.ok) throw new RegistryError('invalid', networks.message);
    const client =
      organizationId === undefined
        ? await this.findClient(clientId)
        : await this.findOrganizationClient(organizationId, clientId);
    if (!client) throw new RegistryError('not_found', `client ${clientId} not found`);
    // The organization it was found in: a client moved meanwhile is not changed.
    await this.db
      .prepare('UPDATE api_clients SET allowed_networks = ? WHERE client_id = ? AND organization_id = ?')
      .bind(networks.networks.join(' '), clientId, client.organizationId)
      .run();
    const { secret: _secret, ...rest } = client as ClientCredentials;
    return { ...rest, allowedNetworks: networks.networks };
  }

  /** Disabling keeps the client's record (and audit trail) but stops it obtaining tokens and using those it holds. */
  async setClientDisabled(clientId: string, disabled: boolean): Promise<ApiClient> {
    const client = await this.findClient(clientId);
    if (!client) throw new RegistryError('not_found', `client ${clientId} not found`);
    await this.db
      .prepare('UPDATE api_clients SET disabled = ? WHERE client_id = ?')
      .bind(disabled ? 1 : 0, clientId)
      .run();
    const { secret: _secret, ...rest } = client;
    return { ...rest, disabled };
  }

  async removeClient(clientId: string): Promise<ApiClient> {
    const client = await this.findClient(clientId);
    if (!client) throw new RegistryError('not_found', `client ${clientId} not found`);
    // Its Idempotency-Keys of the edge's own changes go with it (workers/registry/localKeys.ts): a client given the
    // same id later replays none of its answers.
    await this.db.batch([
      this.db.prepare('DELETE FROM api_clients WHERE client_id = ?').bind(clientId),
      this.db.prepare('DELETE FROM local_idempotency WHERE client_id = ?').bind(clientId),
    ]);
    const { secret: _secret, ...rest } = client;
    return rest;
  }
}
