/**
 * PF5 account figures and passwords: UserAccountGet / UserAccountRequest from the balance, credit and open positions
 * at the current quotes, and UserPasswordChange for the main and investor passwords with the group's password rule.
 */
import { describe, expect, it } from 'vitest';
import { PF5_RESULT as R } from '../../shared/resultCodes.js';
import { pf5Harness } from '../../test/support/sim/worldHarness.js';

function account(group = 'demo\\retail') {
  const h = pf5Harness({ accounts: 0, trades: 0, orders: 0 });
  h.world.feed.inject('EURUSD', 1.1, 1.1001);
  h.world.feed.inject('XAUUSD', 2000, 2000.5);
  const login: number = h.call('UserAdd', {
    record: { group, leverage: 100, firstName: 'Ada', password: 'First123x', passwordInvestor: 'Watch123x' },
  }).login;
  return { h, login };
}

describe('account figures', () => {
  it('answers balance, credit, equity, margin, free margin and margin level from the open positions', () => {
    const { h, login } = account();
    h.call('DealerBalance', { login, type: 'Balance', amount: 10_000 });
    h.call('DealerBalance', { login, type: 'Credit', amount: 500 });
    const idle = h.call('UserAccountGet', { login });
    expect(idle).toEqual({
      login,
      balance: 10_000,
      credit: 500,
      equity: 10_500,
      margin: 0,
      marginFree: 10_500,
      marginLevel: 0,
      profit: 0,
      storage: 0,
    });

    h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000 });
    h.call('DealerSend', { login, symbol: 'XAUUSD', type: 'Sell', volume: 1_000 });
    h.world.feed.inject('EURUSD', 1.102, 1.1021);
    h.world.feed.inject('XAUUSD', 2010, 2010.5);
    // EURUSD: 1 lot bought at 1.1001, now bid 1.102: +190; margin 100000 EUR / 100 at the EURUSD mid 1.10205 = 1102.05.
    // XAUUSD: 0.1 lot sold at 2000, now ask 2010.5: -105; margin 0.1 × 100 oz × 2000 / 100 = 200.
    const figures = h.call('UserAccountGet', { login });
    expect(figures).toEqual({
      login,
      balance: 10_000,
      credit: 500,
      equity: 10_585,
      margin: 1302.05,
      marginFree: 9282.95,
      marginLevel: 812.95,
      profit: 85,
      storage: 0,
    });
    expect(h.call('UserAccountRequest', { login })).toEqual(figures);
  });

  it('counts swaps in equity and follows the leverage', () => {
    const { h, login } = account();
    h.call('DealerBalance', { login, type: 'Balance', amount: 10_000 });
    const { position } = h.call('DealerSend', { login, symbol: 'EURUSD', type: 'Buy', volume: 10_000 });
    h.world.rollover(Date.UTC(2026, 5, 2));
    expect(h.call('PositionGetByTickets', { tickets: [position] })[0].storage).toBe(-2.5);
    const before = h.call('UserAccountGet', { login });
    // Bought at the ask 1.1001 and valued at the bid 1.1: -10; one day's swap -2.5.
    expect(before).toMatchObject({ profit: -10, storage: -2.5, equity: 9987.5, margin: 1100.05 });
    h.call('UserUpdate', { record: { login, leverage: 50 } });
    expect(h.call('UserAccountRequest', { login })).toMatchObject({
      equity: 9987.5,
      margin: 2200.1,
      marginFree: 7787.4,
    });
  });

  it('answers ErrNotfound for an unknown login and ErrParams naming a bad one', () => {
    const { h } = account();
    for (const cmd of ['UserAccountGet', 'UserAccountRequest']) {
      expect(h.fails(cmd, { login: 999_999 }), cmd).toEqual({ code: R.ErrNotfound, message: 'login 999999 not found' });
      expect(h.fails(cmd, { login: '500000' }), cmd).toEqual({
        code: R.ErrParams,
        message: 'login must be an integer',
      });
    }
  });
});

