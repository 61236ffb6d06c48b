/**
 * The one error a simulated command answers with: a platform error carrying the family's numeric result code
 * (shared/resultCodes.ts), which the protocol layer sends back as `{id, error: {code, message}}`. It has a module of
 * its own so the worlds, their commands and the argument readers can throw it without importing the world interface.
 */
export class CommandError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = 'CommandError';
  }
}
