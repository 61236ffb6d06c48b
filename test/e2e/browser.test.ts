/**
 * The gateway from a real browser: headless Chromium (the registry's @sparticuz/chromium, driven by puppeteer-core,
 * with the same-origin policy on; test/support/browser.ts) against the whole stack.
 *
 * - The API reference at /docs lists every operation of /openapi.json, loads nothing from anywhere but the gateway,
 *   and its own "Authorize" (client credentials against /connect/token) and "Try it out" call an operation.
 * - A web terminal page served from another origin (a static server on another 127.0.0.1 port, listed in
 *   CORS_ORIGINS) gets a token, reads and writes, and reads the gateway's own response headers; the same page from an
 *   origin not listed is stopped by the browser.
 *
 * Screenshots of the page are kept in test-artifacts/ (git-ignored) to look at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Browser, ElementHandle, Page } from 'puppeteer-core';
import { startClient, waitHealthy, type Client } from './support.js';
import { launchBrowser } from '../support/browser.js';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');

/**
 * The web terminal: a static page that talks to the gateway the way a browser client would, with the headers that
 * need a preflight (Authorization, a JSON body, Idempotency-Key, X-Request-Timeout, traceparent), reading back the
 * gateway's own headers. `runTerminal` is called from the test; the page shows what it got.
 */
