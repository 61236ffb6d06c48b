/**
 * PF5 records as the simulator keeps and sends them; field names and types follow the contract schemas (PF5User,
 * PF5Position, PF5Order, PF5Deal, PF5Symbol, PF5ConGroup, PF5Time). Volumes are in 1/10000 lot, as on PF5 servers.
 */
import { createHash } from 'node:crypto';
import { openapiComponents } from '../../shared/records/contract.js';
import type { Instrument } from '../feed/instruments.js';
import { pointOf } from '../feed/instruments.js';

export const PF5_LOT = 10000;

/**
 * The message of a failed record check, naming the field: `record.price: ...`, and for a field the record does not
 * have, `record.colour: Unrecognized key ...` (the checker reports those on the record itself).
 */
export function issueMessage(
  prefix: string,
  error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> },
): string {
  const issue = error.issues[0] as { path: ReadonlyArray<PropertyKey>; message: string; keys?: string[] };
  const at = [prefix, ...issue.path.map(String)].join('.');
  const fields = issue.keys && issue.keys.length > 0 ? issue.keys.map((k) => `${at}.${k}`).join(', ') : at;
  return `${fields}: ${issue.message}`;
}

/**
 * The empty value of a field of a contract record, what a merge patch's null leaves in a record of fixed shape: "" for
 * a string, 0 for a number, `None` for a flag set or enum that has it. Undefined when the record has no such field or
 * the type has no empty value (date-times).
 */
export function emptyValue(schema: string, field: string): unknown {
  const components = openapiComponents as Record<
    string,
    { properties?: Record<string, Record<string, unknown>>; enum?: unknown[] }
  >;
  let type = components[schema]?.properties?.[field];
  if (typeof type?.$ref === 'string') type = components[type.$ref.split('/').pop() as string];
  if (!type) return undefined;
  if (Array.isArray(type.enum)) return type.enum.includes('None') ? 'None' : undefined;
  const names = Array.isArray(type.type) ? type.type : [type.type];
  if (names.includes('integer') || names.includes('number')) return 0;
  if (names.includes('string') && type.format === undefined) return '';
  return undefined;
}

export interface PF5UserRecord {
  login: number;
  group: string;
  name: string;
  firstName: string;
  lastName: string;
  middleName: string;
  company: string;
  country: string;
  city: string;
  state: string;
  zipCode: string;
  address: string;
  phone: string;
  eMail: string;
  comment: string;
  id: string;
  status: string;
  leadCampaign: string;
  leadSource: string;
  color: number;
  leverage: number;
  language: number;
  agent: number;
  clientID: number;
  rights: string;
  certSerialNumber: number;
  registration: string;
  lastAccess: string;
  lastPassChange: string;
  lastIP: string;
  balance: number;
  credit: number;
  interestRate: number;
  commissionDaily: number;
  commissionMonthly: number;
  commissionAgentDaily: number;
  commissionAgentMonthly: number;
  balancePrevDay: number;
  balancePrevMonth: number;
  equityPrevDay: number;
  equityPrevMonth: number;
}

/** An open position as stored; `priceCurrent` and `profit` come from the current quote when sent. */
export interface PF5PositionRow {
  position: number;
  login: number;
  symbol: string;
  action: 'Buy' | 'Sell';
  digits: number;
  digitsCurrency: number;
  contractSize: number;
  externalId: string;
  timeCreate: string;
  timeUpdate: string;
  priceOpen: number;
  priceSL: number;
  priceTP: number;
  volume: number;
  storage: number;
  rateProfit: number;
  rateMargin: number;
  expertId: number;
  comment: string;
  reason: PF5PositionReason;
}

/** PositionReasons and OrderReason spell stop reasons SL, TP, SO; DealReason spells them Sl, Tp, So. */
export type PF5PositionReason = 'Client' | 'Expert' | 'Dealer' | 'SL' | 'TP' | 'SO';
export type PF5DealReason = 'Client' | 'Expert' | 'Dealer' | 'Sl' | 'Tp' | 'So';
export type PF5OrderType = 'Buy' | 'Sell' | 'BuyLimit' | 'SellLimit' | 'BuyStop' | 'SellStop';
export type PF5OrderState = 'Placed' | 'Filled' | 'Canceled' | 'Expired' | 'Rejected';

