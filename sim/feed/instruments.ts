/**
 * The instruments a simulated server quotes: a hand-written list of familiar names first, then synthetic ones when a
 * server is configured with more symbols than that. Both families build their symbol records from these.
 */
import { Random } from '../world/random.js';

export type InstrumentKind = 'forex' | 'metal' | 'index' | 'energy' | 'crypto';

export interface Instrument {
  /** At most 12 characters (PF4 limit). */
  symbol: string;
  description: string;
  kind: InstrumentKind;
  digits: number;
  /** Mid price the walk starts from. */
  basePrice: number;
  contractSize: number;
  /** Spread in points. */
  spread: number;
  /** Currency the price is quoted in (profit currency). */
  profitCurrency: string;
  /** Currency margin is computed in (the base currency for forex). */
  marginCurrency: string;
  /** Security group index (PF4 `type`). */
  securityGroup: number;
}

type Row = [
  symbol: string,
  description: string,
  kind: InstrumentKind,
  digits: number,
  price: number,
  contract: number,
  spread: number,
];

const KNOWN: Row[] = [
  ['EURUSD', 'Euro vs US Dollar', 'forex', 5, 1.085, 100000, 12],
  ['GBPUSD', 'Great Britain Pound vs US Dollar', 'forex', 5, 1.27, 100000, 15],
  ['USDJPY', 'US Dollar vs Japanese Yen', 'forex', 3, 151.2, 100000, 14],
  ['USDCHF', 'US Dollar vs Swiss Franc', 'forex', 5, 0.885, 100000, 16],
  ['AUDUSD', 'Australian Dollar vs US Dollar', 'forex', 5, 0.655, 100000, 14],
  ['USDCAD', 'US Dollar vs Canadian Dollar', 'forex', 5, 1.36, 100000, 18],
  ['NZDUSD', 'New Zealand Dollar vs US Dollar', 'forex', 5, 0.605, 100000, 20],
  ['EURGBP', 'Euro vs Great Britain Pound', 'forex', 5, 0.855, 100000, 15],
  ['EURJPY', 'Euro vs Japanese Yen', 'forex', 3, 164.1, 100000, 18],
  ['XAUUSD', 'Gold vs US Dollar', 'metal', 2, 2350, 100, 30],
  ['XAGUSD', 'Silver vs US Dollar', 'metal', 3, 28.5, 5000, 25],
  ['BTCUSD', 'Bitcoin vs US Dollar', 'crypto', 2, 65000, 1, 2500],
  ['US30', 'Dow Jones Industrial Average', 'index', 1, 39000, 1, 20],
  ['GER40', 'Germany 40 Index', 'index', 1, 18000, 1, 15],
  ['USOIL', 'US Crude Oil', 'energy', 2, 78.5, 1000, 4],
  ['GBPJPY', 'Great Britain Pound vs Japanese Yen', 'forex', 3, 192.3, 100000, 25],
  ['AUDJPY', 'Australian Dollar vs Japanese Yen', 'forex', 3, 99.1, 100000, 20],
  ['EURCHF', 'Euro vs Swiss Franc', 'forex', 5, 0.96, 100000, 18],
  ['ETHUSD', 'Ethereum vs US Dollar', 'crypto', 2, 3400, 1, 300],
  ['UK100', 'UK 100 Index', 'index', 1, 8100, 1, 15],
];

const SECURITY_GROUP: Record<InstrumentKind, number> = { forex: 0, metal: 1, index: 2, energy: 3, crypto: 4 };

export const SECURITY_GROUP_NAMES = ['Forex', 'Metals', 'Indices', 'Energies', 'Crypto'];

function currencies(symbol: string, kind: InstrumentKind): [profit: string, margin: string] {
  if (kind === 'forex' || kind === 'metal' || kind === 'crypto') return [symbol.slice(3, 6), symbol.slice(0, 3)];
  return ['USD', 'USD'];
}

/** The first `count` instruments; synthetic ones (`SYN00021`...) are seeded so the same seed gives the same list. */
export function buildInstruments(count: number, random: Random): Instrument[] {
  const list: Instrument[] = [];
  for (let i = 0; i < count; i++) {
    const known = KNOWN[i];
    if (known) {
      const [symbol, description, kind, digits, basePrice, contractSize, spread] = known;
      const [profitCurrency, marginCurrency] = currencies(symbol, kind);
      list.push({
        symbol,
        description,
        kind,
        digits,
        basePrice,
        contractSize,
        spread,
        profitCurrency,
        marginCurrency,
        securityGroup: SECURITY_GROUP[kind],
      });
    } else {
      const digits = random.pick([2, 3, 5]);
      const basePrice =
        digits === 5 ? random.range(0.5, 2) : digits === 3 ? random.range(20, 200) : random.range(100, 5000);
      list.push({
        symbol: `SYN${String(i + 1).padStart(5, '0')}`,
        description: `Synthetic instrument ${i + 1}`,
        kind: 'index',
        digits,
        basePrice,
        contractSize: digits === 5 ? 100000 : 100,
        spread: random.int(5, 40),
        profitCurrency: 'USD',
        marginCurrency: 'USD',
        securityGroup: SECURITY_GROUP.index,
      });
    }
  }
  return list;
}

export function pointOf(instrument: Instrument): number {
  return Number((10 ** -instrument.digits).toFixed(instrument.digits));
}

export function roundTo(value: number, digits: number): number {
  return Number(value.toFixed(digits));
}
