/**
 * The check of a login answer on its own: what passes (the bounds inclusive: a build equal to `minBuild`, exactly the
 * required rights), each difference's reason and words, several at once in the order of the fields, and a malformed
 * answer's zod issues by path, at most three of them.
 */
import { describe, expect, it } from 'vitest';
import { checkLoginAnswer } from './loginAnswer.js';

const ANSWER = {
  version: 1,
  server: 'live-1',
  family: 'PF4',
  build: 1420,
  rights: ['admin', 'reports'],
  capabilities: { commands: ['Ping', 'UserRecordRequest'], events: ['users'] },
};
const ENTRY = { family: 'PF4' as const, login: 1000 };

describe('checkLoginAnswer', () => {
  it('accepts an answer that fits, at the bounds too, and gives it parsed', () => {
    expect(checkLoginAnswer(ANSWER, ENTRY)).toStrictEqual({ ok: true, answer: ANSWER });
    expect(checkLoginAnswer(ANSWER, { ...ENTRY, minBuild: 1420, requiredRights: ['reports', 'admin'] }).ok).toBe(true);
    expect(checkLoginAnswer({ ...ANSWER, version: 2 }, ENTRY, [1, 2]).ok).toBe(true);
  });

  it('names each difference in the order of the fields, with its reason', () => {
    const check = checkLoginAnswer(
      { ...ANSWER, version: 3, family: 'PF5', build: 1419, rights: [], capabilities: { commands: [], events: [] } },
      { ...ENTRY, minBuild: 1420, requiredRights: ['admin'] },
      [1, 2],
    );
    expect(check).toStrictEqual({
      ok: false,
      reasons: ['version', 'family', 'build', 'rights', 'keepAlive'],
      message:
        'the trading server speaks protocol version 3; this broker speaks 1, 2; ' +
        "the trading server's family is PF5; the platform is registered as PF4; " +
        "the trading server's build is 1419; the platform requires at least build 1420 (minBuild); " +
        'manager 1000 lacks the right admin that the platform requires (requiredRights); ' +
        'the trading server does not declare Ping (the keep-alive) among its commands',
    });
  });

  it("gives a malformed answer's first three issues by path, and how many more there are", () => {
    expect(checkLoginAnswer(null, ENTRY)).toStrictEqual({
      ok: false,
      reasons: ['malformed'],
      message: 'login answer: (the answer): Invalid input: expected object, received null',
    });
    const check = checkLoginAnswer(
      { ...ANSWER, version: 0, server: '', build: 'new', rights: [1], capabilities: { commands: [''], events: [] } },
      ENTRY,
    );
    expect(check).toStrictEqual({
      ok: false,
      reasons: ['malformed'],
      message:
        'login answer: version: Too small: expected number to be >=1; server: Too small: expected string to have >=1 characters; ' +
        'build: Invalid input: expected number, received string; and 2 more',
    });
  });
});
