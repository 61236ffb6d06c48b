/**
 * The broker's platform file (`BROKER_PLATFORMS_FILE`): which trade platforms this broker serves, where their
 * trading servers are and how its manager logs in. It is the only place manager passwords live, so nothing read from
 * it is ever logged except ids and server addresses.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { PlatformConfig } from '../session/managerSession.js';

const platformEntry = z.object({
  id: z.string().min(1),
  family: z.enum(['PF4', 'PF5']),
  server: z.string().regex(/^wss?:\/\//, 'server must be a ws:// or wss:// URL'),
  login: z.number().int().positive(),
  password: z.string(),
});

const platformsFile = z.object({ platforms: z.array(platformEntry) });

/** Parses the file's text; throws with the offending field named (never its value). */
export function parsePlatforms(text: string): PlatformConfig[] {
  const parsed = platformsFile.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid platform file at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  const seen = new Set<string>();
  for (const p of parsed.data.platforms) {
    if (seen.has(p.id)) throw new Error(`invalid platform file: platform ${p.id} listed twice`);
    seen.add(p.id);
  }
  return parsed.data.platforms;
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

/** Two entries describe the same session when every field matches; anything else needs a fresh login. */
export function samePlatform(a: PlatformConfig, b: PlatformConfig): boolean {
  return a.family === b.family && a.server === b.server && a.login === b.login && a.password === b.password;
}
