/**
 * Helpers for end-to-end tests: one stack per test file (real simulator and broker processes, the edge in workerd),
 * an authorised client for it, a manager session on its simulator, and polling for conditions that follow the server
 * within milliseconds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { DEMO_MANAGER_LOGIN, DEMO_PF4_SERVER } from '../../launcher/demo.js';
import { startStack, type Stack, type StackOptions } from '../../launcher/stack.js';
import { ManagerClient } from '../support/sim/managerClient.js';

export interface Envelope<T = any> {
  data: T | null;
  error: { code: string; managerCode: string | number | null; message: string | null } | null;
  meta: { activityId: string | null; paging?: { nextCursor: string | null; hasMore: boolean } };
}

export interface Client {
  stack: Stack;
  /** Every log line the stack's processes printed so far (bounded). */
  logLines: string[];
  token: string;
  v2pf4: string;
  v2pf5: string;
  v1pf4: string;
  get<T = any>(url: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; body: T }>;
  post<T = any>(
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: T }>;
}

export async function startClient(options: StackOptions = {}): Promise<Client> {
  const lines: string[] = [];
  const stack = await startStack({
    seed: 7,
    ...options,
    log: (line) => {
      lines.push(line);
      if (lines.length > 20_000) lines.shift();
      if (process.env.E2E_LOG) console.log(line);
    },
  });
  const token = await stack.token();
  const call = async (method: string, url: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url.startsWith('http') ? url : `${stack.edgeUrl}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* plain text */
    }
    return { status: res.status, headers: res.headers, body: parsed as any };
  };
  return {
    stack,
    logLines: lines,
    token,
    v2pf4: `/api/v2/PF4/${stack.platforms.pf4}`,
    v2pf5: `/api/v2/PF5/${stack.platforms.pf5}`,
    v1pf4: `/api/PF4/${stack.platforms.pf4}`,
    get: (url, headers) => call('GET', url, undefined, headers),
    post: (url, body, headers) => call('POST', url, body, headers),
  };
}

/** Polls `probe` until it returns a truthy value or the time is up; returns the last value. */
export async function eventually<T>(probe: () => Promise<T>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = await probe();
  while (!last && Date.now() < end) {
    await new Promise((r) => setTimeout(r, everyMs));
    last = await probe();
  }
  return last;
}

/** Waits until the edge reports the broker and both demo platforms up. */
export async function waitHealthy(client: Client, timeoutMs = 20_000) {
  const ok = await eventually(async () => (await client.get('/healthz')).status === 200, timeoutMs, 100);
  if (!ok) throw new Error(`stack not healthy: ${JSON.stringify((await client.get('/healthz')).body)}`);
}

/** Registers the hooks of a test file that shares one healthy stack; read `client` inside tests. */
export function stackForFile(options: StackOptions = {}): { client: Client } {
  const holder = {} as { client: Client };
  beforeAll(async () => {
    holder.client = await startClient(options);
    await waitHealthy(holder.client);
  }, 90_000);
  afterAll(async () => {
    await holder.client?.stack.close();
  });
  return holder;
}

/** The password of the stack's demo manager, which the launcher writes into the stack's data folder. */
export function managerPassword(stack: Stack): string {
  return readFileSync(join(stack.dataDir, 'manager-password'), 'utf8').trim();
}

/**
 * A manager session of the test's own on one of the stack's demo trading servers, logged in as the demo manager, to
 * read and change the server's state directly (no pump: it sees answers, not events).
 */
export async function connectManager(stack: Stack, server: string = DEMO_PF4_SERVER): Promise<ManagerClient> {
  const manager = await ManagerClient.connect(stack.sim.port, server);
  await manager.ok('login', { login: DEMO_MANAGER_LOGIN, password: managerPassword(stack), pump: false });
  return manager;
}

/** `stackForFile`, and a manager session on `server` (`connectManager`) for the whole file, closed after it. */
export function stackAndManagerForFile(
  server: string = DEMO_PF4_SERVER,
  options: StackOptions = {},
): { client: Client; manager: ManagerClient } {
  const holder = stackForFile(options) as { client: Client; manager: ManagerClient };
  beforeAll(async () => {
    holder.manager = await connectManager(holder.client.stack, server);
  });
  afterAll(() => holder.manager?.close());
  return holder;
}

export { brokerMetric } from '../support/brokerMetric.js';
