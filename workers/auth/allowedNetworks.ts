/**
 * An API client's allowed networks (docs/api.md, "Allowed networks"): a client registered with networks may obtain
 * tokens, call the API and hold streams only from a source address inside one of them, the address Cloudflare's front
 * names (`requestAddress`, workers/limits/requestSource.ts). A request whose source is not known (the local edge's own
 * socket, a front that names none) is outside every list. A refusal names the rule and the request's own address,
 * never the client's networks; each is counted in `/metrics` (`edge_source_refused_total`, by where it was refused).
 *
 * The list is read with the client's standing (cached for REGISTRY_CACHE_SECONDS like its scopes), so a changed list
 * holds issued tokens within that bound and open streams at their next re-check (streams/standing.ts).
 */
import { addressBytes, networkContains, parseNetwork, type Network } from '../../shared/addressRanges.js';

/** The parsed networks of one standing's list (a re-read standing is a new list). */
const parsed = new WeakMap<readonly string[], Network[]>();

function networksOf(list: readonly string[]): Network[] {
  let networks = parsed.get(list);
  if (!networks) {
    // An entry this edge cannot read (a newer release wrote it) matches nothing: the list fails closed.
    networks = list.flatMap((entry) => {
      const one = parseNetwork(entry);
      return one.ok ? [one.network] : [];
    });
    parsed.set(list, networks);
  }
  return networks;
}

/**
 * Why a request of `clientId` from `address` (its text as `requestAddress` writes it; null when unknown) is refused,
 * or null when the client has no list or the address is inside it.
 */
export function sourceRefusal(clientId: string, allowed: readonly string[], address: string | null): string | null {
  if (allowed.length === 0) return null;
  const bytes = address === null ? null : addressBytes(address);
  if (bytes !== null && networksOf(allowed).some((network) => networkContains(network, bytes))) return null;
  return bytes === null
    ? `client ${clientId} may be used only from its allowed networks, and this request's source address is not known (only Cloudflare's front names it)`
    : `client ${clientId} may be used only from its allowed networks, and this request comes from ${address}`;
}
