/**
 * Platform result codes. The manager protocol carries them as numbers; the v2 envelope names them (`managerCode`) as a
 * string for a known member and as the bare number for an unrecognised value. PF4 codes follow `ResultCode` of the
 * contract, PF5 codes follow `PF5Result` of the service spec, plus ErrNotMain (18, the platform's RET_ERR_NOTMAIN that
 * the spec names for batch deletes of another trade server's records but leaves out of its member list).
 */
import type { Family } from './protocol.js';

export const PF4_RESULT = {
  Ok: 0,
  OkNone: 1,
  Error: 2,
  InvalidData: 3,
  TechProblem: 4,
  OldVersion: 5,
  NoConnect: 6,
  NotEnoughRights: 7,
  TooFrequent: 8,
  Malfunction: 9,
  GenerateKey: 10,
  SecuritySession: 11,
  InvalidCompany: 12,
  AccountDisabled: 64,
  BadAccountInfo: 65,
  PublicKeyMissing: 66,
  TradeTimeout: 128,
  TradeBadPrices: 129,
  TradeBadStops: 130,
  TradeBadVolume: 131,
  TradeMarketClosed: 132,
  TradeDisable: 133,
  TradeNoMoney: 134,
  TradePriceChanged: 135,
  TradeOffquotes: 136,
  TradeBrokerBusy: 137,
  TradeRequote: 138,
  TradeOrderLocked: 139,
  TradeLongOnly: 140,
  TradeTooManyReq: 141,
  TradeAccepted: 142,
  TradeProcess: 143,
  TradeUserCancel: 144,
  TradeModifyDenied: 145,
  TradeContextBusy: 146,
  TradeExpirationDenied: 147,
  TradeTooManyOrders: 148,
  TradeHedgeProhibited: 149,
  TradeProhibitedByFIFO: 150,
  UnhandledException: 255,
} as const;

export const PF5_RESULT = {
  Ok: 0,
  OkNone: 1,
  Error: 2,
  ErrParams: 3,
  ErrData: 4,
  ErrDisk: 5,
  ErrMem: 6,
  ErrNetwork: 7,
  ErrPermissions: 8,
  ErrTimeout: 9,
  ErrConnection: 10,
  ErrNoService: 11,
  ErrFrequent: 12,
  ErrNotfound: 13,
  ErrPartial: 14,
  ErrShutdown: 15,
  ErrCancel: 16,
  ErrDuplicate: 17,
  ErrNotMain: 18,
  AuthClientInvalid: 1000,
  AuthAccountInvalid: 1001,
  AuthAccountDisabled: 1002,
  AuthAdvanced: 1003,
  AuthCertificate: 1004,
  AuthCertificateBad: 1005,
  AuthNotConfirmed: 1006,
  AuthServerInternal: 1007,
  AuthServerBad: 1008,
  AuthUpdateOnly: 1009,
  AuthClientOld: 1010,
  AuthManagerNoConfig: 1011,
  AuthManagerIPBlock: 1012,
  AuthGroupInvalid: 1013,
  AuthCaDisabled: 1014,
  AuthInvalidID: 1015,
  AuthInvalidIp: 1016,
  AuthInvalidType: 1017,
  AuthServerBusy: 1018,
  AuthServerCert: 1019,
  AuthAccountUnknown: 1020,
  AuthServerOld: 1021,
  AuthServerLimit: 1022,
  AuthMobileDisabled: 1023,
  AuthManagerType: 1024,
  AuthDemoDisabled: 1025,
  AuthResetPassword: 1026,
  AuthOTPInvalid: 1027,
  AuthOTPNeedSecret: 1028,
  AuthMigrationMT4: 1029,
  AuthMigrationMT5: 1030,
  AuthInvalidVerify: 1031,
  AuthVerifyBadEmail: 1032,
  AuthVerifyBadPhone: 1033,
  AuthAPIDisabled: 1034,
  CfgLastAdmin: 2001,
  CfgLastAdminGroup: 2002,
  CfgNotEmpty: 2003,
  CfgInvalidRange: 2004,
  CfgNotManagerLogin: 2005,
  CfgBuiltin: 2006,
  CfgDuplicate: 2007,
  CfgLimitReached: 2008,
  CfgNoAccessToMain: 2009,
  CfgDealerIDExist: 2010,
  CfgBindAddressExist: 2011,
  CfgWorkingTrade: 2012,
  CfgGatewayNameExist: 2013,
  CfgSwitchToBackup: 2014,
  CfgNoBackupModule: 2015,
  CfgNoTradeModule: 2016,
  CfgNoHistoryModule: 2017,
  CfgAnotherSwitch: 2018,
  CfgNoLicenseFile: 2019,
  CfgGatewayLoginExist: 2020,
  CfgInvalidCompany: 2021,
  UsrLastAdmin: 3001,
  UsrLoginExhausted: 3002,
  UsrLoginProhibited: 3003,
  UsrLoginExist: 3004,
  UsrSuicide: 3005,
  UsrInvalidPassword: 3006,
  UsrLimitReached: 3007,
  UsrHasTrades: 3008,
  UsrDifferentServers: 3009,
  UsrDifferentCurrency: 3010,
  UsrImportBalance: 3011,
  UsrImportGroup: 3012,
  UsrAccountExist: 3013,
  UsrImportAccount: 3014,
  UsrImportPositions: 3015,
  UsrImportOrders: 3016,
  UsrImportDeals: 3017,
  UsrImportHistory: 3018,
  UsrAPILimitReached: 3019,
  TradeLimitReached: 4001,
  TradeOrderExist: 4002,
  TradeOrderExhausted: 4003,
  TradeDealExhausted: 4004,
  TradeMaxMoney: 4005,
  TradeDealExist: 4006,
  TradeOrderProhibited: 4007,
  TradeDealProhibited: 4008,
  TradeSplitVolume: 4009,
  ReportSnapshot: 5001,
  ReportNotSupported: 5002,
  ReportNodata: 5003,
} as const;

export type PF4ResultName = keyof typeof PF4_RESULT;
export type PF5ResultName = keyof typeof PF5_RESULT;

const byNumber = (table: Record<string, number>) =>
  new Map(Object.entries(table).map(([name, code]) => [code, name] as const));
const PF4_NAMES = byNumber(PF4_RESULT);
const PF5_NAMES = byNumber(PF5_RESULT);

/** The envelope form of a manager code: the member name when known, the bare number otherwise. */
export function managerCodeName(family: Family, code: number | null | undefined): string | number | null {
  if (code === null || code === undefined) return null;
  return (family === 'PF4' ? PF4_NAMES : PF5_NAMES).get(code) ?? code;
}

/** The not-found code each family answers for an unknown login, ticket, group or symbol. */
export const NOT_FOUND_CODE: Record<Family, number> = {
  PF4: PF4_RESULT.InvalidData,
  PF5: PF5_RESULT.ErrNotfound,
};

/** The code each family answers a password check with when the login or the password is wrong. */
export const WRONG_PASSWORD_CODE: Record<Family, number> = {
  PF4: PF4_RESULT.InvalidData,
  PF5: PF5_RESULT.UsrInvalidPassword,
};

/** Each family's "too many requests, retry later" code: the gateway answers it for a call it bounds itself. */
export const TOO_FREQUENT_CODE: Record<Family, number> = {
  PF4: PF4_RESULT.TooFrequent,
  PF5: PF5_RESULT.ErrFrequent,
};
