/**
 * PF4 records as the simulator keeps and sends them: field names and types follow the contract schemas (PF4User,
 * PF4Trade, PF4Group, PF4SymbolConfig, PF4TickInfo in shared/records/contract.ts). Only fields the simulator gives a
 * meaningful value are present; everything in the contract is optional. Accounts and groups also carry the server-only
 * fields of `serverOnlyFields.ts` (password hashes, the report mailer's credentials, ...), which the contract leaves out.
 */
import type { Instrument } from '../feed/instruments.js';
import { pointOf } from '../feed/instruments.js';
import type { Quote } from '../feed/quoteFeed.js';
import { iso } from '../world/people.js';
import { derivedSecret } from './serverOnlyFields.js';

export interface PF4UserRecord {
  login: number;
  group: string;
  name: string;
  registrationDate: string;
  lastDate: string;
  externalId: string;
  status: string;
  country: string;
  city: string;
  state: string;
  zipCode: string;
  address: string;
  leadSource: string;
  phone: string;
  email: string;
  comment: string;
  leverage: number;
  agentAccount: number;
  lastIP: number;
  balance: number;
  credit: number;
  prevMonthBalance: number;
  prevBalance: number;
  prevMonthEquity: number;
  prevEquity: number;
  interestRate: number;
  taxes: number;
  enableFlags: number;
  sendReports: number;
  mqid: number;
  userColor: number;
  /** Server-only (PF4_SERVER_ONLY.user): password hashes ("" when none is set), phone password, OTP secret, API data. */
  password: string;
  passwordInvestor: string;
  passwordPhone: string;
  otpSecret: string;
  apiData: string;
}

export type PF4Command = 'Buy' | 'Sell' | 'BuyLimit' | 'SellLimit' | 'BuyStop' | 'SellStop';
/** History also holds balance and credit entries. */
export type PF4HistoryCommand = PF4Command | 'Balance' | 'Credit';

/** An open trade as stored; `profit` and `closePrice` are derived from the current quote when sent. */
export interface PF4TradeRow {
  order: number;
  login: number;
  symbol: string;
  digits: number;
  tradeCommand: PF4Command;
  volume: number;
  openPrice: number;
  sl: number;
  tp: number;
  openTime: string;
  expiration?: string;
  commission: number;
  storage: number;
  magic: number;
  comment: string;
  tradeRecordReason: 'Client' | 'Expert' | 'Dealer' | 'API';
  timeStamp: string;
  /** Set when an activation was rolled back (SLRollback, ...) or the trade was restored from a backup. */
  activationType?: PF4ActivationType;
  state?: 'OpenNormal' | 'OpenRestored';
}

export type PF4ActivationType =
  | 'None'
  | 'SL'
  | 'TP'
  | 'Pending'
  | 'Stopout'
  | 'StopOutRollback'
  | 'PendingRollback'
  | 'TPRollback'
  | 'SLRollback';

export type PF4TradeState = 'OpenNormal' | 'OpenRestored' | 'ClosedNormal' | 'ClosedPart' | 'Deleted';

/** A trade as sent: open trades from their row and the quote, closed ones (history) as stored. */
export interface PF4TradeRecord extends Omit<PF4TradeRow, 'tradeCommand' | 'state'> {
  tradeCommand: PF4HistoryCommand;
  volumeLots: number;
  tradeRecordState: PF4TradeState;
  closeTime?: string;
  closePrice: number;
  commissionAgent: number;
  profit: number;
  taxes: number;
  activationType: PF4ActivationType;
  marginRate: number;
}

export interface PF4TickRecord {
  symbol: string;
  time: string;
  bid: number;
  ask: number;
}

export interface PF4GroupRecord {
  group: string;
  enable: number;
  maxSecurities: number;
  secMarginsTotal: number;
  timeout: number;
  otpMode: 'Disabled';
  company: string;
  supportPage: string;
  supportEmail: string;
  defaultLeverage: number;
  defaultDeposit: number;
  currency: string;
  credit: number;
  marginCall: number;
  marginMode: 'UseAll';
  marginStopout: number;
  interestRate: number;
  useSwap: number;
  newsMode: 'Full';
  maxPositions: number;
  hedgeProhibited: number;
  closeFIFO: number;
  marginControllingType: 'Percent';
  /** Server-only (PF4_SERVER_ONLY.group): the report mailer, the report template path, the securities hash. */
  smtpServer: string;
  smtpLogin: string;
  smtpPassword: string;
  templates: string;
  securitiesHash: string;
}

export const PF4_GROUPS: ReadonlyArray<{ group: string; leverage: number; deposit: number; weight: number }> = [
  { group: 'demo\\forex', leverage: 100, deposit: 10000, weight: 4 },
  { group: 'demo\\pro', leverage: 500, deposit: 50000, weight: 1 },
  { group: 'real\\standard', leverage: 100, deposit: 0, weight: 3 },
  { group: 'real\\vip', leverage: 200, deposit: 0, weight: 1 },
  { group: 'real\\ecn', leverage: 50, deposit: 0, weight: 1 },
];

