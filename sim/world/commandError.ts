/**
 * The one error a simulated command answers with: a platform error carrying the family's numeric result code
 * (shared/resultCodes.ts), which the bridge kit sends back as `{id, error: {code, message}}` (it is the kit's
 * ResultError). It has a module of its own so the worlds, their commands and the argument readers can throw it
 * without importing the world interface.
 */
import { ResultError } from '../../bridge/kit/resultError.js';

export class CommandError extends ResultError {
  constructor(code: number, message: string) {
    super(code, message);
    this.name = 'CommandError';
  }
}
