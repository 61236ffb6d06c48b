/**
 * The registry's public records, shaped as the service spec's "Registry records" (TradePlatform, Organization), and
 * the admin-side view of an API client. Kept free of Worker globals so the Node registry CLI can import it too.
 */

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

/** A platform as the edge routes it: the public record plus the broker that serves it (never sent to callers). */
export interface PlatformEntry {
  platform: TradePlatform;
  /** Base URL of the broker serving this platform; null means the edge's BROKER_URL. */
  brokerUrl: string | null;
}

/** An API client without its secret material: what admin listings show. */
export interface ApiClient {
  clientId: string;
  organizationId: string;
  name: string | null;
  disabled: boolean;
  /** OAuth2 grant types the client may use; `client_credentials` unless registered otherwise. */
  grantTypes: string[];
  created: string;
}

/** What the token endpoint needs to authenticate a client: the stored PBKDF2 parameters, never the secret. */
export interface ClientCredentials extends ApiClient {
  secret: { hash: string; salt: string; iterations: number };
}