export type PF5PendingType = 'BuyLimit' | 'SellLimit' | 'BuyStop' | 'SellStop';

/** Which of its group's levels an account's margin level crossed: `marginCall` or `marginStopOut` (both in percent). */
export type PF5MarginCallType = 'MarginCall' | 'StopOut';
/** Whether the account went below the level (`Enter`) or came back above it (`Leave`). */
export type PF5MarginCallDirection = 'Enter' | 'Leave';

/** A `margin` change event: an account crossing its group's margin-call or stop-out level, with its figures then. */
export interface PF5MarginCallEvent {
  login: number;
  group: string;
  type: PF5MarginCallType;
  direction: PF5MarginCallDirection;
  time: string;
  marginLevel: number;
  equity: number;
  margin: number;
}

/** A pending order as stored; `priceCurrent` comes from the current quote when sent. */
export interface PF5OrderRow {
  order: number;
  externalID: string;
  login: number;
  symbol: string;
  digits: number;
  digitsCurrency: number;
  contractSize: number;
  state: PF5OrderState;
  reason: PF5PositionReason;
  timeSetup: string;
  timeDone?: string;
  timeExpiration?: string;
  type: PF5OrderType;
  typeFill: 'Return';
  typeTime: 'GtC' | 'Specified';
  priceOrder: number;
  priceTrigger: number;
  priceSL: number;
  priceTP: number;
  volumeInitial: number;
  volumeCurrent: number;
  expertID: number;
  positionID: number;
  comment: string;
}

export interface PF5DealRecord {
  deal: number;
  externalID: string;
  login: number;
  dealer: number;
  order: number;
  action: 'Buy' | 'Sell' | 'Balance' | 'Credit';
  entry: 'In' | 'Out' | 'InOut';
  digits: number;
  digitsCurrency: number;
  contractSize: number;
  time: string;
  symbol: string;
  price: number;
  priceSL: number;
  priceTP: number;
  volume: number;
  volumeClosed: number;
  profit: number;
  storage: number;
  commission: number;
  fee: number;
  rateProfit: number;
  rateMargin: number;
  expertID: number;
  positionID: number;
  comment: string;
  reason: PF5DealReason;
}

export const PF5_GROUPS: ReadonlyArray<{
  group: string;
  leverage: number;
  deposit: number;
  hedged: boolean;
  weight: number;
}> = [
  { group: 'demo\\retail', leverage: 100, deposit: 10000, hedged: true, weight: 4 },
  { group: 'demo\\netting', leverage: 100, deposit: 10000, hedged: false, weight: 1 },
  { group: 'real\\retail', leverage: 100, deposit: 0, hedged: true, weight: 3 },
  { group: 'real\\pro', leverage: 30, deposit: 0, hedged: true, weight: 1 },
];

/**
 * A group as the server holds and sends it. Its report mailer's login and password (`reportsSMTPLogin`,
 * `reportsSMTPPass`) are sent as they are, as the manager interface does: a gateway answers them as null.
 */
export function groupRecord(def: (typeof PF5_GROUPS)[number], seed = 0): Record<string, unknown> {
  const slug = def.group.replace(/\\/g, '-');
  return {
    group: def.group,
    server: 1,
    permissionsFlags: 'None',
    authMode: 'Standard',
    authPasswordMin: 8,
    company: 'Simulated Markets Ltd',
    companyPage: 'https://www.example.com',
    companyEmail: 'office@example.com',
    companySupportPage: 'https://support.example.com',
    companySupportEmail: 'support@example.com',
    currency: 'USD',
    currencyDigits: 2,
    reportsMode: 'Full',
    reportsFlags: 'Email',
    newsMode: 'Full',
    mailMode: 'Full',
    tradeFlags: 'Swaps, Trailing, Expiration',
    tradeInterestRate: 0,
    tradeVirtualCredit: 0,
    marginFreeMode: 'UsePL',
    marginSOMode: 'Percent',
    marginCall: 100,
    marginStopOut: 50,
    demoLeverage: def.leverage,
    demoDeposit: def.deposit,
    limitHistory: 'All',
    limitOrders: 0,
    limitSymbols: 0,
    marginMode: def.hedged ? 'RetailHedged' : 'Retail',
    authOTPMode: 'Disabled',
    tradeTransferMode: 'TransferModeDisabled',
    marginFlags: 'None',
    limitPositions: 0,
    reportsSMTP: 'smtp.example.com:587',
    reportsSMTPLogin: `reports-${slug}@example.com`,
    reportsSMTPPass: mailerPassword(seed, def.group),
    commissions: def.group.startsWith('real')
      ? { standard: standardCommission(def.group.endsWith('pro') ? 2.5 : 3.5) }
      : {},
  };
}

