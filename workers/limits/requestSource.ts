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
 */

export const LOCAL_SOURCE = 'local';
export const UNRECOGNISED_SOURCE = 'unrecognised';

export function requestSource(request: Request): string {
  if (!(request as { cf?: unknown }).cf) return LOCAL_SOURCE;
  const address = request.headers.get('cf-connecting-ip')?.trim();
  if (!address) return LOCAL_SOURCE;
  return ipv4(address) ?? ipv6Network(address) ?? UNRECOGNISED_SOURCE;
}

function ipv4(text: string): string | null {
  const parts = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!parts) return null;
  const bytes = parts.slice(1).map(Number);
  return bytes.every((b) => b <= 255) ? bytes.join('.') : null;
}

/** The /64 network of an IPv6 address (`2001:db8:0:1::/64`); an IPv4-mapped address is that IPv4 address. */
function ipv6Network(text: string): string | null {
  let rest = text.toLowerCase();
  const zone = rest.indexOf('%');
  if (zone >= 0) rest = rest.slice(0, zone);
  // A dotted IPv4 tail stands for the last two groups.
  const tail = /^(.*:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(rest);
  if (tail) {
    const v4 = ipv4(tail[2]);
    if (!v4) return null;
    const [a, b, c, d] = v4.split('.').map(Number);
    rest = `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const end = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - end.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...end];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  const values = groups.map((g) => parseInt(g, 16));
  if (values.slice(0, 5).every((v) => v === 0) && values[5] === 0xffff) {
    return [values[6] >> 8, values[6] & 0xff, values[7] >> 8, values[7] & 0xff].join('.');
  }
  return `${values
    .slice(0, 4)
    .map((v) => v.toString(16))
    .join(':')}::/64`;
}
