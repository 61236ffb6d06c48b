/**
 * PF4 records as the simulator keeps and sends them: field names and types follow the contract schemas (PF4User,
 * PF4Trade, PF4Group, PF4SymbolConfig, PF4TickInfo in shared/records/contract.ts). Only fields the simulator gives a
 * meaningful value are present; everything in the contract is optional.
 */
import type { Instrument } from '../feed/instruments.js';
import { pointOf } from '../feed/instruments.js';
import type { Quote } from '../feed/quoteFeed.js';
import { iso } from '../world/people.js';

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
}

export type PF4Command = 'Buy' | 'Sell' | 'BuyLimit' | 'SellLimit' | 'BuyStop' | 'SellStop';

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
}

export interface PF4TradeRecord extends PF4TradeRow {
  volumeLots: number;
  tradeRecordState: 'OpenNormal' | 'ClosedNormal';
  closeTime?: string;
  closePrice: number;
  commissionAgent: number;
  profit: number;
  taxes: number;
  activationType: 'None';
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
}

export const PF4_GROUPS: ReadonlyArray<{ group: string; leverage: number; deposit: number; weight: number }> = [
  { group: 'demo\\forex', leverage: 100, deposit: 10000, weight: 4 },
  { group: 'demo\\pro', leverage: 500, deposit: 50000, weight: 1 },
  { group: 'real\\standard', leverage: 100, deposit: 0, weight: 3 },
  { group: 'real\\vip', leverage: 200, deposit: 0, weight: 1 },
  { group: 'real\\ecn', leverage: 50, deposit: 0, weight: 1 },
];

export function groupRecord(def: (typeof PF4_GROUPS)[number]): PF4GroupRecord {
  return {
    group: def.group, enable: 1, timeout: 60, otpMode: 'Disabled', company: 'Simulated Markets Ltd',
    supportPage: 'https://support.example.com', supportEmail: 'support@example.com',
    defaultLeverage: def.leverage, defaultDeposit: def.deposit, currency: 'USD', credit: 0,
    marginCall: 100, marginMode: 'UseAll', marginStopout: 50, interestRate: 0, useSwap: 1, newsMode: 'Full',
    maxPositions: 0, hedgeProhibited: 0, closeFIFO: 0, marginControllingType: 'Percent',
  };
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

export function tickRecord(quote: Quote): PF4TickRecord {
  return { symbol: quote.symbol, time: iso(quote.time), bid: quote.bid, ask: quote.ask };
}

export function isPending(command: PF4Command): boolean {
  return command !== 'Buy' && command !== 'Sell';
}
