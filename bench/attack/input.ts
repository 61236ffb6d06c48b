/**
 * Attack 6: huge arrays, a large invalid body, invalid UTF-8, and framing over a raw socket. An answer without the
 * worker's `traceparent` header came from local workerd itself, before the worker ran.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Stack } from '../../launcher/stack.js';
import { newClient } from './clients.js';
import { progress, type Drill } from './drill.js';
import { getJson, postJson, rawExchange } from './http.js';
import { sleep } from './waiting.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What an answer said, in a few words: the v2 envelope's error, the v1 body's, or the start of its text. */
export function said(body: any): string {
  if (body && typeof body === 'object') {
    if ('error' in body && body.error && typeof body.error === 'object')
      return `${body.error.code}: ${String(body.error.message).slice(0, 90)}`;
    if ('errorCode' in body) return `${body.errorCode}: ${String(body.errorDescription).slice(0, 90)}`;
  }
  return String(body).replace(/\s+/g, ' ').slice(0, 60);
}

export async function attackInput(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress('6: huge arrays, large invalid bodies, invalid UTF-8, bad framing');
  const client = await newClient(stack, 'framing', 'webapi webapi.write');
  const token = client.token;
  const v2 = `/api/v2/PF4/${stack.platforms.pf4}`;
  const v1 = `/api/PF4/${stack.platforms.pf4}`;
  const from = Date.now();
  const items = (n: number, item: string) => `[${`${item},`.repeat(n - 1)}${item}]`;
  type Case = { name: string; status: number | null; worker: boolean; said: string; bytes: number };
  const cases: Case[] = [];
  const viaFetch = async (name: string, path: string, body: string | Uint8Array) => {
    const r = await postJson(edgeUrl, path, token, body);
    cases.push({ name, status: r.status, worker: r.headers.has('traceparent'), said: said(r.body), bytes: r.bytes });
  };
  await viaFetch('v2 JSON array of 130,000 elements', `${v2}/UserRecordNew`, items(130_000, '1'));
  await viaFetch('v1 JSON array of 130,000 elements', `${v1}/UserRecordNew`, items(130_000, '1'));
  await viaFetch('v2 JSON array of 1,000,000 elements (2 MB)', `${v2}/UserRecordNew`, items(1_000_000, '1'));
  const invalid = `{"message":"m","logins":${items(39_000, '"xx"')}}`;
  await viaFetch(
    `v2 ${Math.round(invalid.length / 1000)} KB body wrong in every item`,
    `${v2}/NotificationsSend`,
    invalid,
  );
  const name = `Drill ${randomUUID().slice(0, 6)} `;
  const notUtf8 = new Uint8Array([
    ...Buffer.from(`{"group":"demo","name":"${name}`),
    0xff,
    0xfe,
    0xc3,
    ...Buffer.from('("}'),
  ]);
  await viaFetch('v2 JSON body with invalid UTF-8', `${v2}/UserRecordNew`, notUtf8);
  await viaFetch('v1 JSON body with invalid UTF-8', `${v1}/UserRecordNew`, notUtf8);

  const head = (target: string, framing: string) =>
    `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nConnection: close\r\n${framing}\r\n`;
  const raw = async (label: string, request: string, options: { endAfterWrite?: boolean } = {}) => {
    const r = await rawExchange(edgeUrl, request, options);
    let body: unknown = r.body;
    try {
      body = JSON.parse(r.body);
    } catch {
      /* text */
    }
    cases.push({
      name: label,
      status: r.status,
      worker: 'traceparent' in r.headers,
      said: r.status === null ? 'no answer' : said(body),
      bytes: r.bodyBytes,
    });
  };
  await raw(
    'malformed chunked body (chunk size "zz")',
    `${head(`${v2}/UserRecordNew`, 'Transfer-Encoding: chunked\r\n')}zz\r\n{}\r\n0\r\n\r\n`,
  );
  await raw(
    'chunk longer than its size',
    `${head(`${v1}/UserRecordNew`, 'Transfer-Encoding: chunked\r\n')}2\r\n{"group":"demo"}\r\n0\r\n\r\n`,
  );
  await raw(
    'body cut short (Content-Length 100, 15 bytes sent)',
    `${head(`${v2}/UserRecordNew`, 'Content-Length: 100\r\n')}{"group":"demo"`,
    { endAfterWrite: true },
  );
  const workerdCases = cases.length;
  await raw(
    'conflicting Content-Length (2 and 5)',
    `${head(`${v2}/UserRecordNew`, 'Content-Length: 2\r\nContent-Length: 5\r\n')}{}`,
  );
  await raw('negative Content-Length', `${head(`${v2}/UserRecordNew`, 'Content-Length: -1\r\n')}{}`);
  await raw('unknown Transfer-Encoding (bogus)', `${head(`${v2}/UserRecordNew`, 'Transfer-Encoding: bogus\r\n')}{}`);
  await raw('absolute-form request target', `${head(`${edgeUrl}${v2}/UserRecordNew`, 'Content-Length: 2\r\n')}{}`);

  // Callers gone mid-body: nothing at error level.
  const dropped = 20;
  await Promise.all(
    Array.from(
      { length: dropped },
      () =>
        new Promise<void>((done) => {
          const socket = connect(Number(new URL(edgeUrl).port), '127.0.0.1', () => {
            socket.write(`${head(`${v2}/UserRecordNew`, 'Content-Length: 1000\r\n')}{"group":"demo","name":"`, () =>
              setTimeout(() => {
                socket.destroy();
                done();
              }, 100),
            );
          });
          socket.on('error', () => done());
        }),
    ),
  );
  await sleep(1500);
  const errors = drill.errorLinesSince(from);
  const replaced = await serverAccountsNamed(stack, name, token);

  const line = (c: Case) =>
    `${c.name} → ${c.status ?? 'no answer'} ${c.said} (${c.bytes.toLocaleString('en-US')} B${c.worker ? '' : ', answered by workerd, no worker trace header'})`;
  const workerAnswered = cases.filter((c) => c.worker);
  const workerd = cases.filter((c) => !c.worker);
  const largest = Math.max(...cases.slice(0, 4).map((c) => c.bytes));
  drill.found({
    id: '6a',
    title: 'huge arrays, a large invalid body, invalid UTF-8, broken body framing (answered by the worker)',
    figures:
      `${cases.slice(0, workerdCases).map(line).join('; ')}; largest refusal ${largest.toLocaleString('en-US')} B; accounts on the trading server named "${name.trim()}…": ${replaced}; ` +
      `${dropped} callers gone mid-body; edge error-level log lines in all of it: ${errors.length}${errors.length ? ` (first: ${errors[0].line.slice(0, 160)})` : ''}`,
    held:
      workerAnswered.every((c) => c.status !== null && c.status < 500) &&
      cases.slice(0, workerdCases).every((c) => c.worker) &&
      largest <= 8192 &&
      replaced === 0 &&
      errors.length === 0,
  });
  const readme = readFileSync(join(root, 'docs', 'operating.md'), 'utf8');
  const documented =
    /absolute-form/i.test(readme) &&
    /Transfer-Encoding/i.test(readme) &&
    /Content-Length/i.test(readme) &&
    /Cloudflare's front/i.test(readme);
  drill.found({
    id: '6b',
    title: 'framing local workerd answers before the worker runs',
    figures:
      `${cases.slice(workerdCases).map(line).join('; ')}; docs/operating.md ${documented ? 'says' : 'does not say'} that these are answered by ` +
      `local workerd itself and by Cloudflare's front in production`,
    held: cases.slice(workerdCases).every((c) => (c.worker ? c.status !== null && c.status < 500 : documented)),
  });
  if (workerd.length) progress(`6: answered by workerd itself: ${workerd.map((c) => c.name).join(', ')}`);
}

/** Accounts on the trading server whose name starts with `prefix` (read live through the gateway). */
async function serverAccountsNamed(stack: Stack, prefix: string, token: string): Promise<number | string> {
  const r = await getJson(stack.edgeUrl, `/api/v2/PF4/${stack.platforms.pf4}/UsersRequest?requestTimeout=30`, token);
  if (!Array.isArray(r.body?.data)) return `unknown (${r.status})`;
  return (r.body.data as Array<{ name: string }>).filter((u) => u.name.startsWith(prefix.trim())).length;
}
