/**
 * The broker's check of a trading server's login answer (`LoginResult` of shared/protocol.ts, docs/manager-protocol.md
 * "Login"): before a manager session is up, the answer must parse, name a protocol version the broker offered, the
 * family the platform is registered as, a build of at least the platform's `minBuild`, every right of its
 * `requiredRights`, and declare the keep-alive command (`Ping`). A server that fails any of these is not served at
 * all: the session stays down with the refusal's message, so a platform is never half-working.
 *
 * The refusal names every difference found, each in words an operator can act on; it never carries the manager's
 * password (the answer holds none, and nothing of the login's arguments is quoted).
 */
import type { z } from 'zod';
import { loginResultSchema, PROTOCOL_VERSIONS, type LoginResult } from '../../shared/protocol.js';
import type { PlatformConfig } from './managerSession.js';

/** Why a login answer was refused, one word each: the label of `broker_login_refusals_total`. */
export const LOGIN_REFUSAL_REASONS = ['malformed', 'version', 'family', 'build', 'rights', 'keepAlive'] as const;
export type LoginRefusalReason = (typeof LOGIN_REFUSAL_REASONS)[number];

/** The command a session keeps itself alive with; a server that does not declare it cannot be watched. */
export const KEEP_ALIVE_COMMAND = 'Ping';

/** The most zod issues a malformed answer's refusal lists (the rest are counted). */
const MAX_ISSUES = 3;

export type LoginAnswerCheck =
  | { ok: true; answer: LoginResult }
  | { ok: false; reasons: LoginRefusalReason[]; message: string };

/** Checks `result`, the login answer of a session offering `offered` versions, against the platform's entry. */
export function checkLoginAnswer(
  result: unknown,
  config: Pick<PlatformConfig, 'family' | 'login' | 'minBuild' | 'requiredRights'>,
  offered: readonly number[] = PROTOCOL_VERSIONS,
): LoginAnswerCheck {
  const parsed = loginResultSchema.safeParse(result);
  if (!parsed.success) return { ok: false, reasons: ['malformed'], message: malformed(parsed.error.issues) };
  const answer = parsed.data;
  const found: Array<[LoginRefusalReason, string]> = [];
  if (!offered.includes(answer.version)) {
    found.push([
      'version',
      `the trading server speaks protocol version ${answer.version}; this broker speaks ${offered.join(', ')}`,
    ]);
  }
  if (answer.family !== config.family) {
    found.push([
      'family',
      `the trading server's family is ${answer.family}; the platform is registered as ${config.family}`,
    ]);
  }
  if (config.minBuild !== undefined && answer.build < config.minBuild) {
    found.push([
      'build',
      `the trading server's build is ${answer.build}; the platform requires at least build ${config.minBuild} (minBuild)`,
    ]);
  }
  const held = new Set(answer.rights);
  const lacking = (config.requiredRights ?? []).filter((right) => !held.has(right));
  if (lacking.length) {
    found.push([
      'rights',
      `manager ${config.login} lacks the right${lacking.length > 1 ? 's' : ''} ${lacking.join(', ')} that the platform requires (requiredRights)`,
    ]);
  }
  if (!answer.capabilities.commands.includes(KEEP_ALIVE_COMMAND)) {
    found.push([
      'keepAlive',
      `the trading server does not declare ${KEEP_ALIVE_COMMAND} (the keep-alive) among its commands`,
    ]);
  }
  if (found.length === 0) return { ok: true, answer };
  return { ok: false, reasons: found.map(([reason]) => reason), message: found.map(([, text]) => text).join('; ') };
}

/** A malformed answer in words: `login answer: <path>: <zod's message>` for its first issues. */
function malformed(issues: readonly z.core.$ZodIssue[]): string {
  const listed = issues
    .slice(0, MAX_ISSUES)
    .map((issue) => `${issue.path.map(String).join('.') || '(the answer)'}: ${issue.message}`);
  const more = issues.length > MAX_ISSUES ? `; and ${issues.length - MAX_ISSUES} more` : '';
  return `login answer: ${listed.join('; ')}${more}`;
}
