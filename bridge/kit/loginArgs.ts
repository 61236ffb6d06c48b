/**
 * A login's arguments, checked against `loginArgsSchema` (shared/protocol.ts, the one source of their shape), and the
 * protocol version chosen from those offered (`chooseVersion`; a login without `versions` offers UNNAMED_VERSIONS).
 * A refusal is a ResultError with the family's bad-arguments code and a message naming the field and its rule; no
 * message holds a value sent, so a password never comes back.
 */
import {
  chooseVersion,
  LOGIN_LIMITS,
  loginArgsSchema,
  PROTOCOL_VERSIONS,
  UNNAMED_VERSIONS,
} from '../../shared/protocol.js';
import { ResultError } from './resultError.js';

export interface CheckedLogin {
  login: number;
  password: string;
  pump: boolean;
  /** The protocol version the session speaks. */
  version: number;
}

const RULES: Record<string, string> = {
  login: `login must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}`,
  password: 'password must be a string of at most 1024 characters',
  pump: 'pump must be a boolean',
  versions: `versions must list the protocol versions the client speaks (1 to ${LOGIN_LIMITS.versions} integers of at least 1)`,
};

export function checkLogin(raw: Record<string, unknown>, badArgs: number): CheckedLogin {
  const parsed = loginArgsSchema.safeParse(raw);
  if (!parsed.success) {
    const field = String(parsed.error.issues[0].path[0] ?? '');
    throw new ResultError(badArgs, RULES[field] ?? 'the login arguments do not match LoginArgs');
  }
  const { login, password, pump, versions } = parsed.data;
  const offered = versions ?? UNNAMED_VERSIONS;
  const version = chooseVersion(offered);
  if (version === undefined) {
    throw new ResultError(
      badArgs,
      `none of the protocol versions ${offered.join(', ')} is spoken here (${PROTOCOL_VERSIONS.join(', ')})`,
    );
  }
  return { login, password, pump: pump !== false, version };
}
