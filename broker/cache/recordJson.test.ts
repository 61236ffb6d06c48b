/** The JSON the broker answers cached records with: exact for ids beyond 2^53 − 1, and lists of them as one array. */
import { describe, expect, it } from 'vitest';
import { recordJson, recordsJson } from './recordJson.js';

describe('cached records as JSON', () => {
  it('writes a record, a bigint id exactly', () => {
    expect(recordJson({ login: 2n ** 63n - 1n, name: 'a"b' })).toBe('{"login":9223372036854775807,"name":"a\\"b"}');
    const row = { position: 1, login: 2 };
    expect(recordJson(row)).toBe('{"position":1,"login":2}');
    expect(recordJson(row)).toBe('{"position":1,"login":2}');
  });

  it('writes a record object once: its JSON stays what it was while the object lives', () => {
    const row: Record<string, unknown> = { login: 1 };
    expect(recordJson(row)).toBe('{"login":1}');
    row.login = 2;
    expect(recordJson(row)).toBe('{"login":1}');
    expect(recordsJson([row, { login: 2 }])).toBe('[{"login":1},{"login":2}]');
    expect(recordJson({ ...row })).toBe('{"login":2}');
  });

  it('writes a list as one array, empty included', () => {
    expect(recordsJson([])).toBe('[]');
    expect(recordsJson([{ a: 1 }])).toBe('[{"a":1}]');
    expect(recordsJson([{ a: 1 }, { b: 2n ** 60n }, { c: null }])).toBe(
      '[{"a":1},{"b":1152921504606846976},{"c":null}]',
    );
  });
});
