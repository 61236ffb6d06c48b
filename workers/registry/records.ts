/**
 * The registry's public records, shaped as the service spec's "Registry records" (TradePlatform, Organization), and
 * the admin-side view of an API client. Kept free of Worker globals so the Node registry CLI can import it too.
 */
import { READ_SCOPE, SCOPES, type Scope } from '../../shared/catalog/operation.js';
import { networkText, parseNetwork } from '../../shared/addressRanges.js';
import { MAX_CLIENT_NETWORKS } from '../../shared/catalog/registry.js';
import type { Jurisdiction, Region } from '../../shared/regions.js';

export const TRADE_PLATFORM_TYPES = ['PF4', 'PF5', 'PFOther'] as const;
export type TradePlatformType = (typeof TRADE_PLATFORM_TYPES)[number];

export interface Organization {
  id: string;
  name: string | null;
  created: string;
}

export interface TradePlatform {
  id: string;
  name: string | null;
  type: TradePlatformType;
  organizationId: string;
  organization: Organization;
  created: string;
}

/** A platform as the edge routes it: the public record plus the brokers that serve it (never sent to callers). */
export interface PlatformEntry {
  platform: TradePlatform;
  /** Base URLs of the brokers serving this platform, the first preferred; null means the edge's BROKER_URL list. */
  brokerUrls: string[] | null;
  /** The platform's home region as its row names it; null: the edge's HOME_REGION (docs/regions.md). */
  homeRegion: Region | null;
  /** The jurisdiction the platform's organization is pinned to; null: none. */
  jurisdiction: Jurisdiction | null;
}

/** An organization as administration shows it: the public record with the jurisdiction its objects are pinned to. */
export interface AdminOrganization extends Organization {
  /** Where the organization's objects run and store data (Cloudflare's jurisdictions); null: anywhere. */
  jurisdiction: Jurisdiction | null;
}

/**
 * A platform as administration shows it (`npm run registry -- platform ... --json`): the public record with the
 * brokers that serve it. Never an API answer: callers do not learn broker addresses.
 */
export interface AdminPlatform extends TradePlatform {
  /** The brokers serving the platform in order (the first preferred); null: the edge's default list, BROKER_URL. */
  brokerUrls: string[] | null;
  /**
   * @deprecated The first of `brokerUrls` (null with the default list), for readers of the single-broker record;
   * read `brokerUrls`.
   */
  brokerUrl: string | null;
  /** The home region the registry names; null: the edge's default (HOME_REGION). */
  homeRegion: Region | null;
  /** The organization's jurisdiction; null: none. */
  jurisdiction: Jurisdiction | null;
}

export function adminPlatform(entry: PlatformEntry): AdminPlatform {
  return {
    ...entry.platform,
    brokerUrls: entry.brokerUrls,
    brokerUrl: entry.brokerUrls?.[0] ?? null,
    homeRegion: entry.homeRegion,
    jurisdiction: entry.jurisdiction,
  };
}

/** An API client without its secret material: what admin listings show. */
export interface ApiClient {
  clientId: string;
  organizationId: string;
  name: string | null;
  disabled: boolean;
  /** OAuth2 grant types the client may use; `client_credentials` unless registered otherwise. */
  grantTypes: string[];
  /** OAuth scopes the client may hold (its tokens carry no others); always includes `webapi`. */
  scopes: Scope[];
  /**
   * The networks (CIDR, canonical) its token requests and calls must come from; empty: any source. Matched against
   * the address Cloudflare's front names (workers/limits/requestSource.ts).
   */
  allowedNetworks: string[];
  created: string;
}

/** What the token check needs to know about a token's client on every call: is it still there, enabled, and allowed what. */
export interface ClientStanding {
  clientId: string;
  organizationId: string;
  disabled: boolean;
  scopes: Scope[];
  /** Where its calls may come from (canonical CIDR); empty: anywhere. */
  allowedNetworks: readonly string[];
}

/**
 * A client's scopes from names (space- or comma-separated text, or a list): known names only, `webapi` always held
 * (every token carries it), in SCOPES order. An unknown name is an error naming it.
 */
export function clientScopes(
  names: string | readonly string[],
): { ok: true; scopes: Scope[] } | { ok: false; message: string } {
  const list = typeof names === 'string' ? names.split(/[\s,]+/) : [...names];
  const wanted = new Set(list.map((n) => n.trim()).filter(Boolean));
  const unknown = [...wanted].filter((n) => !(SCOPES as readonly string[]).includes(n));
  if (unknown.length)
    return { ok: false, message: `unknown scope ${unknown.join(', ')}: the scopes are ${SCOPES.join(', ')}` };
  wanted.add(READ_SCOPE);
  return { ok: true, scopes: SCOPES.filter((s) => wanted.has(s)) };
}

/**
 * A client's allowed networks from entries (space- or comma-separated text, or a list): each a network in CIDR
 * notation or one address, canonical (`203.0.113.0/24`, `2001:db8::/32`, `198.51.100.7/32`), each once, in the order
 * given. The first entry that is none is an error naming it and the rule (`index`: its place in the list); so is a
 * list past MAX_CLIENT_NETWORKS (shared/catalog/registry.ts). No entries at all: any source.
 */
export function clientNetworks(
  entries: string | readonly string[],
): { ok: true; networks: string[] } | { ok: false; message: string; index?: number } {
  const list = (typeof entries === 'string' ? entries.split(/[\s,]+/) : [...entries])
    .map((e) => e.trim())
    .filter(Boolean);
  const networks: string[] = [];
  for (const [index, entry] of list.entries()) {
    const parsed = parseNetwork(entry);
    if (!parsed.ok) return { ok: false, message: parsed.reason, index };
    const text = networkText(parsed.network);
    if (!networks.includes(text)) networks.push(text);
  }
  if (networks.length > MAX_CLIENT_NETWORKS)
    return {
      ok: false,
      message: `a client may have at most ${MAX_CLIENT_NETWORKS} allowed networks, not ${networks.length}`,
    };
  return { ok: true, networks };
}

/** What the token endpoint needs to authenticate a client: the stored PBKDF2 parameters, never the secret. */
export interface ClientCredentials extends ApiClient {
  secret: { hash: string; salt: string; iterations: number };
}
