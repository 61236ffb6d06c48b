/**
 * Where a webhook may be sent. On a deployed edge: an `https` URL without credentials, whose host is a public name or
 * address — never loopback, private, carrier-grade NAT, link-local (cloud metadata at 169.254.169.254 included),
 * unique-local, multicast or otherwise reserved, and never a name that resolves to one (checked when the endpoint is
 * registered or changed, and again before deliveries, through DNS over HTTPS). IPv6 forms that embed an IPv4
 * address (IPv4-compatible, NAT64, 6to4) are refused whole. Locally, `WEBHOOK_PRIVATE_TARGETS=1`
 * lets `http` and private addresses through (the tests' receivers listen on 127.0.0.1); nothing else does.
 */
import { addressBytes, networkContains, parseNetwork, type Network } from '../../shared/addressRanges.js';

/** The longest URL an endpoint may have. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const BLOCKED = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '2002::/16',
  '100::/64',
  '2001:db8::/32',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
].map((text) => {
  const parsed = parseNetwork(text);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.network;
});

/** Names that are never public: the machine itself, and the suffixes private networks and clouds use. */
const PRIVATE_NAME = /(^|\.)(localhost|local|internal|intranet|lan|home\.arpa|localdomain)$/i;

/** Whether an address (as text) is in a range no webhook may reach. */
export function isBlockedAddress(address: string): boolean {
  const bytes = addressBytes(address);
  return bytes === null || BLOCKED.some((network: Network) => networkContains(network, bytes));
}

/** Answers the addresses a name resolves to (A and AAAA); throws when it cannot tell. */
export type Resolver = (host: string) => Promise<string[]>;

/** Whether private targets are allowed (`WEBHOOK_PRIVATE_TARGETS=1`, a local setting) and how names resolve. */
export interface TargetRules {
  allowPrivate: boolean;
  resolve: Resolver;
}

/** Why `url` may not be an endpoint's target, naming the rule; null when it may be. Resolves its host when it must. */
export async function targetProblem(url: string, rules: TargetRules): Promise<string | null> {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'url must not carry credentials';
  if (parsed.hash) return 'url must not have a fragment';
  if (rules.allowPrivate) {
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? null : 'url must be http or https';
  }
  if (parsed.protocol !== 'https:') return 'url must be https';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (addressBytes(host) !== null) {
    return isBlockedAddress(host) ? `url's host ${host} is not a public address` : null;
  }
  if (!host.includes('.') || PRIVATE_NAME.test(host)) return `url's host ${host} is not a public name`;
  let addresses: string[];
  try {
    addresses = await rules.resolve(host);
  } catch {
    return `url's host ${host} could not be resolved`;
  }
  if (addresses.length === 0) return `url's host ${host} does not resolve`;
  const blocked = addresses.find(isBlockedAddress);
  return blocked ? `url's host ${host} resolves to ${blocked}, which is not a public address` : null;
}

interface DnsAnswer {
  Status: number;
  Answer?: Array<{ type: number; data: string }>;
}

/** A and AAAA records of `host` through DNS over HTTPS (Cloudflare's resolver, JSON form). */
export const dnsOverHttps: Resolver = async (host) => {
  const ask = async (type: 'A' | 'AAAA') => {
    const response = await fetch(`https://cloudflare-dns.com/dns-query?name=${encodeURIComponent(host)}&type=${type}`, {
      headers: { accept: 'application/dns-json' },
    });
    if (!response.ok) throw new Error(`DNS over HTTPS answered ${response.status}`);
    const answer = (await response.json()) as DnsAnswer;
    if (answer.Status !== 0 && answer.Status !== 3) throw new Error(`DNS status ${answer.Status}`);
    return (answer.Answer ?? []).filter((a) => a.type === (type === 'A' ? 1 : 28)).map((a) => a.data);
  };
  const [a, aaaa] = await Promise.all([ask('A'), ask('AAAA')]);
  return [...a, ...aaaa];
};