export function groupRecord(def: (typeof PF4_GROUPS)[number], seed: number): PF4GroupRecord {
  const slug = def.group.replace(/\\/g, '-');
  return {
    group: def.group,
    enable: 1,
    maxSecurities: 4096,
    secMarginsTotal: groupMargins(def.group).length,
    timeout: 60,
    otpMode: 'Disabled',
    company: 'Simulated Markets Ltd',
    supportPage: 'https://support.example.com',
    supportEmail: 'support@example.com',
    defaultLeverage: def.leverage,
    defaultDeposit: def.deposit,
    currency: 'USD',
    credit: 0,
    marginCall: 100,
    marginMode: 'UseAll',
    marginStopout: 50,
    interestRate: 0,
    useSwap: 1,
    newsMode: 'Full',
    maxPositions: 0,
    hedgeProhibited: 0,
    closeFIFO: 0,
    marginControllingType: 'Percent',
    smtpServer: 'smtp.example.com:587',
    smtpLogin: `reports-${slug}@example.com`,
    smtpPassword: derivedSecret(seed, `smtp/${def.group}`),
    templates: `/reports/templates/${slug}`,
    securitiesHash: derivedSecret(seed, `securities/${def.group}`, 32, '0123456789abcdef'),
  };
}

/** A group's 32 security entries (one per symbol type); types the simulator does not use are placeholders. */
export function groupSecurities(group: string, usedTypes: number): Record<string, unknown>[] {
  const pro = group.endsWith('pro') || group.endsWith('vip');
  return Array.from({ length: 32 }, (_, type) =>
    type < usedTypes
      ? {
          show: 1,
          trade: 1,
          dealingMode: 'Auto',
          standardCommission: pro ? 0 : 3.5,
          commissionType: 'Money',
          commissionLotsMode: 'PerLot',
          agentCommission: 0,
          agentCommissionMode: 'Money',
          spreadDiff: 0,
          lotMin: 1,
          lotMax: pro ? 50000 : 10000,
          lotStep: 1,
          ieDeviation: 0,
          confirmation: 0,
          tradeRights: 'Enabled',
          ieQuickMode: 0,
          autoCloseOutMode: 'None',
          commissionTaxes: 0,
          commissionAgentLots: 'PerLot',
          freeMarginMode: 1,
        }
      : { show: 0, trade: 0, lotMin: 0, lotMax: 0, lotStep: 0 },
  );
}

/** Per-symbol margin and swap overrides of a group (the first secMarginsTotal entries of the 128). */
export function groupMargins(
  group: string,
): Array<{ symbol: string; swapLong: number; swapShort: number; marginDivider: number }> {
  if (group.endsWith('pro')) return [{ symbol: 'XAUUSD', swapLong: -1, swapShort: -0.5, marginDivider: 2 }];
  if (group.endsWith('vip')) {
    return [
      { symbol: 'EURUSD', swapLong: -1.5, swapShort: -0.5, marginDivider: 1 },
      { symbol: 'XAUUSD', swapLong: -2, swapShort: -1, marginDivider: 2 },
    ];
  }
  return [];
}

export interface PF4SymbolSession {
  openHour: number;
  openMinute: number;
  closeHour: number;
  closeMinute: number;
}
export interface PF4DaySessions {
  dayOfWeek: number;
  quoteOvernight: number;
  tradeOvernight: number;
  quote: PF4SymbolSession[];
  trade: PF4SymbolSession[];
}

/** Round the clock every day: the simulator quotes and trades at any hour, so tests run on any day of the week. */
export function defaultSessions(): PF4DaySessions[] {
  const whole = (): PF4SymbolSession[] => [{ openHour: 0, openMinute: 0, closeHour: 24, closeMinute: 0 }];
  return Array.from({ length: 7 }, (_, day) => ({
    dayOfWeek: day,
    quoteOvernight: 0,
    tradeOvernight: 0,
    quote: whole(),
    trade: whole(),
  }));
}

export function symbolRecord(instrument: Instrument, index: number): Record<string, unknown> {
  const point = pointOf(instrument);
  const forexLike = instrument.kind === 'forex';
  return {
    symbol: instrument.symbol,
    description: instrument.description,
    source: '',
    currency: instrument.profitCurrency,
    type: instrument.securityGroup,
    digits: instrument.digits,
    tradeMode: 'Full',
    count: index,
    realtime: 1,
    profitCalculationMode: forexLike ? 'Forex' : 'CFD',
    spread: instrument.spread,
    spreadBalance: 0,
    symbolExecMode: 'Instant',
    swapEnable: 1,
    swapType: 'Points',
    swapLong: -2.5,
    swapShort: -1.2,
    swapRollover3Days: 3,
    contractSize: instrument.contractSize,
    tickValue: instrument.contractSize * point,
    tickSize: point,
    stopsLevel: 10,
    gtcMode: 'GTC',
    marginCalculationMode: forexLike ? 'Forex' : 'CFD',
    marginInitial: 0,
    marginMaintenance: 0,
    marginHedged: 50000,
    marginDivider: 1,
    percentage: 100,
    point,
    multiply: 10 ** instrument.digits,
    longOnly: 0,
    instantMaxVolume: 0,
    marginCurrency: instrument.marginCurrency,
    freezeLevel: 0,
  };
}

/** One of the 32 security (symbol) group slots as the change stream carries it. */
export function symbolGroupRecord(
  pos: number,
  entry: Record<string, unknown>,
): { pos: number; name: unknown; description: unknown } {
  return { pos, name: entry.name ?? null, description: entry.description ?? null };
}

export function tickRecord(quote: Quote): PF4TickRecord {
  return { symbol: quote.symbol, time: iso(quote.time), bid: quote.bid, ask: quote.ask };
}

export function isPending(command: PF4HistoryCommand): boolean {
  return command === 'BuyLimit' || command === 'SellLimit' || command === 'BuyStop' || command === 'SellStop';
}

export function isBuyCommand(command: PF4HistoryCommand): boolean {
  return command === 'Buy' || command === 'BuyLimit' || command === 'BuyStop';
}