/** The report mailer's password of a group: 16 letters and digits fixed by the server's seed and the group. */
function mailerPassword(seed: number, group: string): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789';
  return [...createHash('sha256').update(`${seed}/smtp/${group}`).digest().subarray(0, 16)]
    .map((b) => alphabet[b % alphabet.length])
    .join('');
}

/** A per-lot commission charged on every deal, in the deposit currency. */
function standardCommission(perLot: number): Record<string, unknown> {
  return {
    name: 'standard',
    description: `${perLot} USD per lot`,
    path: '*',
    mode: 'Standard',
    rangeMode: 'Volume',
    chargeMode: 'Instant',
    turnoverCurrency: 'USD',
    entryMode: 'All',
    actionMode: 'All',
    profitMode: 'All',
    reasonFlags: 'All',
    tiers: [
      {
        mode: 'MoneyDeposit',
        type: 'Volume',
        value: perLot,
        minimal: 0,
        rangeFrom: 0,
        rangeTo: 0,
        currency: 'USD',
        maximal: 0,
      },
    ],
  };
}

/** Quote and trade sessions round the clock every day (0 = Sunday), in minutes from midnight. */
export function allDaySessions(): Array<Array<Record<string, number>>> {
  return Array.from({ length: 7 }, () => [
    { open: 0, openHours: 0, openMinutes: 0, close: 1440, closeHours: 24, closeMinutes: 0 },
  ]);
}

const PATHS: Record<Instrument['kind'], string> = {
  forex: 'Forex',
  metal: 'Metals',
  index: 'Indices',
  energy: 'Energies',
  crypto: 'Crypto',
};
const SECTORS: Record<Instrument['kind'], string> = {
  forex: 'Currency',
  metal: 'Commodities',
  index: 'Indexes',
  energy: 'Commodities',
  crypto: 'CurrencyCrypto',
};

export function symbolRecord(instrument: Instrument): Record<string, unknown> {
  const point = pointOf(instrument);
  const forex = instrument.kind === 'forex';
  return {
    symbol: instrument.symbol,
    path: `${PATHS[instrument.kind]}\\${instrument.symbol}`,
    description: instrument.description,
    currencyBase: instrument.marginCurrency,
    currencyBaseDigits: 2,
    currencyProfit: instrument.profitCurrency,
    currencyProfitDigits: 2,
    currencyMargin: instrument.marginCurrency,
    currencyMarginDigits: 2,
    digits: instrument.digits,
    point,
    multiply: 10 ** instrument.digits,
    tickFlags: 'Realtime',
    tradeMode: 'Full',
    calcMode: forex ? 'Forex' : 'Cfd',
    execMode: 'Instant',
    gtcMode: 'GtC',
    fillFlags: 'FoK, IoC',
    expirFlags: 'GtC, Day, Specified, SpecifiedDay',
    spread: instrument.spread,
    spreadBalance: 0,
    tickValue: instrument.contractSize * point,
    tickSize: point,
    contractSize: instrument.contractSize,
    stopsLevel: 10,
    freezeLevel: 0,
    quotesTimeout: 0,
    volumeMin: 100,
    volumeMax: 1_000_000,
    volumeStep: 100,
    volumeLimit: 0,
    marginInitial: 0,
    marginMaintenance: 0,
    swapMode: 'ByPoints',
    swapLong: -2.5,
    swapShort: -1.2,
    swap3Day: 'Wednesday',
    sector: SECTORS[instrument.kind],
    sessionQuote: allDaySessions(),
    sessionTrade: allDaySessions(),
  };
}
