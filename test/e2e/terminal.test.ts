/**
 * The reference web terminal (examples/web-terminal) in headless Chromium against the whole stack, served the way
 * `npm run terminal` serves it (its own origin, listed in CORS_ORIGINS, for the edge's address) and by the edge at
 * /terminal (TERMINAL=1):
 *
 * - the quote board fills from the SignalR hub (from the edge: Server-Sent Events) and its prices change; the accounts
 *   table pages with limit/cursor;
 * - a trade opened from the account view appears in its open trades from the trade stream (no read of the trades
 *   after the click) with the ticket the trading server holds, and leaves it when closed (equity back to the balance);
 * - a deposit whose first answer is `X-Request-Outcome: unknown` (the trading server answers past the write's 1 s
 *   budget) is sent again with the same Idempotency-Key until its replayed answer, and the balance moves once;
 * - a broker killed and started again shows as the platform disconnected, then live and resynced;
 * - neither server hands out the demo secret, and the edge serves the terminal only with TERMINAL=1; both send one
 *   Content-Security-Policy, but for the gateway each page connects to.
 *
 * Screenshots: test-artifacts/web-terminal.png (board and account), web-terminal-replayed.png,
 * web-terminal-disconnected.png, web-terminal-edge.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import { startClient, waitHealthy, type Client } from './support.js';
import { launchBrowser } from '../support/browser.js';
import { serveTerminal, type TerminalServer } from '../../launcher/terminal.js';
import { readWorkerEnvironment } from '../../shared/environment.js';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');
const FILES = ['/', '/app.js', '/gateway.js', '/streams.js', '/style.css', '/vendor/signalr.min.js'];

let c: Client;
let terminal: TerminalServer;
let browser: Browser;
let page: Page;
const requests: HTTPRequest[] = [];
const errors: string[] = [];

/** A port free now: the edge's, so that the terminal knows its gateway before the edge knows the terminal's origin. */
const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const edgePort = await freePort();
  terminal = await serveTerminal({ gateway: `http://127.0.0.1:${edgePort}` });
  [c, browser] = await Promise.all([
    // Quotes of one symbol about four times a second (a tenth of that by default): the board moves soon.
    startClient({ edgePort, ticksPerSecond: 50, edgeVars: { CORS_ORIGINS: terminal.url, TERMINAL: '1' } }),
    launchBrowser(),
  ]);
  await waitHealthy(c);
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('request', (r) => requests.push(r));
  page.on('pageerror', (e) => errors.push(String(e)));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await c?.stack.close();
  await terminal?.close();
});

const text = (selector: string) => page.$eval(selector, (e) => e.textContent ?? '');
const streamState = () => page.$eval('#stream-state', (e) => (e as HTMLElement).dataset.state);
/** The server's balance of `login`, read live (not from the cache). */
const serverBalance = async (login: number) =>
  (await c.get(`${c.v2pf4}/UserRecordRequest/${login}`)).body.data.balance as number;

/** Signs in with the demo client; the page's stream goes live over `transport` (the hub, or SSE). */
async function signIn(p: Page, url: string, transport: 'hub' | 'sse') {
  await p.goto(url);
  await p.select('#sign-in [name=transport]', transport);
  await p.type('#sign-in [name=clientId]', c.stack.clientId);
  await p.type('#sign-in [name=clientSecret]', c.stack.clientSecret);
  await p.click('#sign-in button');
  await p.waitForFunction(() => document.querySelector<HTMLElement>('#stream-state')?.dataset.state === 'live', {
    timeout: 30_000,
  });
  expect(await p.$eval('#stream-state', (e) => e.textContent)).toBe(
    `stream: live · ${transport === 'hub' ? 'SignalR' : 'SSE'}`,
  );
  expect(await p.$eval('#sign-in', (e) => (e as HTMLElement).hidden)).toBe(true);
  // A healthy connect goes from connecting to live and shows no other state on the way, oldest line first.
  const via = transport === 'hub' ? 'SignalR' : 'SSE';
  expect(await streamLog(p)).toStrictEqual([`Stream connecting (${via}).`, `Stream live (${via}).`]);
}

/** The stream lines of the page's activity log, oldest first, without their times. */
const streamLog = (p: Page) =>
  p.$$eval('#log li[data-kind="stream"]', (items) =>
    items.map((i) => (i.textContent ?? '').replace(/^.*?\s{2}/, '')).reverse(),
  );

