/**
 * How the trading server's failures become envelope errors: a manager error answer carries the platform's numeric
 * result code, which the edge names per family; a not-found answer is a `NotFound` envelope that keeps the code.
 */
import { OperationError } from '../../shared/errors.js';
import type { Family, ManagerErrorBody } from '../../shared/protocol.js';
import { NOT_FOUND_CODE, TOO_FREQUENT_CODE } from '../../shared/resultCodes.js';

/**
 * Raised when a call's deadline passes inside the broker; the link answers it as a time-out. `sent` tells whether the
 * command had gone to the trading server (it may then still be applied) or the deadline passed before it could be sent.
 */
export class DeadlineError extends OperationError {
  constructor(
    message = 'deadline passed',
    readonly sent = false,
  ) {
    super('NoConnect', message, null);
    this.name = 'DeadlineError';
  }
}

/**
 * The trading server's answer was larger than the session reads (`SessionOptions.maxAnswerFrameBytes`): left unread.
 * Nothing is answered from it; the call's handler lets it through, and the link says what to ask for instead.
 */
export class AnswerTooLargeError extends OperationError {
  constructor(readonly bytes: number) {
    super('Validation', `the trading server's answer of ${bytes} bytes is larger than one answer may carry`, null);
    this.name = 'AnswerTooLargeError';
  }
}

/**
 * Raised for requests that were sent when the connection dropped: the server may or may not have acted on them, so a
 * mutating call failing this way has an unknown outcome.
 */
export class ConnectionLostError extends OperationError {
  constructor(message: string) {
    super('NoConnect', message, null);
    this.name = 'ConnectionLostError';
  }
}

export interface FailureContext {
  /**
   * The request reads one record by its key. PF4 answers `InvalidData` both for an unknown key and for bad
   * arguments, so only a keyed single-record read may read it as not-found; PF5 has a dedicated code.
   */
  keyedRead?: boolean;
}

export function managerFailure(family: Family, error: ManagerErrorBody, context: FailureContext = {}): OperationError {
  const code = typeof error.code === 'number' ? error.code : null;
  const message =
    typeof error.message === 'string' && error.message ? error.message : 'the trading server refused the request';
  const notFound = code === NOT_FOUND_CODE[family] && (family === 'PF5' || context.keyedRead === true);
  if (notFound) return new OperationError('NotFound', message, code);
  return new OperationError(family === 'PF4' ? 'PF4Error' : 'PF5Error', message, code);
}

/**
 * A "not now" refusal the broker makes itself, as the platform's own "too frequent" result, with the seconds to wait
 * (a bound the gateway keeps: failed password checks of one account, a caller past its share of a manager session).
 */
export function tooFrequent(family: Family, message: string, retryAfterSeconds: number): OperationError {
  return new OperationError(
    family === 'PF4' ? 'PF4Error' : 'PF5Error',
    message,
    TOO_FREQUENT_CODE[family],
    null,
    retryAfterSeconds,
  );
}

/** The not-found error a handler raises itself (cache miss, empty live answer), with the family's code. */
export function notFound(family: Family, message: string): OperationError {
  return new OperationError('NotFound', message, NOT_FOUND_CODE[family]);
}

/**
 * The refusal of a call needing a command or an event kind the trading server's login did not declare: nothing was
 * sent. The platform's family error without a result code (the server never answered), marked `notImplemented` so
 * that v1 answers it 501.
 */
export function notImplemented(family: Family, message: string): OperationError {
  return new OperationError(family === 'PF4' ? 'PF4Error' : 'PF5Error', message, null, null, null, true);
}

/** The refusal naming every command and event kind that is missing from what the trading server's login declared. */
export function undeclaredRefusal(
  family: Family,
  commands: readonly string[],
  events: readonly string[],
): OperationError {
  const kinds = [...new Set(events)];
  const parts = [
    ...(commands.length ? [`${[...new Set(commands)].join(', ')} (not among the commands its login declared)`] : []),
    ...(kinds.length
      ? [`the ${kinds.join(', ')} event${kinds.length > 1 ? 's' : ''} (not among the event kinds its login declared)`]
      : []),
  ];
  return notImplemented(family, `the trading server does not implement ${parts.join(', nor ')}`);
}
