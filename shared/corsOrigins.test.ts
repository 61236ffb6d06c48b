/**
 * CORS_ORIGINS as the edge reads it and as the launcher checks it: `*`, a list of origins in the form a browser sends
 * them, or nothing; anything that is not an origin is refused at start, naming the variable.
 */
import { describe, expect, it } from 'vitest';
import { allowedOrigin, parseCorsOrigins } from './corsOrigins.js';
import { EnvironmentError, edgeEnvironment, readEnvironment } from './environment.js';

describe('parseCorsOrigins', () => {
  it('reads unset and empty as no origin', () => {
    for (const raw of [undefined, '', ' , '])
      expect(parseCorsOrigins(raw)).toEqual({ policy: { kind: 'none' }, invalid: [] });
  });

  it('reads * as any origin', () => {
    expect(parseCorsOrigins('*').policy).toEqual({ kind: 'any' });
    expect(parseCorsOrigins('https://a.example, *').policy).toEqual({ kind: 'any' });
  });

  it('normalizes origins as a browser serializes them, separated by commas or spaces', () => {
    const { policy, invalid } = parseCorsOrigins(
      'HTTPS://Terminal.Example.com:443/,http://localhost:5173  http://127.0.0.1:8080',
    );
    expect(invalid).toEqual([]);
    expect(policy.kind === 'list' && [...policy.origins]).toEqual([
      'https://terminal.example.com',
      'http://localhost:5173',
      'http://127.0.0.1:8080',
    ]);
  });

  it('finds entries that are not origins', () => {
    expect(
      parseCorsOrigins(
        'https://a.example/app https://b.example?x=1 ftp://c.example terminal.example.com https://u:p@d.example',
      ).invalid,
    ).toEqual([
      'https://a.example/app',
      'https://b.example?x=1',
      'ftp://c.example',
      'terminal.example.com',
      'https://u:p@d.example',
    ]);
  });

  it('allows exactly the listed origins', () => {
    const { policy } = parseCorsOrigins('https://terminal.example.com');
    expect(allowedOrigin(policy, 'https://terminal.example.com')).toBe('https://terminal.example.com');
    for (const other of [
      'https://terminal.example.com:8443',
      'http://terminal.example.com',
      'https://terminal.example.com.evil.example',
      'null',
      undefined,
    ]) {
      expect(allowedOrigin(policy, other)).toBeNull();
    }
    expect(allowedOrigin(parseCorsOrigins('*').policy, 'https://any.example')).toBe('*');
    expect(allowedOrigin(parseCorsOrigins('*').policy, undefined)).toBeNull();
    expect(allowedOrigin(parseCorsOrigins('').policy, 'https://any.example')).toBeNull();
  });
});

describe('CORS_ORIGINS at start', () => {
  it('is accepted as *, a list, or unset', () => {
    for (const value of ['*', 'https://terminal.example.com, http://localhost:5173', undefined]) {
      expect(readEnvironment(edgeEnvironment, { CORS_ORIGINS: value }).CORS_ORIGINS).toBe(value);
    }
  });

  it('is refused naming the variable and the entry that is not an origin', () => {
    let error: unknown;
    try {
      readEnvironment(edgeEnvironment, {
        CORS_ORIGINS: 'https://terminal.example.com, https://terminal.example.com/app',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvironmentError);
    const problems = (error as EnvironmentError).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^CORS_ORIGINS must be \* or origins/);
    expect(problems[0]).toContain('not an origin: https://terminal.example.com/app');
  });
});
