/**
 * Changing the headers of an answer after the route made it. An answer passed through from a fetch or from a Durable
 * Object has immutable headers (the first change throws); such an answer is replaced by a copy whose headers can be
 * changed, a WebSocket upgrade keeping its socket.
 */
import type { Context } from 'hono';

/** A copy of `res` whose headers can be changed: the same status, headers and body, or the same WebSocket. */
export function mutable(res: Response): Response {
  if (res.webSocket) return new Response(null, { status: 101, webSocket: res.webSocket, headers: res.headers });
  return new Response(res.body, res);
}

/** Applies `change` to the headers of the context's answer, copying the answer first if its headers are immutable. */
export function changeAnswerHeaders(c: Pick<Context, 'res'>, change: (headers: Headers) => void): void {
  try {
    change(c.res.headers);
  } catch {
    c.res = mutable(c.res);
    change(c.res.headers);
  }
}
