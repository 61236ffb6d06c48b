/**
 * The platform file's fields for the check of a login answer: `minBuild` (an integer of at least 1) and
 * `requiredRights` (right names), each refused naming the field and the rule, never a value; both kept in the entry
 * and part of what makes two entries the same session.
 */
import { describe, expect, it } from 'vitest';
import { parsePlatforms, samePlatform } from './platformsFile.js';

const entry = {
  id: '9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a',
  family: 'PF4',
  server: 'ws://127.0.0.1:1/x',
  login: 1000,
  password: 'secret-pw',
};
const parse = (fields: Record<string, unknown>) =>
  parsePlatforms(JSON.stringify({ platforms: [{ ...entry, ...fields }] }));
const refusal = (fields: Record<string, unknown>) => {
  try {
    parse(fields);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the entry was accepted');
};

describe('minBuild and requiredRights in the platform file', () => {
  it('keeps them when given, and leaves them out when not', () => {
    expect(parse({})[0]).toStrictEqual({
      id: entry.id,
      family: 'PF4',
      server: entry.server,
      login: 1000,
      password: 'secret-pw',
    });
    expect(parse({ minBuild: 1500, requiredRights: ['trades', 'money', 'trades'] })[0]).toMatchObject({
      minBuild: 1500,
      requiredRights: ['trades', 'money'],
    });
    expect(parse({ requiredRights: [] })[0].requiredRights).toStrictEqual([]);
  });

  it('refuses a minBuild that is not an integer of at least 1, naming the field', () => {
    expect(refusal({ minBuild: 0 })).toBe('invalid platform file at platforms.0.minBuild: minBuild must be at least 1');
    expect(refusal({ minBuild: 12.5 })).toBe(
      'invalid platform file at platforms.0.minBuild: minBuild must be an integer',
    );
    expect(refusal({ minBuild: '1500' })).toBe(
      'invalid platform file at platforms.0.minBuild: minBuild must be a number',
    );
  });

  it('refuses requiredRights that are not a list of right names, naming the field and the entry', () => {
    expect(refusal({ requiredRights: 'trades' })).toBe(
      'invalid platform file at platforms.0.requiredRights: requiredRights must be a list of right names',
    );
    expect(refusal({ requiredRights: ['trades', 7] })).toBe(
      'invalid platform file at platforms.0.requiredRights.1: requiredRights must list right names',
    );
    expect(refusal({ requiredRights: [''] })).toBe(
      'invalid platform file at platforms.0.requiredRights.0: a right name must not be empty',
    );
    expect(refusal({ requiredRights: ['r'.repeat(65)] })).toBe(
      'invalid platform file at platforms.0.requiredRights.0: a right name has at most 64 characters',
    );
    expect(refusal({ requiredRights: Array.from({ length: 257 }, (_, i) => `r${i}`) })).toBe(
      'invalid platform file at platforms.0.requiredRights: requiredRights lists at most 256 rights',
    );
    expect(refusal({ requiredRights: 'secret-pw' })).not.toContain('secret-pw');
  });

  it('makes an entry with another minBuild or other requiredRights another session', () => {
    const [a] = parse({ minBuild: 1500, requiredRights: ['trades'] });
    expect(samePlatform(a, parse({ minBuild: 1500, requiredRights: ['trades'] })[0])).toBe(true);
    expect(samePlatform(a, parse({ minBuild: 1600, requiredRights: ['trades'] })[0])).toBe(false);
    expect(samePlatform(a, parse({ minBuild: 1500, requiredRights: ['trades', 'money'] })[0])).toBe(false);
    expect(samePlatform(a, parse({ requiredRights: ['trades'] })[0])).toBe(false);
  });
});

describe('a platform file that is not JSON', () => {
  const error = (text: string) => {
    try {
      parsePlatforms(text);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('the text was accepted');
  };

  it('is refused saying where, never quoting the file', () => {
    const good = JSON.stringify({ platforms: [entry] });
    const at = good.indexOf('"secret-pw"') + '"secret-pw"'.length;
    // A password left unquoted, a missing comma right behind it, a string cut short, an empty file, a trailing word.
    const unquoted = good.replace('"secret-pw"', 'secret-pw');
    expect(error(unquoted)).toBe(`the platform file is not JSON (at position ${good.indexOf('"secret-pw"')})`);
    expect(error(`${good.slice(0, at)} "standby":"hot"${good.slice(at)}`)).toBe(
      `the platform file is not JSON (at position ${at + 1})`,
    );
    expect(error(good.slice(0, at - 3))).toBe(
      `the platform file is not JSON (at position ${good.indexOf('"secret-pw"')})`,
    );
    expect(error('')).toBe('the platform file is not JSON (at position 0)');
    expect(error(`${good} secret-pw`)).toBe(`the platform file is not JSON (at position ${good.length + 1})`);
    for (const text of [unquoted, good.slice(0, at - 3), `${good} secret-pw`])
      expect(error(text)).not.toContain('secret');
  });
});
