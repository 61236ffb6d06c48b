/**
 * The broker's platform file (`BROKER_PLATFORMS_FILE`): which trade platforms this broker serves, where their
 * trading servers are and how its manager logs in. It is the only place manager passwords live, so nothing read from
 * it is ever logged except ids and server addresses. An entry holds its `password`, or names the environment variable
 * that does (`passwordEnv`), so a container's file can be committed and its password come from a secret. An entry's
 * `standby` is `hot` (the default: logged in from the start) or `cold` (logged in on the first call, subscription or
 * replication, logged out again when idle; see broker/README.md, "Brokers in pairs"). `minBuild` and `requiredRights`
 * are what the trading server's login answer must show besides the registered family (its `build` at least `minBuild`,
 * its `rights` holding every one of `requiredRights`); a server that shows less is not served (broker/session/loginAnswer.ts).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { jsonSyntaxOffset } from '../../shared/losslessJson.js';
import { FAMILIES, LOGIN_LIMITS } from '../../shared/protocol.js';
import type { PlatformConfig } from '../session/managerSession.js';

const platformEntry = z
  .object({
    id: z.string().min(1),
    family: z.enum(FAMILIES),
    server: z.string().regex(/^wss?:\/\//, 'server must be a ws:// or wss:// URL'),
    login: z.number().int().positive(),
    password: z.string().optional(),
    passwordEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'passwordEnv must name an environment variable')
      .optional(),
    standby: z.enum(['hot', 'cold']).optional(),
    minBuild: z
      .number({ error: 'minBuild must be a number' })
      .int('minBuild must be an integer')
      .min(1, 'minBuild must be at least 1')
      .optional(),
    requiredRights: z
      .array(
        z
          .string({ error: 'requiredRights must list right names' })
          .min(1, 'a right name must not be empty')
          .max(LOGIN_LIMITS.nameLength, `a right name has at most ${LOGIN_LIMITS.nameLength} characters`),
        { error: 'requiredRights must be a list of right names' },
      )
      .max(LOGIN_LIMITS.rights, `requiredRights lists at most ${LOGIN_LIMITS.rights} rights`)
      .optional(),
  })
  .refine((p) => (p.password === undefined) !== (p.passwordEnv === undefined), {
    message: 'give password or passwordEnv, not both',
  });

const platformsFile = z.object({ platforms: z.array(platformEntry) });

/**
 * The file's text as JSON. Text that is not JSON is refused saying where (JSON.parse's own message quotes the text
 * around the fault, which may be a password).
 */
function fileJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const at = jsonSyntaxOffset(text);
    throw new Error(`the platform file is not JSON${at === undefined ? '' : ` (at position ${at})`}`);
  }
}

/** Parses the file's text; throws with the offending field named (never its value, nor any of the file's text). */
export function parsePlatforms(text: string, env: Record<string, string | undefined> = process.env): PlatformConfig[] {
  const parsed = platformsFile.safeParse(fileJson(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid platform file at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  const seen = new Set<string>();
  const platforms: PlatformConfig[] = [];
  for (const [i, p] of parsed.data.platforms.entries()) {
    if (seen.has(p.id)) throw new Error(`invalid platform file: platform ${p.id} listed twice`);
    seen.add(p.id);
    const password = p.passwordEnv === undefined ? p.password! : env[p.passwordEnv];
    if (!password && p.passwordEnv !== undefined) {
      throw new Error(
        `invalid platform file at platforms.${i}.passwordEnv: environment variable ${p.passwordEnv} is not set`,
      );
    }
    platforms.push({
      id: p.id,
      family: p.family,
      server: p.server,
      login: p.login,
      password: password!,
      ...(p.standby === 'cold' ? { standby: 'cold' as const } : {}),
      ...(p.minBuild !== undefined ? { minBuild: p.minBuild } : {}),
      ...(p.requiredRights !== undefined ? { requiredRights: [...new Set(p.requiredRights)] } : {}),
    });
  }
  return platforms;
}

/** Reads the file; a missing file means no platforms yet (the launcher may write it after the broker starts). */
export async function readPlatforms(path: string): Promise<{ platforms: PlatformConfig[]; text: string | null }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { platforms: [], text: null };
    throw error;
  }
  return { platforms: parsePlatforms(text), text };
}

/**
 * Two entries describe the same session when every field matches (standby and what the login answer must show too);
 * anything else needs a fresh start, whose login is checked against the new entry.
 */
export function samePlatform(a: PlatformConfig, b: PlatformConfig): boolean {
  return (
    a.family === b.family &&
    a.server === b.server &&
    a.login === b.login &&
    a.password === b.password &&
    (a.standby ?? 'hot') === (b.standby ?? 'hot') &&
    a.minBuild === b.minBuild &&
    (a.requiredRights ?? []).join('\n') === (b.requiredRights ?? []).join('\n')
  );
}
