/**
 * The HTTP control channel for fault drills and tests: `POST /control/<server>/<action>` with a JSON body and
 * `GET /control/<server>/state`. Answers JSON; 404 for an unknown server or action, 400 with a message naming the
 * field for a bad body. Only loopback callers, or allowed peers with the control token, get here (the HTTP server
 * checks).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { TradingServer } from '../server/tradingServer.js';

const MAX_BODY = 64 * 1024;

const bodies = {
  drop: z.strictObject({}),
  delay: z.strictObject({
    ms: z.number().int().min(0, 'ms must be at least 0').max(600_000, 'ms must be at most 600000'),
    cmd: z.string().min(1, 'cmd must not be empty').max(64).optional(),
  }),
  'refuse-login': z.strictObject({ on: z.boolean() }),
  freeze: z.strictObject({ on: z.boolean() }),
  restart: z.strictObject({ downMs: z.number().int().min(0).max(600_000, 'downMs must be at most 600000').optional() }),
} as const;

type Action = keyof typeof bodies;

export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  servers: ReadonlyMap<string, TradingServer>,
  path: string[],
): Promise<void> {
  const [serverName, action] = path;
  const server = serverName === undefined ? undefined : servers.get(serverName);
  if (!server) return reply(res, 404, { error: `unknown server ${serverName ?? ''}` });
  if (action === 'state' && path.length === 2) {
    if (req.method !== 'GET') return reply(res, 405, { error: 'state is read with GET' });
    return reply(res, 200, server.state());
  }
  if (path.length !== 2 || !action || !(action in bodies))
    return reply(res, 404, { error: `unknown control action ${action ?? ''}` });
  if (req.method !== 'POST') return reply(res, 405, { error: `${action} needs POST` });

  let raw: unknown;
  try {
    const text = await readBody(req);
    raw = text.trim() === '' ? {} : JSON.parse(text);
  } catch (err) {
    return reply(res, 400, { error: `body must be JSON: ${(err as Error).message}` });
  }
  const parsed = bodies[action as Action].safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : 'body');
    return reply(res, 400, { error: `${field}: ${issue.message}` });
  }
  apply(server, action as Action, parsed.data);
  return reply(res, 200, { ok: true, server: server.name, action, faults: server.faults.describe() });
}

function apply(server: TradingServer, action: Action, body: Record<string, unknown>): void {
  switch (action) {
    case 'drop':
      server.drop('control drop');
      break;
    case 'delay':
      server.faults.setDelay(body.ms as number, (body.cmd as string | undefined) ?? null);
      break;
    case 'refuse-login':
      server.faults.refuseLogin = body.on as boolean;
      break;
    case 'freeze':
      server.setFrozen(body.on as boolean);
      break;
    case 'restart':
      server.restart((body.downMs as number | undefined) ?? 1000, 'control restart');
      break;
  }
  server.log({ msg: 'fault control', server: server.name, action, ...body });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
