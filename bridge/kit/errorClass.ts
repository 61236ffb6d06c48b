/**
 * How the kit's log lines name a driver's failure whose text could hold records or credentials (a snapshot row, a
 * login's password): by its class alone (`TypeError`, a driver's own `DirectoryError`), never its message.
 */
export function errorClass(err: unknown): string {
  if (err instanceof Error) return err.constructor?.name || err.name || 'Error';
  return err === null ? 'null' : typeof err;
}
