import { describe, expect, it } from 'vitest';
import {
  ChartPeriod,
  EnPermissionsFlags,
  PF4GroupUpdate,
  PF4UserCreate,
  TradeCommand,
  openapiComponents,
} from './contract.js';
import { dateTime } from './primitives.js';

describe('contract records', () => {
  it('accepts flag sets as member names joined by ", " and rejects unknown members', () => {
    expect(EnPermissionsFlags.safeParse('None').success).toBe(true);
    expect(EnPermissionsFlags.safeParse('CertConfirm, EnableConnection').success).toBe(true);
    expect(EnPermissionsFlags.safeParse('CertConfirm, Bit12').success).toBe(true);
    const bad = EnPermissionsFlags.safeParse('CertConfirm, Sideways');
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0].message).toMatch(/EnPermissionsFlags members/);
  });

  it('rejects unknown fields and wrong types in a body record', () => {
    expect(PF4UserCreate.safeParse({ group: 'demo', name: 'A', leverage: 100 }).success).toBe(true);
    const unknown = PF4UserCreate.safeParse({ group: 'demo', password: 'x' });
    expect(unknown.success).toBe(false);
    expect(unknown.error!.issues[0].code).toBe('unrecognized_keys');
    const wrong = PF4UserCreate.safeParse({ login: 2 ** 31 });
    expect(wrong.error!.issues[0].path).toEqual(['login']);
  });

  it('keeps enum members as the contract spells them', () => {
    expect(TradeCommand.out.options).toEqual([
      'Buy',
      'Sell',
      'BuyLimit',
      'SellLimit',
      'BuyStop',
      'SellStop',
      'Balance',
      'Credit',
    ]);
  });

  it('reads enum members in any case and answers the contract spelling; no number, no other name', () => {
    expect(ChartPeriod.parse('MN1')).toBe('Mn1');
    expect(ChartPeriod.parse('mn1')).toBe('Mn1');
    expect(TradeCommand.parse('BUYLIMIT')).toBe('BuyLimit');
    for (const bad of ['Mn', 'Mn1 ', 8, 0, null]) expect(ChartPeriod.safeParse(bad).success, String(bad)).toBe(false);
    expect(PF4GroupUpdate.parse({ otpMode: 'totp_sha256' })).toStrictEqual({ otpMode: 'TOTP_SHA256' });
  });

  it('reads flag names in any case and answers the contract names joined by ", "', () => {
    expect(EnPermissionsFlags.parse('certconfirm,ENABLECONNECTION')).toBe('CertConfirm, EnableConnection');
    expect(EnPermissionsFlags.parse('none')).toBe('None');
    expect(EnPermissionsFlags.parse('CertConfirm, bit12')).toBe('CertConfirm, Bit12');
  });

  it('parses ISO 8601 date-times with or without an offset', () => {
    expect(dateTime.safeParse('2026-11-22T10:00:00Z').success).toBe(true);
    expect(dateTime.safeParse('2026-11-22T10:00:00').success).toBe(true);
    expect(dateTime.safeParse('22/11/2026').success).toBe(false);
  });

  it('emits OpenAPI 3.1 components without the 3.0 nullable keyword', () => {
    const text = JSON.stringify(openapiComponents);
    expect(text).not.toContain('"nullable"');
    expect((openapiComponents.PF4User as { properties: Record<string, unknown> }).properties.group).toEqual({
      type: ['string', 'null'],
    });
  });
});
