/**
 * The re-check of a stream object's clients, every REGISTRY_CACHE_SECONDS: each stream whose token expired, whose
 * client lost its standing or whose platform left its organization is ended (standing.ts decides), SSE with a last
 * `closed` event, a hub socket with a Close message (allowing a reconnect when only the token expired). The registry
 * is read once for the platform and once per 100 clients; one check runs at a time.
 */
import type { RegistryStore } from '../registry/registryStore.js';
import type { StreamClient } from './clients.js';
import { streamEnd, type StreamCaller } from './standing.js';
import type { StreamConfig } from './streamRequest.js';

/** What the check reads of the registry. */
export type StandingRegistry = Pick<RegistryStore, 'findAnyPlatform' | 'findClientStandings'>;

/** What the check needs of its stream object. */
export interface StandingHost {
  /** Every client the object has. */
  clients(): StreamClient[];
  /** The registry, read once per check. */
  registry(): StandingRegistry;
  /** External identity provider mode: a client the provider vouches for need not be registered here. */
  externalClients(): boolean;
}

export class StandingCheck {
  private checking = false;

  constructor(private readonly host: StandingHost) {}

  /**
   * Ends the streams of the object's clients that may not go on; answers how many it ended. A registry that cannot be read ends
   * none: the streams go on, and the next check tries again.
   */
  async run(config: StreamConfig): Promise<number> {
    if (this.checking) return 0;
    const clients = this.host.clients();
    if (clients.length === 0) return 0;
    this.checking = true;
    try {
      const registry = this.host.registry();
      const ids = new Set<string>();
      for (const client of clients) ids.add(client.caller.clientId);
      const [platform, standingOf] = await Promise.all([
        registry.findAnyPlatform(config.platform),
        registry.findClientStandings([...ids]),
      ]);
      const platformOrganization =
        platform && platform.platform.type === config.family ? platform.platform.organizationId : null;
      const externalClients = this.host.externalClients();
      const now = Date.now();
      const endOf = (caller: StreamCaller) =>
        streamEnd(caller, now, {
          standing: standingOf.get(caller.clientId) ?? null,
          platformOrganization,
          externalClients,
        });
      let ended = 0;
      for (const client of clients) {
        if (client.closed) continue;
        const end = endOf(client.caller);
        if (end) {
          client.end(end);
          ended++;
        }
      }
      return ended;
    } catch (error) {
      console.warn(
        JSON.stringify({
          msg: 'stream clients could not be re-checked',
          platform: config.platform,
          error: String(error),
        }),
      );
      return 0;
    } finally {
      this.checking = false;
    }
  }
}
