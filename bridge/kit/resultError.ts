/**
 * The one error a command handler throws to answer with a platform result code: the kit sends it back as
 * `{id, error: {code, message}}`. Any other exception is answered with the family's internal-error code and a fixed
 * message, so `message` here is the only text of a failure that reaches the peer: it names the field, key or command,
 * never a password.
 */
export class ResultError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ResultError';
  }
}
