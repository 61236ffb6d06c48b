/**
 * Invented account holders: names, places and contact details for demo accounts. All made up; e-mail addresses use
 * the reserved example.com domain and phone numbers the fictional 555 range.
 */
import type { Random } from './random.js';

const FIRST = [
  'Anna',
  'Ben',
  'Carla',
  'David',
  'Elena',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kira',
  'Liam',
  'Maya',
  'Noah',
  'Olga',
  'Pavel',
  'Quinn',
  'Rosa',
  'Sami',
  'Tara',
  'Umar',
  'Vera',
  'Wei',
  'Yara',
  'Zoe',
];
const LAST = [
  'Adler',
  'Brooks',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Hansen',
  'Ivanova',
  'Jensen',
  'Kowalski',
  'Lopez',
  'Moreau',
  'Nakamura',
  'Okafor',
  'Petrov',
  'Rossi',
  'Schmidt',
  'Tanaka',
  'Weber',
];
const PLACES: Array<[country: string, city: string, zip: string]> = [
  ['United Kingdom', 'London', 'EC1A 1BB'],
  ['Germany', 'Berlin', '10115'],
  ['Cyprus', 'Limassol', '3035'],
  ['Spain', 'Madrid', '28001'],
  ['Japan', 'Tokyo', '100-0001'],
  ['Australia', 'Sydney', '2000'],
  ['Canada', 'Toronto', 'M5H 2N2'],
  ['Singapore', 'Singapore', '018956'],
  ['Poland', 'Warsaw', '00-001'],
  ['Brazil', 'Sao Paulo', '01000-000'],
];
const STREETS = ['Market Street', 'High Street', 'Harbour Road', 'Station Avenue', 'Park Lane', 'Mill Road'];

export interface Person {
  firstName: string;
  lastName: string;
  country: string;
  city: string;
  zipCode: string;
  address: string;
  phone: string;
}

export function invent(random: Random): Person {
  const [country, city, zipCode] = random.pick(PLACES);
  return {
    firstName: random.pick(FIRST),
    lastName: random.pick(LAST),
    country,
    city,
    zipCode,
    address: `${random.int(1, 250)} ${random.pick(STREETS)}`,
    phone: `+1 555 ${String(random.int(0, 9999999)).padStart(7, '0')}`,
  };
}

export function emailOf(person: Person, login: number): string {
  return `${person.firstName}.${person.lastName}.${login}@example.com`.toLowerCase();
}

/** Fixed anchor for invented dates, so the same seed gives byte-identical records whatever day the sim runs. */
export const WORLD_ANCHOR_MS = Date.UTC(2025, 5, 1);
export const DAY_MS = 86_400_000;

/** A moment `0..days` days before the anchor, whole seconds. */
export function daysBeforeAnchor(random: Random, days: number): number {
  return WORLD_ANCHOR_MS - Math.floor((random.next() * days * DAY_MS) / 1000) * 1000;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A group generated accounts are drawn into: `weight` times as often as a group of weight 1, opening with `deposit`. */
export interface SeedGroup {
  group: string;
  /** The opening balance of its accounts; 0 draws one from 100 to 50,000. */
  deposit: number;
  weight: number;
}

/** What every generated account starts from, whatever its family. */
export interface SeededAccount<G extends SeedGroup> {
  login: number;
  person: Person;
  group: G;
  registered: number;
  balance: number;
}

/**
 * Generates `count` accounts from `firstLogin` on. Each draws its holder, its group by weight, its registration up to
 * 900 days before the anchor and its opening balance; then `add` makes the family's record of it, drawing what else
 * it needs from the same stream before the next account draws.
 */
export function seedAccounts<G extends SeedGroup>(
  random: Random,
  groups: readonly G[],
  firstLogin: number,
  count: number,
  add: (account: SeededAccount<G>) => void,
): void {
  const weighted = groups.flatMap((g) => Array<G>(g.weight).fill(g));
  for (let i = 0; i < count; i++) {
    const login = firstLogin + i;
    const person = invent(random);
    const group = random.pick(weighted);
    const registered = daysBeforeAnchor(random, 900);
    const balance = group.deposit > 0 ? group.deposit : cents(random.range(100, 50000));
    add({ login, person, group, registered, balance });
  }
}

/** Money amounts are kept to cents. */
export function cents(value: number): number {
  return Math.round(value * 100) / 100;
}
