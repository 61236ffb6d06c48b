/**
 * What a PF4 server keeps on its records besides the contract's fields, and sends on the manager wire as a real
 * manager interface does: account password hashes and second-factor data, a group's report mailer credentials and
 * template path, the feeders' and history sources' passwords, the watchdog pair's (slave server's) password. The
 * contract leaves every one of them out, so a gateway must drop them from what it answers and can never send them
 * back: the records a command receives are checked against the strict contract schemas, which refuse them. A write
 * therefore keeps them (a merge, or the replaced entry's value carried over), and only the server itself sets them.
 *
 * They are derived from the server's seed and the record's key, so a world is reproducible and no two records share
 * one, without drawing from the generators that shape the rest of the world.
 */
/** Server-only fields by record kind (documented in sim/README.md, "Server-only fields"). */
export const PF4_SERVER_ONLY = {
  /** Hex hashes of the main and investor passwords ("" when none is set), phone password, OTP secret, API blob. */
  user: ['password', 'passwordInvestor', 'passwordPhone', 'otpSecret', 'apiData'],
  /** The report mailer (server address, login, password), the report template path, the securities hash. */
  group: ['smtpServer', 'smtpLogin', 'smtpPassword', 'templates', 'securitiesHash'],
  feeder: ['password'],
  sync: ['password'],
  /** The slave server's password of the watchdog pair (beside the contract's watchLogin). */
  backup: ['watchPassword'],
} as const satisfies Record<string, readonly string[]>;

export type Pf4ServerOnlyKind = keyof typeof PF4_SERVER_ONLY;

/** The record without its server-only fields: what a manager may send back after reading it. */
export function withoutServerOnly<T extends Record<string, unknown>>(kind: Pf4ServerOnlyKind, record: T): T {
  const out: Record<string, unknown> = { ...record };
  for (const field of PF4_SERVER_ONLY[kind]) delete out[field];
  return out as T;
}

/** The server-only fields of a record, as stored. */
export function serverOnlyOf(kind: Pf4ServerOnlyKind, record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of PF4_SERVER_ONLY[kind]) if (record[field] !== undefined) out[field] = record[field];
  return out;
}

/**
 * 128 bits from a text: four 32-bit lanes, each a multiply-xorshift mix of every character (cheap enough for a world
 * of 100 000 accounts at start-up; a simulator's password "hash" needs to be a fixed function, not a strong one).
 */
function digest(text: string): Uint8Array {
  let h1 = 0x6a09e667,
    h2 = 0xbb67ae85,
    h3 = 0x3c6ef372,
    h4 = 0xa54ff53a;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  const out = new Uint8Array(16);
  const view = new DataView(out.buffer);
  view.setUint32(0, h1 >>> 0);
  view.setUint32(4, h2 >>> 0);
  view.setUint32(8, h3 >>> 0);
  view.setUint32(12, h4 >>> 0);
  return out;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
function hex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
}

/** A password as the server stores it: a 32-digit hex hash of login and password; "" for none (matches nothing). */
export function passwordHash(login: number, password: string): string {
  return password === '' ? '' : hex(digest(`${login}:${password}`));
}

/** A secret the server made up, fixed by the seed and what it belongs to: `length` characters of `alphabet`. */
export function derivedSecret(
  seed: number | string,
  of: string,
  length = 16,
  alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789',
): string {
  let out = '';
  for (let round = 0; out.length < length; round++) {
    const bytes = digest(`${seed}/${of}/${round}`);
    for (let i = 0; i < bytes.length && out.length < length; i++) out += alphabet[bytes[i] % alphabet.length];
  }
  return out;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The second-factor and API data of a generated account; the password hashes come from its passwords. */
export function accountSecrets(seed: number, login: number, main: string, investor: string): Record<string, string> {
  return {
    password: passwordHash(login, main),
    passwordInvestor: passwordHash(login, investor),
    passwordPhone: derivedSecret(seed, `phone/${login}`, 8, '0123456789'),
    otpSecret: derivedSecret(seed, `otp/${login}`, 16, BASE32),
    apiData: derivedSecret(seed, `api/${login}`, 24, BASE64),
  };
}

/** A new account (created or restored) has no password, phone password, second factor or API data yet. */
export const NO_ACCOUNT_SECRETS: Readonly<Record<string, string>> = Object.freeze({
  password: '',
  passwordInvestor: '',
  passwordPhone: '',
  otpSecret: '',
  apiData: '',
});
