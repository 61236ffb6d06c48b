/**
 * The attack drill's HTTP on 127.0.0.1: a free port, the token endpoint's form, JSON reads and writes with the answer's
 * size, and one request written byte for byte on a raw socket (what fetch will not send: broken framing) with its
 * answer read back from the bytes.
 */
import { connect, createServer } from 'node:net';

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The token endpoint's body for a client-credentials grant. */
export const tokenForm = (clientId: string, secret: string) =>
  new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString();

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

export interface JsonAnswer {
  status: number;
  headers: Headers;
  /** The parsed body, or its text when it is not JSON. */
  body: any;
  bytes: number;
}

export async function getJson(base: string, path: string, token?: string): Promise<JsonAnswer> {
  const res = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body, bytes: Buffer.byteLength(text) };
}

export async function postJson(
  base: string,
  path: string,
  token: string,
  body: string | Uint8Array,
): Promise<JsonAnswer> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body as BodyInit,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let parsed: unknown = bytes.toString('utf8');
  try {
    parsed = JSON.parse(parsed as string);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed, bytes: bytes.length };
}

export interface RawAnswer {
  /** Null when no status line came. */
  status: number | null;
  /** By lower-case name; a repeated header keeps its last value. */
  headers: Record<string, string>;
  bodyBytes: number;
  body: string;
}

/** An HTTP/1.x answer from the bytes that came, whole or not; a chunked body is joined from its chunks. */
export function parseRawAnswer(all: Buffer): RawAnswer {
  const split = all.indexOf('\r\n\r\n');
  const head = (split >= 0 ? all.subarray(0, split) : all).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body: Buffer = split >= 0 ? all.subarray(split + 4) : Buffer.alloc(0);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status: status ? Number(status[1]) : null, headers, bodyBytes: body.length, body: body.toString('utf8') };
}

/** Whether the bytes hold a whole answer: its Content-Length of body, or a chunked body's last chunk. */
export function rawAnswerComplete(all: Buffer): boolean {
  const split = all.indexOf('\r\n\r\n');
  if (split < 0) return false;
  const head = all.subarray(0, split).toString('latin1');
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length && all.length >= split + 4 + Number(length[1])) return true;
  return /\r\ntransfer-encoding: *chunked/i.test(head) && all.subarray(split).includes('\r\n0\r\n\r\n');
}

/** A chunked body's data, up to its last chunk or the first chunk it cannot read. */
export function unchunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const nl = body.indexOf('\r\n', at);
    if (nl < 0) break;
    const size = parseInt(body.subarray(at, nl).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(body.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * One request written byte for byte on a fresh socket to `base`'s port on 127.0.0.1; the answer once it is whole, the
 * other side closed, or `timeoutMs` passed (then what came by then).
 */
export function rawExchange(
  base: string,
  request: string | Buffer,
  options: { endAfterWrite?: boolean; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const { port } = new URL(base);
  return new Promise((resolveAnswer) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolveAnswer(parseRawAnswer(Buffer.concat(chunks)));
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 5000);
    socket.on('data', (d) => {
      chunks.push(d);
      if (rawAnswerComplete(Buffer.concat(chunks))) finish();
    });
    socket.on('end', finish);
    socket.on('error', finish);
    socket.write(request, () => {
      if (options.endAfterWrite) socket.end();
    });
  });
}
