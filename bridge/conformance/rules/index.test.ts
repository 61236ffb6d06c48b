/**
 * The rule list: ids stable and unique (tests and broken-server checks name them), each with a one-line name, the
 * family rules listed only for their family, in the order the suite runs them.
 */
import { describe, expect, it } from 'vitest';
import { rulesFor } from '../suite.js';
import { RULES } from './index.js';

const COMMON = [
  'login.result-schema',
  'login.version-1',
  'login.version-absent',
  'login.unknown-version',
  'login.family',
  'login.wrong-password',
  'login.before-login',
  'login.malformed',
  'login.second-login',
  'ping.answer',
  'ping.during-snapshot',
  'ping.server-time',
  'capabilities.ping-declared',
  'capabilities.read-probes',
  'capabilities.undeclared-reads',
  'capabilities.write-probes',
  'capabilities.unknown-command',
  'snapshot.order',
  'snapshot.kinds',
  'snapshot.counts',
  'snapshot.keys',
  'snapshot.matches-live',
  'answers.concurrent',
  'frames.near-limit',
  'frames.non-json',
  'frames.binary',
  'frames.no-id',
];
const AFTER = ['reconnect.fresh-snapshot'];
const END = [
  'writes.cache-matches-live',
  'writes.restart',
  'answers.one-per-request',
  'answers.id-first',
  'answers.error-shape',
  'records.schema',
];
const PF4_WRITES = [
  'user-add',
  'user-update',
  'deposit',
  'trade-open',
  'trade-modify',
  'trade-close',
  'pending-order',
  'group-update',
  'symbols-refresh',
  'symbol-group-update',
  'news-send',
  'mail-send',
  'user-delete',
].map((id) => `writes.pf4.${id}`);
const PF5_WRITES = [
  'user-add',
  'user-update',
  'deposit',
  'position-open',
  'deal-update',
  'position-close',
  'order-place',
  'order-cancel',
  'group-update',
  'symbol-update',
].map((id) => `writes.pf5.${id}`);

describe('RULES', () => {
  it("lists each family's rules by their stable ids, in run order", () => {
    // The reconnect runs after the changes, before the PF4 account they made is deleted.
    expect(rulesFor('PF4').map((r) => r.id)).toEqual([
      ...COMMON,
      ...PF4_WRITES.slice(0, -1),
      ...AFTER,
      'writes.pf4.user-delete',
      ...END,
    ]);
    expect(rulesFor('PF5').map((r) => r.id)).toEqual([
      ...COMMON,
      'int64.bare-digits',
      'int64.round-trip',
      ...PF5_WRITES,
      ...AFTER,
      ...END,
    ]);
    expect(rulesFor(undefined)).toEqual(RULES);
  });

  it('names every rule in one line', () => {
    for (const rule of RULES) {
      expect(rule.id).toMatch(/^[a-z0-9]+(\.[a-z0-9-]+)+$/);
      expect(rule.name).toMatch(/^[^\n]{10,120}$/);
    }
  });
});
