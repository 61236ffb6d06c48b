/** A registry query that failed because a table is missing (D1 answers SQLite's `no such table`): not migrated yet. */
export function registryNotMigrated(err: unknown): boolean {
  return /\bno such table\b/i.test(String(err instanceof Error ? err.message : err));
}
