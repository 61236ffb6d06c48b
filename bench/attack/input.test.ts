/** What attack 6 reports an answer said (bench/attack/input.ts): the v2 envelope's error, the v1 body's, or its text. */
import { describe, expect, it } from 'vitest';
import { said } from './input.js';

describe('what an answer said', () => {
  it('gives the v2 error code and the start of its message', () => {
    expect(said({ data: null, error: { code: 'Validation', message: 'body: must hold at most 120000 items' } })).toBe(
      'Validation: body: must hold at most 120000 items',
    );
    expect(said({ error: { code: 'Validation', message: 'm'.repeat(120) } })).toBe(`Validation: ${'m'.repeat(90)}`);
  });

  it('gives the v1 error code and description', () => {
    expect(said({ errorCode: 'Validation', errorDescription: 'body: must be UTF-8 text' })).toBe(
      'Validation: body: must be UTF-8 text',
    );
  });

  it('gives the start of anything else on one line', () => {
    expect(said('Internal Server Error')).toBe('Internal Server Error');
    expect(said('<html>\n  <body>\n' + 'x'.repeat(100))).toBe(`<html> <body> ${'x'.repeat(46)}`);
    expect(said({ data: 1, error: null })).toBe('[object Object]');
    expect(said(null)).toBe('null');
  });
});
