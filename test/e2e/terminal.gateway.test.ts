/**
 * Which gateway the web terminal served by `npm run terminal` sends a typed secret to, in headless Chromium. The
 * script runs as a user starts it (GATEWAY_URL names its gateway); two 127.0.0.1 listeners stand for gateways: the
 * configured one, and another one a link names with `?gateway=`, which counts every request that reaches it.
 *
 * - the page's Content-Security-Policy lets it connect to the configured gateway alone;
 * - a link's `?gateway=` is shown in the sign-in form and not used: the secret goes to the configured gateway;
 * - the page's own logic does the same without the policy (a server of the files that sends none), and sends to
 *   another gateway only when the user enters it in the Gateway field; with the policy, even that is refused;
 * - a GATEWAY_URL that is not an http(s) origin stops the script with a message naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { eventually } from './support.js';
import { launchBrowser } from '../support/browser.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SECRET = 'typed-secret-5e1f';

interface Listener {
  origin: string;
  server: Server;
  requests: Array<{ method: string; path: string; body: string }>;
}

/** A stand-in gateway: records each request, answers the token endpoint `invalid_client` (readable cross-origin). */
async function listen(): Promise<Listener> {
  const requests: Listener['requests'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      requests.push({ method: req.method!, path: req.url!, body });
      res
        .writeHead(req.method === 'OPTIONS' ? 204 : 401, {
          'access-control-allow-origin': '*',
          'access-control-allow-headers': '*',
          'content-type': 'application/json',
        })
        .end(req.method === 'OPTIONS' ? '' : '{"error":"invalid_client"}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

/** `npm run terminal` with `env`; resolves with the process and everything it printed once it exits or prints its URL. */
function runTerminal(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; output: () => string; url: string | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/terminal.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((done) => {
    const seen = () => {
      const url = /Web terminal: (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)?.[1];
      if (url) done({ child, output: () => output, url });
    };
    child.stdout.on('data', (d) => {
      output += d;
      seen();
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('exit', () => done({ child, output: () => output, url: null }));
  });
}

let gateway: Listener;
let other: Listener;
let terminal: Awaited<ReturnType<typeof runTerminal>>;
let browser: Browser;

beforeAll(async () => {
  [gateway, other] = await Promise.all([listen(), listen()]);
  [terminal, browser] = await Promise.all([
    runTerminal({ GATEWAY_URL: gateway.origin, TERMINAL_PORT: '0' }),
    launchBrowser(),
  ]);
  expect(terminal.url, terminal.output()).not.toBeNull();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  if (terminal?.child.exitCode === null) {
    const exited = new Promise((done) => terminal.child.once('exit', done));
    terminal.child.kill('SIGTERM');
    await exited;
  }
  for (const listener of [gateway, other]) {
    listener?.server.closeAllConnections();
    await new Promise((done) => listener?.server.close(done));
  }
});

/** A fresh page (dialogs dismissed), the policy bypassed when `bypassPolicy`, at `path` of the terminal. */
async function open(path: string, { bypassPolicy = false } = {}): Promise<Page> {
  const page = await browser.newPage();
  page.on('dialog', (dialog) => void dialog.dismiss());
  await page.setBypassCSP(bypassPolicy);
  await page.goto(`${terminal.url}${path}`);
  return page;
}

/** Clears the sign-in form's `name` field and types `text` into it, as a user does. */
async function enter(page: Page, name: string, text: string) {
  await page.$eval(`#sign-in [name=${name}]`, (e) => {
    (e as HTMLInputElement).value = '';
  });
  await page.type(`#sign-in [name=${name}]`, text);
}

/** Types a client id and the secret into the sign-in form and submits it; resolves once a new log line has `expectLog`. */
async function signIn(page: Page, expectLog: string) {
  const logged = await page.$$eval('#log li', (items) => items.length);
  await enter(page, 'clientId', 'partner');
  await enter(page, 'clientSecret', SECRET);
  await page.click('#sign-in button');
  // The log's newest lines come first.
  await page.waitForFunction(
    (before: number, text: string) => {
      const items = [...document.querySelectorAll('#log li')];
      return items.slice(0, items.length - before).some((li) => li.textContent.includes(text));
    },
    { timeout: 20_000 },
    logged,
    expectLog,
  );
}

const tokenRequests = (listener: Listener) =>
  listener.requests.filter((r) => r.method === 'POST' && r.path === '/connect/token');
const field = (page: Page) => page.$eval('#sign-in [name=gateway]', (e) => (e as HTMLInputElement).value);
const note = (page: Page) => page.$eval('#gateway-note', (e) => ((e as HTMLElement).hidden ? null : e.textContent));

describe('npm run terminal', () => {
  it('serves its page with a policy that lets it connect to its GATEWAY_URL alone', async () => {
    const res = await fetch(`${terminal.url}/`);
    const html = await res.text();
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
        `connect-src ${gateway.origin} ${gateway.origin.replace('http:', 'ws:')}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(html).toContain(`<meta name="gateway" content="${gateway.origin}">`);
    expect(html).not.toContain('<script>');
  });

  it('sends the typed secret to its gateway, not to the one a link names', async () => {
    const page = await open(`/?gateway=${encodeURIComponent(other.origin)}`);
    await signIn(page, 'sign-in refused');
    expect(other.requests).toEqual([]);
    expect(tokenRequests(gateway).map((r) => new URLSearchParams(r.body).get('client_secret'))).toEqual([SECRET]);
    expect(await field(page)).toBe(gateway.origin);
    expect(await note(page)).toBe(
      `This link names another gateway, ${other.origin}. The terminal signs in at ${gateway.origin}; ` +
        'it sends your secret elsewhere only if you enter that gateway above yourself.',
    );
    await page.close();
  }, 60_000);

  it('shows no note for a link naming its own gateway', async () => {
    const page = await open(`/?gateway=${encodeURIComponent(`${gateway.origin}/`)}`);
    expect(await field(page)).toBe(gateway.origin);
    expect(await note(page)).toBeNull();
    await page.close();
  }, 60_000);

  it("keeps to its gateway by the page's own logic, and sends elsewhere only a gateway the user entered", async () => {
    gateway.requests.length = 0;
    const page = await open(`/?gateway=${encodeURIComponent(other.origin)}`, { bypassPolicy: true });
    await signIn(page, 'sign-in refused: invalid_client');
    expect(tokenRequests(gateway)).toHaveLength(1);
    expect(other.requests).toEqual([]);

    // The user's own choice: entered in the Gateway field, it is used.
    await enter(page, 'gateway', other.origin);
    await signIn(page, 'sign-in refused: invalid_client');
    expect(tokenRequests(other).map((r) => new URLSearchParams(r.body).get('client_secret'))).toEqual([SECRET]);
    expect(tokenRequests(gateway)).toHaveLength(1);
    other.requests.length = 0;
    await page.close();
  }, 60_000);

  it('with its policy, refuses even a gateway the user entered, and says so', async () => {
    const page = await open('/');
    await enter(page, 'gateway', other.origin);
    await signIn(page, `may connect only to ${gateway.origin}`);
    expect(
      await page.$$eval('#log li', (items) => items.map((li) => li.textContent.replace(/^.*? {2}/, ''))),
    ).toContain(`Not sent to ${other.origin}/connect/token: this page may connect only to ${gateway.origin}.`);
    expect(other.requests).toEqual([]);
    await page.close();
  }, 60_000);

  it('refuses a GATEWAY_URL that is not an http(s) origin, naming it', async () => {
    const run = await runTerminal({ GATEWAY_URL: 'http://127.0.0.1:8787/api', TERMINAL_PORT: '0' });
    expect(run.url).toBeNull();
    expect(await eventually(() => Promise.resolve(run.child.exitCode), 10_000)).toBe(1);
    expect(run.output()).toContain(
      `terminal refused: GATEWAY_URL must be the gateway's origin alone, with no credentials, path, query or fragment (got "http://127.0.0.1:8787/api")`,
    );
  }, 60_000);
});
