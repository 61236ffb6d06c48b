/**
 * A real headless Chromium for the tests, from the registry alone: `@sparticuz/chromium` ships the browser binary
 * (unpacked to the system's temporary folder on first use), `puppeteer-core` drives it. Nothing is downloaded.
 *
 * The package's default flags are made for serverless hosts and switch off the same-origin policy
 * (`--disable-web-security`); those are dropped, so the browser enforces CORS as a user's browser does, and a test
 * of CORS can fail.
 */
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Flags that would make the browser lenient where the tests check the gateway: origins, mixed content. */
const LENIENT = ['--disable-web-security', '--allow-running-insecure-content', '--disable-site-isolation-trials'];

export function browserArgs(): string[] {
  return chromium.args.filter((arg) => !LENIENT.includes(arg));
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: await chromium.executablePath(),
    args: browserArgs(),
    headless: true,
    defaultViewport: { width: 1280, height: 900 },
    // A loaded 2-core machine renders a 270-operation reference slowly.
    protocolTimeout: 120_000,
  });
}
