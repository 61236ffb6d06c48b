/**
 * W3C `traceparent` parsing and the hex ids (workers/api/traceparent.ts): every field's length and alphabet, the
 * version rules, the anchors, and the exact hex of given random bytes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseTraceparent, randomHex } from './traceparent.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it('answers the trace id and the flags of a valid header, trimmed', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`)).toStrictEqual({ traceId: TRACE, flags: '01' });
    expect(parseTraceparent(`  00-${TRACE}-${PARENT}-00 \t`)).toStrictEqual({ traceId: TRACE, flags: '00' });
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-a9`)).toStrictEqual({ traceId: TRACE, flags: 'a9' });
  });

  it('takes ids that start or end with zeros, all-zero ones only are invalid', () => {
    expect(parseTraceparent(`00-0af7651916cd43dd8448eb211c803190-b7ad6b7169203330-01`)).toStrictEqual({
      traceId: '0af7651916cd43dd8448eb211c803190',
      flags: '01',
    });
    expect(parseTraceparent(`00-${TRACE}-b7ad6b7169203300-01`)).toStrictEqual({ traceId: TRACE, flags: '01' });
    expect(parseTraceparent(`00-${'0'.repeat(31)}1-${PARENT}-01`)).toStrictEqual({
      traceId: `${'0'.repeat(31)}1`,
      flags: '01',
    });
    expect(parseTraceparent(`00-${TRACE}-${'0'.repeat(15)}1-01`)).toStrictEqual({ traceId: TRACE, flags: '01' });
  });

  it('takes a later version, with or without further fields', () => {
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01`)).toStrictEqual({ traceId: TRACE, flags: '01' });
    expect(parseTraceparent(`cc-${TRACE}-${PARENT}-01-what-comes-next`)).toStrictEqual({ traceId: TRACE, flags: '01' });
    expect(parseTraceparent(`fe-${TRACE}-${PARENT}-01-x`)).toStrictEqual({ traceId: TRACE, flags: '01' });
  });

  it('refuses further fields on version 00, and version ff', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01-x`)).toBeNull();
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01-`)).toBeNull();
    expect(parseTraceparent(`ff-${TRACE}-${PARENT}-01`)).toBeNull();
    expect(parseTraceparent(`ff-${TRACE}-${PARENT}-01-x`)).toBeNull();
  });

  it('refuses a field of the wrong length or alphabet, and anything around the header', () => {
    for (const bad of [
      `0-${TRACE}-${PARENT}-01`,
      `000-${TRACE}-${PARENT}-01`,
      `0g-${TRACE}-${PARENT}-01`,
      `00-${TRACE.slice(1)}-${PARENT}-01`,
      `00-${TRACE}a-${PARENT}-01`,
      `00-${TRACE.slice(1)}g-${PARENT}-01`,
      `00-${TRACE}-${PARENT.slice(1)}-01`,
      `00-${TRACE}-${PARENT}a-01`,
      `00-${TRACE}-${PARENT.slice(1)}G-01`,
      `00-${TRACE}-${PARENT}-1`,
      `00-${TRACE}-${PARENT}-011`,
      `00-${TRACE}-${PARENT}-0x`,
      `00-${TRACE}-${PARENT}-01x`,
      `x00-${TRACE}-${PARENT}-01`,
      `00_${TRACE}-${PARENT}-01`,
      `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
    ]) {
      expect(parseTraceparent(bad), bad).toBeNull();
    }
  });
});

describe('randomHex', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('writes each random byte as two lower-case hex digits', () => {
    const draws: number[] = [];
    vi.spyOn(crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
      const bytes = array as unknown as Uint8Array;
      draws.push(bytes.length);
      bytes.set([0, 1, 15, 16, 171, 255].slice(0, bytes.length));
      return array;
    });
    expect(randomHex(6)).toBe('00010f10abff');
    expect(randomHex(2)).toBe('0001');
    expect(randomHex(0)).toBe('');
    expect(draws).toEqual([6, 2, 0]);
  });

  it('draws fresh bytes each time', () => {
    const a = randomHex(16);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(randomHex(16)).not.toBe(a);
  });
});

describe('traceparent', () => {
  it('keeps a valid trace id and refuses malformed or all-zero ones', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toStrictEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      flags: '01',
    });
    for (const bad of [
      undefined,
      '',
      'garbage',
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`,
    ]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
  });
});