describe('the web terminal on its own origin', () => {
  let login: number;

  it('shows live quotes that change, and pages the accounts', async () => {
    await signIn(page, `${terminal.url}/`, 'hub');
    expect(await page.$eval('#sign-in [name=gateway]', (e) => (e as HTMLInputElement).value)).toBe(c.stack.edgeUrl);
    await page.waitForFunction(
      () =>
        document.querySelectorAll('#quotes tr').length >= 3 &&
        document.querySelector('#quotes tr[data-symbol="EURUSD"]'),
      { timeout: 20_000 },
    );
    const board = () =>
      page.$$eval('#quotes tr', (rows) =>
        rows.map((r) => ({
          symbol: (r as HTMLElement).dataset.symbol!,
          bid: Number(r.querySelector('.bid')!.textContent),
          ask: Number(r.querySelector('.ask')!.textContent),
        })),
      );
    const first = await board();
    expect(first.every((q) => q.bid > 0 && q.ask > q.bid)).toBe(true);
    expect(first.map((q) => q.symbol)).toContain('EURUSD');
    // Prices move: some symbol's bid differs from the first look, and the row says which way.
    await page.waitForFunction(
      (before: Record<string, number>) =>
        [...document.querySelectorAll<HTMLElement>('#quotes tr')].some(
          (r) =>
            before[r.dataset.symbol!] !== undefined &&
            Number(r.querySelector('.bid')!.textContent) !== before[r.dataset.symbol!],
        ),
      { timeout: 20_000 },
      Object.fromEntries(first.map((q) => [q.symbol, q.bid])),
    );
    expect(
      await page.$$eval('#quotes tr[data-direction="up"], #quotes tr[data-direction="down"]', (r) => r.length),
    ).toBeGreaterThan(0);

    await page.waitForFunction(() => document.querySelectorAll('#account-rows tr').length === 10, { timeout: 20_000 });
    const logins = () =>
      page.$$eval('#account-rows tr', (rows) => rows.map((r) => Number((r as HTMLElement).dataset.login)));
    const page1 = await logins();
    const expected = (await c.get(`${c.v2pf4}/UsersRequest?limit=20`)).body.data.map((u: { login: number }) => u.login);
    expect(page1).toEqual(expected.slice(0, 10));
    await page.click('#next-page');
    await page.waitForFunction(
      (l: number) => Number(document.querySelector<HTMLElement>('#account-rows tr')?.dataset.login) !== l,
      {},
      page1[0],
    );
    expect(await logins()).toEqual(expected.slice(10, 20));
    // The page's policy let through every connection it made, the hub's WebSocket among them.
    expect(
      await page.$$eval('#log li', (items) =>
        items.map((li) => li.textContent).filter((t) => t.includes('Not sent to')),
      ),
    ).toEqual([]);
  }, 60_000);

  it('shows a trade opened from the account view from the stream, and drops it when closed', async () => {
    login = (await c.post(`${c.v2pf4}/UserRecordNew`, { login: 0, group: 'demo\\forex', name: 'Terminal Dealer' })).body
      .data.login;
    await c.post(`${c.v2pf4}/TradeTransaction`, {
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: 100_000,
    });
    await page.type('#search [name=login]', String(login));
    await page.click('#search button');
    await page.waitForFunction(() => document.querySelector('#balance')?.textContent === '100000.00', {
      timeout: 20_000,
    });
    expect(await text('#account-login')).toBe(String(login));
    // The balance is shown from the account read, the equity once the margin read that follows it answers.
    await page.waitForFunction(() => document.querySelector('#equity')?.textContent === '100000.00', {
      timeout: 20_000,
    });

    await page.select('#order [name=symbol]', 'EURUSD');
    const before = requests.length;
    await page.click('#order button');
    await page.waitForSelector('#trades tr[data-ticket]', { timeout: 20_000 });
    const ticket = Number(await page.$eval('#trades tr[data-ticket]', (r) => (r as HTMLElement).dataset.ticket));
    const open = (await c.get(`${c.v2pf4}/TradesGetByLogin/${login}/${encodeURIComponent('demo\\forex')}`)).body.data;
    expect(open.map((t: { order: number }) => t.order)).toEqual([ticket]);
    expect(
      await page.$eval('#trades tr[data-ticket]', (r) => [...r.children].slice(1, 4).map((td) => td.textContent)),
    ).toEqual(['EURUSD', 'Buy', '0.10']);
    // The row came from the trade stream: the only request since the click is the write itself (and its preflight).
    expect(
      requests
        .slice(before)
        .map((r) => `${r.method()} ${new URL(r.url()).pathname.split('/').pop()}`)
        .filter((r) => !r.startsWith('OPTIONS')),
    ).toEqual(['POST TradeTransaction']);
    await page.screenshot({ path: join(ARTIFACTS, 'web-terminal.png') });

    await page.click(`#trades tr[data-ticket="${ticket}"] button`);
    await page.waitForFunction(() => document.querySelectorAll('#trades tr').length === 0, { timeout: 20_000 });
    // No trade left: no margin row either, and the equity shown is the balance the close left.
    await page.waitForFunction(
      () => document.querySelector('#equity')?.textContent === document.querySelector('#balance')?.textContent,
      { timeout: 20_000 },
    );
    expect(Number(await text('#balance'))).toBeCloseTo(await serverBalance(login), 2);
  }, 60_000);

  it('sends a deposit whose outcome was unknown again with the same key, and the balance moves once', async () => {
    const balance = await serverBalance(login);
    await page.$eval('#budget', (e) => {
      (e as HTMLInputElement).value = '1';
    });
    await page.$eval('#balance-op [name=amount]', (e) => {
      (e as HTMLInputElement).value = '250';
    });
    await c.stack.control('demo-pf4', 'delay', { ms: 2500, cmd: 'TradeTransaction' });
    const before = requests.length;
    try {
      await page.click('#balance-op button');
      await page.waitForSelector('#log li[data-kind="replayed"]', { timeout: 30_000 });
    } finally {
      await c.stack.control('demo-pf4', 'delay', { ms: 0 });
    }
    const sent = requests.slice(before).filter((r) => r.method() === 'POST' && r.url().endsWith('/TradeTransaction'));
    expect(sent.length).toBeGreaterThanOrEqual(2);
    const keys = new Set(sent.map((r) => r.headers()['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f]{32}$/);
    expect(sent.map((r) => JSON.parse(r.postData()!))).toEqual(
      sent.map(() => ({ tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: login, price: 250 })),
    );
    expect(await page.$$eval('#log li[data-kind="unknown"]', (l) => l.length)).toBeGreaterThanOrEqual(1);
    expect(await text('#log li[data-kind="replayed"]')).toContain('not a second deposit 250');
    expect(await serverBalance(login)).toBe(balance + 250);
    await page.waitForFunction(
      (b: string) => document.querySelector('#balance')?.textContent === b,
      { timeout: 20_000 },
      (balance + 250).toFixed(2),
    );
    await page.screenshot({ path: join(ARTIFACTS, 'web-terminal-replayed.png') });
  }, 60_000);

  it('shows the platform disconnected while the broker is down, then live again and resynced', async () => {
    expect(await streamState()).toBe('live');
    expect(await text('#resynced')).toBe('');
    await c.stack.stopBroker(0, 'SIGKILL');
    await page.waitForFunction(
      () =>
        ['platform-down', 'reconnecting'].includes(
          document.querySelector<HTMLElement>('#stream-state')!.dataset.state!,
        ),
      { timeout: 20_000 },
    );
    await page.screenshot({ path: join(ARTIFACTS, 'web-terminal-disconnected.png') });
    await c.stack.restartBroker(0);
    await page.waitForFunction(() => document.querySelector<HTMLElement>('#stream-state')?.dataset.state === 'live', {
      timeout: 30_000,
    });
    await page.waitForFunction(() => document.querySelector('#resynced')?.textContent?.startsWith('resynced'), {
      timeout: 30_000,
    });
    // Live again: the board's prices move after the restart.
    const bid = Number(await page.$eval('#quotes tr[data-symbol="EURUSD"] .bid', (e) => e.textContent));
    await page.waitForFunction(
      (b: number) => Number(document.querySelector('#quotes tr[data-symbol="EURUSD"] .bid')?.textContent) !== b,
      { timeout: 20_000 },
      bid,
    );
    expect(errors).toEqual([]);
  }, 60_000);
});

describe('the web terminal from the edge', () => {
  it('is served at /terminal/ with TERMINAL=1 and goes live there on Server-Sent Events; neither server hands out the demo secret', async () => {
    for (const base of [terminal.url, `${c.stack.edgeUrl}/terminal`]) {
      for (const file of FILES) {
        const res = await fetch(`${base}${file}`);
        expect(res.status, `${base}${file}`).toBe(200);
        expect(await res.text()).not.toContain(c.stack.clientSecret);
      }
    }
    const res = await fetch(`${c.stack.edgeUrl}/terminal/`);
    const policy = res.headers.get('content-security-policy');
    expect(policy).toContain("; connect-src 'self'; ");
    // `npm run terminal`'s page has the edge's policy, but connects to the edge instead of its own origin.
    const own = (await fetch(`${terminal.url}/`)).headers.get('content-security-policy');
    expect(own).toBe(
      policy!.replace(
        "connect-src 'self'",
        `connect-src ${c.stack.edgeUrl} ${c.stack.edgeUrl.replace('http:', 'ws:')}`,
      ),
    );
    expect(readWorkerEnvironment({}).values.TERMINAL).toBe(false);

    const edgePage = await browser.newPage();
    const edgeErrors: string[] = [];
    edgePage.on('pageerror', (e) => edgeErrors.push(String(e)));
    edgePage.on('console', (m) => {
      if (m.type() === 'error') edgeErrors.push(m.text());
    });
    await signIn(edgePage, `${c.stack.edgeUrl}/terminal`, 'sse');
    expect(await edgePage.$eval('#sign-in [name=gateway]', (e) => (e as HTMLInputElement).value)).toBe(c.stack.edgeUrl);
    await edgePage.waitForFunction(() => document.querySelectorAll('#quotes tr').length >= 3, { timeout: 20_000 });
    await edgePage.screenshot({ path: join(ARTIFACTS, 'web-terminal-edge.png') });
    expect(edgeErrors).toEqual([]);
    await edgePage.close();
  }, 60_000);
});
