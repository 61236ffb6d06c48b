/** Generated accounts: the draws every family's accounts start from, and the stream they share with the family's own. */
import { describe, expect, it } from 'vitest';
import { DAY_MS, seedAccounts, WORLD_ANCHOR_MS, type SeededAccount, type SeedGroup } from './people.js';
import { Random } from './random.js';

const GROUPS: SeedGroup[] = [
  { group: 'often', deposit: 5000, weight: 3 },
  { group: 'rarely', deposit: 0, weight: 1 },
];

function seeded(seed: number, count: number, alsoDraw = false): SeededAccount<SeedGroup>[] {
  const random = new Random(seed);
  const accounts: SeededAccount<SeedGroup>[] = [];
  seedAccounts(random, GROUPS, 700, count, (account) => {
    accounts.push(account);
    if (alsoDraw) random.next();
  });
  return accounts;
}

describe('seeded accounts', () => {
  it('numbers the accounts from the first login and draws groups by weight, deposits and registrations', () => {
    const accounts = seeded(3, 400);
    expect(accounts.map((a) => a.login)).toEqual(Array.from({ length: 400 }, (_, i) => 700 + i));
    const often = accounts.filter((a) => a.group.group === 'often');
    expect(often.length).toBeGreaterThan(260);
    expect(often.length).toBeLessThan(340);
    expect(new Set(often.map((a) => a.balance))).toEqual(new Set([5000]));
    for (const a of accounts.filter((x) => x.group.group === 'rarely')) {
      expect(a.balance).toBeGreaterThanOrEqual(100);
      expect(a.balance).toBeLessThan(50_000);
      expect(a.balance).toBe(Math.round(a.balance * 100) / 100);
    }
    for (const a of accounts) {
      expect(a.registered).toBeLessThanOrEqual(WORLD_ANCHOR_MS);
      expect(a.registered).toBeGreaterThanOrEqual(WORLD_ANCHOR_MS - 900 * DAY_MS);
      expect(a.person.firstName.length).toBeGreaterThan(0);
    }
  });

  it('draws the same accounts from the same seed, and what the family draws for one comes before the next', () => {
    expect(seeded(3, 20)).toEqual(seeded(3, 20));
    const plain = seeded(3, 20);
    const interleaved = seeded(3, 20, true);
    expect(interleaved[0]).toEqual(plain[0]);
    expect(interleaved.slice(1).map((a) => a.person)).not.toEqual(plain.slice(1).map((a) => a.person));
  });
});
