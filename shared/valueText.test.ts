import { describe, expect, it } from 'vitest';
import { valueText } from './valueText.js';

describe('valueText', () => {
  it('writes primitives and arrays as String does, other objects as their JSON', () => {
    expect([1, 'Raw,All', null, undefined, true, 10n].map(valueText)).toEqual([
      '1',
      'Raw,All',
      'null',
      'undefined',
      'true',
      '10',
    ]);
    expect(valueText(['Raw', 'All'])).toBe('Raw,All');
    expect(valueText([1, [2, 3], null, undefined])).toBe('1,2,3,,');
    expect(valueText({ login: 5 })).toBe('{"login":5}');
    expect(valueText([{ a: 1 }])).toBe('{"a":1}');
  });
});
