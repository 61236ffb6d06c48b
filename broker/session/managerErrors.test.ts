import { describe, expect, it } from 'vitest';
import { PF4_RESULT, PF5_RESULT } from '../../shared/resultCodes.js';
import { ConnectionLostError, DeadlineError, managerFailure, notFound } from './managerErrors.js';

describe('managerFailure', () => {
  it('names the family error and keeps the numeric result code', () => {
    expect(managerFailure('PF4', { code: PF4_RESULT.TradeNoMoney, message: 'no money' })).toMatchObject({
      code: 'PF4Error',
      managerCode: 134,
      message: 'no money',
    });
    expect(managerFailure('PF5', { code: PF5_RESULT.UsrLoginExist, message: 'exists' })).toMatchObject({
      code: 'PF5Error',
      managerCode: 3004,
    });
  });

  it('reads PF4 InvalidData as not-found only on a keyed single-record read', () => {
    expect(
      managerFailure('PF4', { code: PF4_RESULT.InvalidData, message: 'login 5 not found' }, { keyedRead: true }),
    ).toMatchObject({ code: 'NotFound', managerCode: PF4_RESULT.InvalidData });
    expect(managerFailure('PF4', { code: PF4_RESULT.InvalidData, message: 'group is required' })).toMatchObject({
      code: 'PF4Error',
      managerCode: PF4_RESULT.InvalidData,
    });
  });

  it('reads PF5 ErrNotfound as not-found always', () => {
    expect(managerFailure('PF5', { code: PF5_RESULT.ErrNotfound, message: 'order 9 not found' })).toMatchObject({
      code: 'NotFound',
      managerCode: PF5_RESULT.ErrNotfound,
    });
  });

  it('gives a message even when the server sends none', () => {
    expect(managerFailure('PF4', { code: 2, message: '' }).message).toMatch(/refused/);
    expect(notFound('PF5', 'login 1 not found')).toMatchObject({ code: 'NotFound', managerCode: 13 });
  });

  it('keeps only a numeric code and a string message from a malformed error answer', () => {
    const failure = managerFailure('PF4', { code: '134', message: 42 } as unknown as { code: number; message: string });
    expect(failure).toMatchObject({
      code: 'PF4Error',
      managerCode: null,
      message: 'the trading server refused the request',
    });
  });
});

describe('the session errors', () => {
  it('name themselves, so a log line tells a deadline from a lost connection', () => {
    const deadline = new DeadlineError('deadline passed before sending');
    expect(deadline).toMatchObject({
      name: 'DeadlineError',
      code: 'NoConnect',
      sent: false,
      message: 'deadline passed before sending',
    });
    expect(new DeadlineError(undefined, true)).toMatchObject({ message: 'deadline passed', sent: true });
    expect(new ConnectionLostError('the connection dropped')).toMatchObject({
      name: 'ConnectionLostError',
      code: 'NoConnect',
      managerCode: null,
    });
  });
});