describe('UserPasswordChange', () => {
  it('changes the main password only: the old one stops working, the investor password keeps working', () => {
    const { h, login } = account();
    const before = h.world.users.get(login)!;
    h.events.length = 0;
    expect(h.call('UserPasswordChange', { login, type: 'Main', password: 'Second456y' })).toBe(true);
    expect(h.call('UserPasswordCheck', { login, type: 'Main', password: 'Second456y' })).toBe(true);
    expect(h.fails('UserPasswordCheck', { login, type: 'Main', password: 'First123x' }).code).toBe(
      R.UsrInvalidPassword,
    );
    expect(h.call('UserPasswordCheck', { login, type: 'Investor', password: 'Watch123x' })).toBe(true);
    // The account record changes only in its password-change time, and the change is announced without the password.
    const after = h.call('UserGet', { login });
    expect({ ...after, lastPassChange: before.lastPassChange }).toEqual(before);
    expect(Date.parse(after.lastPassChange)).toBeGreaterThanOrEqual(Date.parse(before.lastPassChange));
    expect(h.events).toEqual([{ kind: 'users', op: 'update', record: after }]);
    expect(JSON.stringify(h.events)).not.toContain('Second456y');
  });

  it('changes the investor password when asked, and the main password by default', () => {
    const { h, login } = account();
    expect(h.call('UserPasswordChange', { login, type: 'Investor', password: 'Look789zz' })).toBe(true);
    expect(h.call('UserPasswordCheck', { login, type: 'Investor', password: 'Look789zz' })).toBe(true);
    expect(h.fails('UserPasswordCheck', { login, type: 'Investor', password: 'Watch123x' }).code).toBe(
      R.UsrInvalidPassword,
    );
    expect(h.call('UserPasswordCheck', { login, password: 'First123x' })).toBe(true);
    expect(h.call('UserPasswordChange', { login, password: 'Third000a' })).toBe(true);
    expect(h.call('UserPasswordCheck', { login, password: 'Third000a' })).toBe(true);
    expect(h.call('UserPasswordCheck', { login, type: 'Investor', password: 'Look789zz' })).toBe(true);
  });

  it('refuses a password the group rule rejects and keeps the old one', () => {
    const { h, login } = account();
    h.events.length = 0;
    const rule = 'password must have at least 8 characters with a lower-case letter, an upper-case letter and a digit';
    for (const weak of ['Short1a', 'alllower123', 'ALLUPPER123', 'NoDigitsHere']) {
      expect(h.fails('UserPasswordChange', { login, type: 'Main', password: weak }), weak).toEqual({
        code: R.UsrInvalidPassword,
        message: rule,
      });
    }
    expect(h.call('UserPasswordCheck', { login, password: 'First123x' })).toBe(true);
    expect(h.events).toEqual([]);
    h.call('GroupRecord', { group: 'demo\\retail', patch: { authPasswordMin: 12 } });
    expect(h.fails('UserPasswordChange', { login, password: 'Abcdefgh123' }).message).toContain(
      'at least 12 characters',
    );
    expect(h.call('UserPasswordChange', { login, password: 'Abcdefgh1234' })).toBe(true);
  });

  it('answers ErrNotfound for an unknown login, ErrParams naming a bad argument, and needs AccManager', () => {
    const { h, login } = account();
    expect(h.fails('UserPasswordChange', { login: 999_999, password: 'Second456y' })).toEqual({
      code: R.ErrNotfound,
      message: 'login 999999 not found',
    });
    expect(h.fails('UserPasswordChange', { login, type: 'Both', password: 'Second456y' })).toEqual({
      code: R.ErrParams,
      message: 'type must be Main or Investor',
    });
    expect(h.fails('UserPasswordChange', { login })).toEqual({
      code: R.ErrParams,
      message: 'password must be a non-empty string',
    });
    expect(h.fails('UserPasswordChange', { login, password: 'Second456y' }, ['AccRead'])).toEqual({
      code: R.ErrPermissions,
      message: 'UserPasswordChange needs the AccManager right',
    });
    expect(h.call('UserPasswordCheck', { login, password: 'First123x' })).toBe(true);
    expect(h.call('UserPasswordChange', { login, password: 'Second456y' }, ['AccManager'])).toBe(true);
  });
});

describe('UserRecord merge patch', () => {
  it('empties a field patched with null: strings to "", numbers to 0, the rights to None, and announces the change', () => {
    const { h, login } = account();
    h.call('UserRecord', { login, patch: { city: 'Oslo', comment: 'vip', color: 255, language: 9, middleName: 'B' } });
    const before = h.call('UserGet', { login });
    h.events.length = 0;
    const patched = h.call('UserRecord', {
      login,
      patch: { city: null, color: null, rights: null, language: null, comment: 'kept', middleName: null },
    });
    expect(patched).toEqual({
      ...before,
      city: '',
      color: 0,
      rights: 'None',
      language: 0,
      comment: 'kept',
      middleName: '',
    });
    expect(h.call('UserGet', { login })).toEqual(patched);
    expect(h.events).toEqual([{ kind: 'users', op: 'update', record: patched }]);
    // A null for a field the record does not have leaves nothing behind but the field's empty value.
    expect(h.call('UserRecord', { login, patch: { account: null } })).toEqual({ ...patched, account: '' });
  });

  it('refuses null for the login, group and leverage, and for server fields, naming the field and changing nothing', () => {
    const { h, login } = account();
    const before = h.call('UserGet', { login });
    h.events.length = 0;
    for (const field of ['login', 'group', 'leverage']) {
      expect(h.fails('UserRecord', { login, patch: { city: null, [field]: null } }), field).toEqual({
        code: R.ErrParams,
        message: `patch.${field} is required and cannot be removed`,
      });
    }
    expect(h.fails('UserRecord', { login, patch: { balance: null } })).toEqual({
      code: R.ErrParams,
      message: 'patch.balance cannot be changed',
    });
    expect(h.fails('UserRecord', { login, patch: { lastAccess: null } })).toEqual({
      code: R.ErrParams,
      message: 'patch.lastAccess cannot be changed',
    });
    expect(h.fails('UserRecord', { login, patch: { colour: null } })).toEqual({
      code: R.ErrParams,
      message: 'patch.colour: Unrecognized key: "colour"',
    });
    expect(h.call('UserGet', { login })).toEqual(before);
    expect(h.events).toEqual([]);
  });

  it('UserUpdate empties a null field as a patch does but refuses a null group', () => {
    const { h, login } = account();
    h.call('UserUpdate', { record: { login, city: 'Oslo', agent: 7, rights: 'Enabled, Password, Trailing' } });
    expect(h.call('UserUpdate', { record: { login, city: null } }).city).toBe('');
    expect(h.call('UserUpdate', { record: { login, agent: null, rights: null } })).toMatchObject({
      agent: 0,
      rights: 'None',
    });
    expect(h.fails('UserUpdate', { record: { login, group: null } })).toEqual({
      code: R.ErrParams,
      message: 'record.group is required and cannot be removed',
    });
    expect(h.fails('UserUpdate', { record: { login, leverage: null } })).toEqual({
      code: R.ErrParams,
      message: 'record.leverage is required and cannot be removed',
    });
    expect(h.call('UserGet', { login })).toMatchObject({ group: 'demo\\retail', leverage: 100, city: '' });
  });
});
