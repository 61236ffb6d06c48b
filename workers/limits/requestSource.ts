/**
 * The source of a request, as the token endpoint counts failed authentications per source: the caller's address from
 * `CF-Connecting-IP`, which Cloudflare's front sets on every request (replacing any a caller sent). The header is
 * believed only on a request that came through such a front, known by its `request.cf` properties; the local edge's
 * own socket has neither, so there every caller is one shared source, `local`, and a caller cannot pose as many
 * sources by sending the header itself.
 *
 * An IPv4 address is its own source. An IPv6 address counts as its /64 network, the block one subscriber is usually
 * given, so the addresses of one host's network are one source. A value that is no IP address is the shared source
 * `unrecognised`.
 *
 * The same believed address is what an API client's allowed networks are matched against (`requestAddress`): a request
 * without one (the local edge's socket, a front that names none, a value that is no address) has no known source.
 */
import { addressBytes, addressText } from '../../shared/addressRanges.js';

export const LOCAL_SOURCE = 'local';
export const UNRECOGNISED_SOURCE = 'unrecognised';

/** The address Cloudflare's front names for the request, as text only a front can set. */
function frontAddress(request: Request): string | null {
  if (!(request as { cf?: unknown }).cf) return null;
  return request.headers.get('cf-connecting-ip')?.trim() || null;
}

/** The bytes of an address as a source: a zone id (`fe80::1%eth0`) names the interface, not the host, and is dropped. */
function sourceBytes(text: string): Uint8Array | null {
  const zone = text.indexOf('%');
  return addressBytes(zone >= 0 ? text.slice(0, zone) : text);
}

export function requestSource(request: Request): string {
  const address = frontAddress(request);
  if (address === null) return LOCAL_SOURCE;
  const bytes = sourceBytes(address);
  if (bytes === null) return UNRECOGNISED_SOURCE;
  if (bytes.length === 4) return addressText(bytes);
  const groups = Array.from({ length: 4 }, (_, i) => ((bytes[2 * i] << 8) | bytes[2 * i + 1]).toString(16));
  return `${groups.join(':')}::/64`;
}

/** The request's source address as Cloudflare's front names it, in its canonical text; null when it is not known. */
export function requestAddress(request: Request): string | null {
  const address = frontAddress(request);
  const bytes = address === null ? null : sourceBytes(address);
  return bytes === null ? null : addressText(bytes);
}
