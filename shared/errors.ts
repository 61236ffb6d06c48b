/**
 * Transport-level error codes of the v2 envelope (`WebApiErrorCode` in the contract) and the errors both sides raise.
 */
export const WEB_API_ERROR_CODES = [
  'Ok',
  'NoConnect',
  'Validation',
  'PF4Error',
  'Forbidden',
  'NotFound',
  'PF5Error',
  'Internal',
] as const;
export type WebApiErrorCode = (typeof WEB_API_ERROR_CODES)[number];

/** An operation failure that carries its envelope code; thrown by broker handlers, caught at the link. */
export class OperationError extends Error {
  constructor(
    readonly code: WebApiErrorCode,
    message: string,
    readonly managerCode: number | null = null,
    /**
     * `data` the envelope carries beside the error, for the few operations the spec answers that way
     * (`UserPasswordCheck`: false with the platform's refusal). Null for every other failure.
     */
    readonly data: unknown = null,
    /**
     * Seconds after which the same call may be answered otherwise, for a refusal that says "not now" (a bound the
     * gateway keeps, such as failed password checks of one account): v1 answers it 429 with `Retry-After`, v2 sends
     * the header beside its envelope. Null for every other failure.
     */
    readonly retryAfterSeconds: number | null = null,
    /**
     * The trading server does not implement what the operation needs (a command or a change-event kind its login did
     * not declare): refused before anything was sent. v1 answers it 501; v2 as its `code`. False for every other failure.
     */
    readonly notImplemented: boolean = false,
  ) {
    super(message);
    this.name = 'OperationError';
  }
}
