/** Change-stream positions (shared/positions.ts): their text both ways, and which has reached which. */
import { describe, expect, it } from 'vitest';
import { parsePosition, positionText, reached } from './positions.js';

describe('positions', () => {
  it('are written <epoch>-<count> and read back', () => {
    expect(positionText({ epoch: 1764748800123, count: 42 })).toBe('1764748800123-42');
    expect(parsePosition('1764748800123-42')).toEqual({ epoch: 1764748800123, count: 42 });
    expect(parsePosition('0-0')).toEqual({ epoch: 0, count: 0 });
  });

  it('read anything else as none', () => {
    for (const text of [null, undefined, '', '1-', '-1', '1.5-2', '1-2-3', ' 1-2', 'a-b', '1234567890123456-1'])
      expect(parsePosition(text)).toBeNull();
  });

  it('have reached a position of the same epoch no further on, and cannot judge one of another epoch', () => {
    const at = { epoch: 100, count: 5 };
    expect(reached(at, { epoch: 100, count: 5 })).toBe(true);
    expect(reached(at, { epoch: 100, count: 4 })).toBe(true);
    expect(reached(at, { epoch: 100, count: 6 })).toBe(false);
    expect(reached(at, { epoch: 99, count: 0 })).toBe(false);
    expect(reached(at, { epoch: 101, count: 0 })).toBe(false);
  });
});