const TERMINAL_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Web terminal</title>
<style>body { font: 14px system-ui, sans-serif; margin: 24px } pre { background: #f4f4f4; padding: 12px }</style></head>
<body><h1>Web terminal on <span id="origin"></span></h1><pre id="out">not run yet</pre>
<script>
document.getElementById('origin').textContent = location.origin;
async function runTerminal(gateway, clientId, clientSecret, key) {
  const show = (value) => { document.getElementById('out').textContent = JSON.stringify(value, null, 2); return value; };
  const tokenAnswer = await fetch(gateway + '/connect/token', {
    method: 'POST',
    headers: { authorization: 'Basic ' + btoa(clientId + ':' + clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&scope=webapi',
  });
  const token = (await tokenAnswer.json()).access_token;
  const auth = { authorization: 'Bearer ' + token };
  const platforms = await (await fetch(gateway + '/api/TradePlatforms', { headers: auth })).json();
  const pf4 = platforms.find((p) => p.type === 'PF4');
  const read = await fetch(gateway + '/api/v2/PF4/' + pf4.id + '/UsersRequest?limit=2', {
    headers: { ...auth, 'x-request-timeout': '7', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  });
  const write = () => fetch(gateway + '/api/v2/PF4/' + pf4.id + '/UserRecordNew', {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ login: 0, group: 'demo\\\\pro', name: 'Browser Terminal' }),
  });
  const first = await write();
  const again = await write();
  const denied = await fetch(gateway + '/api/v2/PF4/' + pf4.id + '/ServerTime');
  return show({
    token: { status: tokenAnswer.status, granted: typeof token === 'string' },
    read: {
      status: read.status, body: await read.json(),
      timeoutApplied: read.headers.get('x-request-timeout-applied'), traceparent: read.headers.get('traceparent'),
    },
    write: { status: first.status, body: await first.json(), replayed: first.headers.get('idempotency-replayed') },
    again: { status: again.status, body: await again.json(), replayed: again.headers.get('idempotency-replayed') },
    denied: { status: denied.status, challenge: denied.headers.get('www-authenticate') },
  });
}
</script></body></html>`;

interface StaticPage {
  origin: string;
  server: Server;
}

/** Serves the terminal page on its own 127.0.0.1 port: an origin of its own. */
async function servePage(): Promise<StaticPage> {
  const server = createServer((req, res) => {
    if (req.url === '/terminal.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(TERMINAL_PAGE);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let client: Client;
let allowed: StaticPage;
let stranger: StaticPage;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  [allowed, stranger] = await Promise.all([servePage(), servePage()]);
  [client, browser] = await Promise.all([startClient({ edgeVars: { CORS_ORIGINS: allowed.origin } }), launchBrowser()]);
  await waitHealthy(client);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await client?.stack.close();
  for (const page of [allowed, stranger]) {
    page?.server.closeAllConnections();
    await new Promise((done) => page?.server.close(done));
  }
});

/** A page that records every request it makes and every error it reports (CSP violations included). */
async function openPage(): Promise<{
  page: Page;
  requests: Array<{ method: string; url: string; authorization?: string }>;
  errors: string[];
}> {
  const page = await browser.newPage();
  const requests: Array<{ method: string; url: string; authorization?: string }> = [];
  const errors: string[] = [];
  page.on('request', (r) =>
    requests.push({ method: r.method(), url: r.url(), authorization: r.headers().authorization }),
  );
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, requests, errors };
}

/** Scrolls the page (Swagger UI renders tag sections as they come into view) and collects `METHOD path` of each operation. */
async function listedOperations(page: Page): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let y = 0; ; y += 600) {
    const { height, operations } = await page.evaluate(async (top) => {
      window.scrollTo(0, top);
      await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      // Swagger UI says nothing when the sections come into view have rendered: two frames and a short pause.
      await new Promise((done) => setTimeout(done, 30));
      const operations = [...document.querySelectorAll('.opblock-summary')].map(
        (s) =>
          `${s.querySelector('.opblock-summary-method')?.textContent} ${s.querySelector<HTMLElement>('.opblock-summary-path')?.dataset.path}`,
      );
      return { height: document.documentElement.scrollHeight, operations };
    }, y);
    for (const operation of operations) seen.add(operation);
    if (y > height) return seen;
  }
}

/**
 * Puts `text` into `field` as one input, the way a paste does: Swagger UI renders again on each change of a field,
 * which with 270 operations makes typing it a key at a time cost seconds.
 */
async function enter(page: Page, field: ElementHandle<Element>, text: string): Promise<void> {
  await field.focus();
  await page.keyboard.sendCharacter(text);
}

/** The operation block of `METHOD path`, scrolled to (rendered once its section is in view). */
async function operationBlock(page: Page, method: string, path: string): Promise<ElementHandle<Element>> {
  const selector = `.opblock-${method.toLowerCase()}:has(.opblock-summary-path[data-path="${path}"])`;
  for (let y = 0; y < 100_000; y += 600) {
    const found = await page.$(selector);
    if (found) {
      await found.scrollIntoView();
      return found;
    }
    // No signal that the sections come into view have rendered: a short pause, and the block is looked for again.
    await page.evaluate(async (top) => {
      window.scrollTo(0, top);
      await new Promise((done) => setTimeout(done, 30));
    }, y);
  }
  throw new Error(`${method} ${path} is not on the page`);
}

describe('the API reference at /docs in Chromium', () => {
  let docs: Awaited<ReturnType<typeof openPage>>;

  beforeAll(async () => {
    docs = await openPage();
    await docs.page.goto(`${client.stack.edgeUrl}/docs`, { waitUntil: 'load' });
    await docs.page.waitForSelector('.opblock', { timeout: 90_000 });
  }, 120_000);

  it('lists every operation of /openapi.json and loads nothing from anywhere but the gateway', async () => {
    const document = (await client.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const expected = new Set(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    );
    expect(expected.size).toBeGreaterThan(250);
    const listed = await listedOperations(docs.page);
    expect([...expected].filter((o) => !listed.has(o))).toEqual([]);
    expect([...listed].filter((o) => !expected.has(o))).toEqual([]);

    await docs.page.evaluate(() => window.scrollTo(0, 0));
    await docs.page.screenshot({ path: join(ARTIFACTS, 'docs-page.png') });
    const elsewhere = docs.requests.filter(
      (r) => !r.url.startsWith(`${client.stack.edgeUrl}/`) && !r.url.startsWith('data:'),
    );
    expect(elsewhere).toEqual([]);
    expect(docs.errors).toEqual([]);
  }, 120_000);

  it('gets a token with its own Authorize and calls an operation with Try it out', async () => {
    const { page, requests } = docs;
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click('.btn.authorize');
    await enter(page, (await page.waitForSelector('#client_id_clientCredentials'))!, client.stack.clientId);
    await enter(page, (await page.waitForSelector('#client_secret_clientCredentials'))!, client.stack.clientSecret);
    await page.click('.auth-btn-wrapper .btn.modal-btn.auth.authorize');
    // Swagger UI shows Logout once the token endpoint has answered with a token.
    await page.waitForFunction(
      () => [...document.querySelectorAll('.auth-btn-wrapper button')].some((b) => b.textContent === 'Logout'),
      { timeout: 30_000 },
    );
    await page.click('.auth-btn-wrapper .btn-done');
    const tokenRequest = requests.find((r) => r.method === 'POST' && r.url === `${client.stack.edgeUrl}/connect/token`);
    expect(tokenRequest?.authorization).toMatch(/^Basic /);

    const path = '/api/v2/PF4/{tradePlatform}/ServerTime';
    const block = await operationBlock(page, 'GET', path);
    await block.$eval('.opblock-summary-control', (b) => (b as HTMLElement).click());
    await (await block.waitForSelector('.try-out__btn'))!.click();
    const platform = (await block.waitForSelector('tr[data-param-name="tradePlatform"] input'))!;
    await enter(page, platform, client.stack.platforms.pf4);
    // The field keeps its value once Swagger UI has taken it into its state (its inputs are debounced).
    await block.waitForSelector('tr[data-param-name="tradePlatform"] input:not(.invalid)');
    await page.waitForFunction(
      (p: string, value: string) => {
        const operation = (
          window as unknown as { ui?: { getState(): { getIn(keys: string[]): { toJS(): unknown } | undefined } } }
        ).ui
          ?.getState()
          .getIn(['spec', 'meta', 'paths', p, 'get']);
        return operation !== undefined && JSON.stringify(operation.toJS()).includes(value);
      },
      { timeout: 10_000 },
      path,
      client.stack.platforms.pf4,
    );
    await block.$eval('.btn.execute', (b) => (b as HTMLElement).click());
    await block.waitForSelector('.live-responses-table .response-col_status', { timeout: 60_000 });

    const status = await block.$eval('.live-responses-table .response .response-col_status', (e) =>
      e.textContent?.trim(),
    );
    const body = await block.$eval('.live-responses-table .response .highlight-code pre', (e) => e.textContent ?? '');
    expect(status).toBe('200');
    const envelope = JSON.parse(body) as { data: string; error: unknown; meta: { activityId: string } };
    expect(envelope.error).toBeNull();
    expect(Math.abs(Date.parse(envelope.data) - Date.now())).toBeLessThan(24 * 3600_000);
    const call = requests.find(
      (r) =>
        r.method === 'GET' &&
        r.url.startsWith(`${client.stack.edgeUrl}/api/v2/PF4/${client.stack.platforms.pf4}/ServerTime`),
    );
    expect(call?.authorization).toMatch(/^Bearer ey/);

    await block.scrollIntoView();
    await block.screenshot({ path: join(ARTIFACTS, 'docs-try-it.png') });
    expect(docs.errors).toEqual([]);
  }, 120_000);
});

describe('a web terminal page on another origin, in Chromium', () => {
  it("gets a token, reads, writes under an Idempotency-Key and reads the gateway's own headers, when its origin is listed", async () => {
    const { page, errors } = await openPage();
    await page.goto(`${allowed.origin}/terminal.html`);
    const key = `browser-${Date.now()}`;
    const result = await page.evaluate(
      (gateway, id, secret, k) =>
        (window as unknown as { runTerminal: (...a: string[]) => Promise<any> }).runTerminal(gateway, id, secret, k),
      client.stack.edgeUrl,
      client.stack.clientId,
      client.stack.clientSecret,
      key,
    );
    expect(result.token).toEqual({ status: 200, granted: true });
    expect(result.read.status).toBe(200);
    expect(result.read.body.error).toBeNull();
    expect(result.read.body.data).toHaveLength(2);
    expect(result.read.timeoutApplied).toBe('7');
    // The caller's trace id is kept and readable.
    expect(result.read.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-/);
    expect(result.write.body.error).toBeNull();
    expect(result.write.body.data).toMatchObject({ group: 'demo\\pro', name: 'Browser Terminal' });
    expect(result.write.replayed).toBeNull();
    expect(result.again.body).toEqual(result.write.body);
    expect(result.again.replayed).toBe('true');
    expect(result.denied).toEqual({ status: 401, challenge: expect.stringMatching(/^Bearer/) });
    // Chromium reports the deliberate 401 in the console; nothing else (a CORS refusal would show here).
    expect(errors.filter((e) => !e.includes('status of 401'))).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'cross-origin-terminal.png') });

    // The browser asked first: the edge answered the preflights, which carry no token.
    const preflights = client.logLines.filter(
      (l) => l.startsWith('edge ') && l.includes('"msg":"request"') && l.includes('"method":"OPTIONS"'),
    );
    expect(preflights.length).toBeGreaterThanOrEqual(3);
    await page.close();
  }, 60_000);

  it('is stopped by the browser when its origin is not listed', async () => {
    const { page } = await openPage();
    await page.goto(`${stranger.origin}/terminal.html`);
    const outcome = await page.evaluate(
      (gateway, id, secret) =>
        (window as unknown as { runTerminal: (...a: string[]) => Promise<unknown> })
          .runTerminal(gateway, id, secret, 'never')
          .then(
            () => 'answered',
            (error: Error) => `${error.name}: ${error.message}`,
          ),
      client.stack.edgeUrl,
      client.stack.clientId,
      client.stack.clientSecret,
    );
    expect(outcome).toBe('TypeError: Failed to fetch');
    await page.close();
  }, 60_000);
});
