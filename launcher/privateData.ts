/**
 * The data folder holds secrets (the registry's client secret hashes, the signing key, the broker secret, manager
 * passwords) and the idempotency store (whole account records), so everything in it is owner-only: folders 0700,
 * files 0600. Files this launcher writes are created that way; files the runtime (workerd: D1 and Durable Object
 * storage) creates inherit the owner-only umask it is started under; and whatever an older release left readable is
 * tightened at start.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
const OWNER_ONLY_UMASK = 0o077;

/** Creates the folder (and missing parents) owner-only, and makes an existing one owner-only. */
export function ensurePrivateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(path, PRIVATE_DIR_MODE);
}

/** Writes the file owner-only, whole: to a temporary name first, then renamed into place. */
export function writePrivateFile(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: PRIVATE_FILE_MODE });
  chmodSync(temporary, PRIVATE_FILE_MODE); // the mode of writeFileSync applies only to a file it creates
  renameSync(temporary, path);
}

/** Makes every folder under `root` (itself included) 0700 and every file 0600; symbolic links are left alone. */
export function tightenTree(root: string): void {
  const pending = [root];
  while (pending.length) {
    const path = pending.pop()!;
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    } // removed meanwhile
    if (stat.isSymbolicLink()) continue;
    if (stat.isDirectory()) {
      if ((stat.mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(path, PRIVATE_DIR_MODE);
      for (const name of readdirSync(path)) pending.push(join(path, name));
    } else if ((stat.mode & 0o777) !== PRIVATE_FILE_MODE) {
      chmodSync(path, PRIVATE_FILE_MODE);
    }
  }
}

/**
 * Runs `start` with the owner-only umask, so processes it spawns (workerd) create their files owner-only for their
 * whole life. The umask is the process's, so it is restored as soon as `start` settles.
 */
export async function withOwnerOnlyUmask<T>(start: () => Promise<T>): Promise<T> {
  const previous = process.umask(OWNER_ONLY_UMASK);
  try {
    return await start();
  } finally {
    process.umask(previous);
  }
}
