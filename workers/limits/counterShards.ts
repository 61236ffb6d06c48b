/**
 * Which counter object counts a key of a purpose whose keys have no bound: the failures of source addresses
 * (`token-fail`, rateLimit.ts). A caller picks its addresses, so an object per address would let a flood from ever
 * new addresses make ever new objects; instead the purpose has TOKEN_FAILURE_SHARDS objects, `<purpose>#<n>`, and each
 * address is counted in one of them (ClientRateLimiter keeps many keys' windows, at most MAX_COUNTED_KEYS, quota.ts).
 *
 * The object is picked by HMAC-SHA-256 of the key under the deployment's secret, so every isolate picks the same one
 * and a caller cannot choose addresses that all land on one object. Changing the secret or the number of objects
 * moves addresses to objects that do not know them: their counts start afresh, for one window at most.
 *
 * Free of Worker types (WebCrypto only), so unit tests import it.
 */

/** The name of the purpose's object `n`. */
export function shardName(purpose: string, n: number): string {
  return `${purpose}#${n}`;
}

/** The HMAC key of the last secret used: one secret per deployment, imported once per isolate. */
let imported: { secret: string; key: Promise<CryptoKey> } | undefined;

function hmacKey(secret: string): Promise<CryptoKey> {
  if (imported?.secret !== secret) {
    // A key of this use alone (never empty, even without a secret): nothing else is ever computed under it.
    const material = new TextEncoder().encode(`counter shards\n${secret}`);
    imported = {
      secret,
      key: crypto.subtle.importKey('raw', material, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
    };
  }
  return imported.key;
}

/** Which of `shards` objects counts `key`, keyed by `secret`: from 0 to `shards` − 1. */
export async function shardOf(secret: string, key: string, shards: number): Promise<number> {
  const mac = new DataView(await crypto.subtle.sign('HMAC', await hmacKey(secret), new TextEncoder().encode(key)));
  // 48 bits of the MAC: the remainder is as even as makes no difference for at most 256 objects.
  return (mac.getUint32(0) * 0x10000 + mac.getUint16(4)) % shards;
}
