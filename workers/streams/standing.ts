/**
 * Whether a long-lived stream client (an SSE response or a hub socket) may go on receiving, decided again while it is
 * open, not only when it connected: a stream is closed once its token expires, once its client is disabled, removed,
 * moved to another organization or no longer holds the streams' scope (`webapi`), once the client's allowed networks
 * no longer hold the address the stream was opened from (auth/allowedNetworks.ts), and once its platform is removed or
 * moved to another organization. The stream object asks every REGISTRY_CACHE_SECONDS (`recheckMs`), so a stream stops
 * within the same bound as the REST routes.
 *
 * Pure logic: the object reads the registry and hands the rows in.
 */
import type { ClientStanding } from '../registry/records.js';
import { SCOPE } from '../auth/authConfig.js';
import { sourceRefusal } from '../auth/allowedNetworks.js';

/** Who opened a stream, as the token said when it connected. */
export interface StreamCaller {
  clientId: string;
  organizationId: string;
  /** When the edge stops accepting the token (epoch ms): its exp plus TOKEN_CLOCK_TOLERANCE_SECONDS. */
  expiresAt: number;
  /** The source address it connected from, as Cloudflare's front named it; null or absent: not known. */
  address?: string | null;
}

export type StreamEnd = {
  /** `TokenExpired` may reconnect at once with a new token; the others are refused until the registry changes. */
  code: 'TokenExpired' | 'ClientRevoked' | 'ScopeRemoved' | 'SourceNotAllowed' | 'PlatformRemoved';
  message: string;
  reconnect: boolean;
};

/** What the object read of the registry for one check. */
export interface RegistryView {
  /** The client's standing; null when it is no longer registered. */
  standing: ClientStanding | null;
  /** The organization the platform belongs to now; null when it is no longer registered. */
  platformOrganization: string | null;
  /** External identity provider mode: a client the provider vouches for need not be registered here. */
  externalClients: boolean;
}

/** Null while the stream may go on; else why it ends. */
export function streamEnd(caller: StreamCaller, now: number, view: RegistryView): StreamEnd | null {
  if (now >= caller.expiresAt) {
    return { code: 'TokenExpired', message: 'the access token expired: reconnect with a new token', reconnect: true };
  }
  const org = caller.organizationId.toLowerCase();
  if (view.platformOrganization === null || view.platformOrganization.toLowerCase() !== org) {
    return {
      code: 'PlatformRemoved',
      message: 'the trade platform is no longer registered to this organization',
      reconnect: false,
    };
  }
  const { standing } = view;
  if (standing === null) {
    if (view.externalClients) return null;
    return { code: 'ClientRevoked', message: 'the client is disabled or no longer registered', reconnect: false };
  }
  if (standing.disabled || standing.organizationId.toLowerCase() !== org) {
    return { code: 'ClientRevoked', message: 'the client is disabled or no longer registered', reconnect: false };
  }
  if (!standing.scopes.includes(SCOPE)) {
    return {
      code: 'ScopeRemoved',
      message: `the client no longer holds the ${SCOPE} scope the streams need`,
      reconnect: false,
    };
  }
  const outside = sourceRefusal(caller.clientId, standing.allowedNetworks, caller.address ?? null);
  if (outside) return { code: 'SourceNotAllowed', message: outside, reconnect: false };
  return null;
}

/** How often open streams are checked: REGISTRY_CACHE_SECONDS, at least every second (0 means "always read"). */
export function recheckMs(cacheSeconds: number): number {
  return Math.max(1000, Math.round(cacheSeconds * 1000));
}
