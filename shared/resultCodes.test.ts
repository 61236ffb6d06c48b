import { describe, expect, it } from 'vitest';
import { managerCodeName, NOT_FOUND_CODE, PF4_RESULT, PF5_RESULT } from './resultCodes.js';
import { ResultCodeMembers } from './records/contract.js';

describe('platform result codes', () => {
  it('names every member of the contract ResultCode enum for PF4', () => {
    expect(Object.keys(PF4_RESULT).sort()).toEqual([...ResultCodeMembers].sort());
  });

  it('serialises a known code as its name and an unknown one as the number', () => {
    expect(managerCodeName('PF4', 3)).toBe('InvalidData');
    expect(managerCodeName('PF4', 130)).toBe('TradeBadStops');
    expect(managerCodeName('PF4', 9999)).toBe(9999);
    expect(managerCodeName('PF5', 13)).toBe('ErrNotfound');
    expect(managerCodeName('PF5', 3004)).toBe('UsrLoginExist');
    expect(managerCodeName('PF5', 18)).toBe('ErrNotMain');
    expect(managerCodeName('PF5', null)).toBeNull();
  });

  it('has distinct numbers within each family', () => {
    for (const table of [PF4_RESULT, PF5_RESULT]) {
      const values = Object.values(table);
      expect(new Set(values).size).toBe(values.length);
    }
  });

  it('uses InvalidData and ErrNotfound as the not-found codes', () => {
    expect(managerCodeName('PF4', NOT_FOUND_CODE.PF4)).toBe('InvalidData');
    expect(managerCodeName('PF5', NOT_FOUND_CODE.PF5)).toBe('ErrNotfound');
  });
});
