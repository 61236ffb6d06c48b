/**
 * Reading a request body at the edge. A body that cannot be read to its end (a broken chunked encoding, which workerd
 * surfaces as a failed read, or a caller that went away mid-body) is the caller's doing, not the edge's: it is refused
 * as a `Validation` problem naming `body`, and logged at debug level only (never as an internal error, so a caller
 * cannot fill the error log by hanging up). A JSON body must be UTF-8: bytes that are not are refused, never replaced
 * by U+FFFD and sent on.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../env.js';
import { MAX_BODY_DEPTH, type RawBody } from '../../shared/catalog/inputs.js';
import { JsonTooDeepError, parseJson } from '../../shared/losslessJson.js';

export const UNREADABLE_BODY =
  'body: could not be read to its end (a broken chunked encoding, or the connection closed mid-body)';
export const NOT_UTF8_BODY = 'body: must be UTF-8 text (it holds bytes that are not UTF-8)';

/** Decodes strictly: a byte sequence that is not UTF-8 throws. A leading byte order mark is dropped, as `text()` does. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export type BodyText = { ok: true; text: string } | { ok: false; problem: string };

/** The whole body as UTF-8 text, or the problem that kept it from being read or decoded. */
export async function readBodyText(c: Context<AppEnv>): Promise<BodyText> {
  let bytes: ArrayBuffer;
  try {
    bytes = await c.req.arrayBuffer();
  } catch (error) {
    bodyNotRead(c, error);
    return { ok: false, problem: UNREADABLE_BODY };
  }
  try {
    return { ok: true, text: UTF8.decode(bytes) };
  } catch {
    return { ok: false, problem: NOT_UTF8_BODY };
  }
}

/** The debug line of a body read that failed: the caller's framing or its connection, with the trace id. */
export function bodyNotRead(c: Context<AppEnv>, error: unknown): void {
  console.debug(
    JSON.stringify({
      level: 'debug',
      msg: 'request body not read to its end',
      traceId: c.get('traceId'),
      error: String(error),
    }),
  );
}

/** The body as JSON; one that is not read to its end or not UTF-8 is refused before it is parsed. */
export async function readBody(c: Context<AppEnv>): Promise<RawBody> {
  const read = await readBodyText(c);
  if (!read.ok) return { kind: 'refused', problem: read.problem };
  const { text } = read;
  if (text.trim() === '') return { kind: 'none' };
  try {
    // Lossless: a PF5 id beyond 2^53 − 1 in the body is read as its exact bigint, never rounded.
    return { kind: 'json', value: parseJson(text) };
  } catch (error) {
    if (error instanceof JsonTooDeepError)
      return { kind: 'refused', problem: `body: nests deeper than ${MAX_BODY_DEPTH} levels` };
    return { kind: 'malformed' };
  }
}
