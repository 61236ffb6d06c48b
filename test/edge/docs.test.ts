/**
 * The API reference page in workerd, without a browser (test/e2e/browser.test.ts opens it in Chromium): /docs is
 * public, loads nothing but this origin's own files (Swagger UI's script and style, served byte for byte from the
 * installed swagger-ui-dist, and /openapi.json), and its Content-Security-Policy says so to the browser; wrangler's
 * Text rule covers the same files the local build imports as text, so a deployed worker serves the same page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { startTestEdge, type TestEdge } from '../support/edge.js';
import { TEXT_MODULE_IMPORTS, TEXT_MODULES } from '../../launcher/workerAssets.js';

const root = resolve(import.meta.dirname, '../..');
const swaggerUiDist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

let edge: TestEdge;
let html: string;
let res: Response;

beforeAll(async () => {
  edge = await startTestEdge();
  res = await fetch(new URL('/docs', edge.url));
  html = await res.text();
}, 60_000);
afterAll(async () => {
  await edge?.close();
});

/** Every URL the page names in src or href. */
const references = () => [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]);

describe('GET /docs', () => {
  it('is a public HTML page, no token needed', () => {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html).toContain('<title>Trade Platform Gateway: API reference</title>');
    expect(html).toContain("url: '/openapi.json'");
  });

  it('names only files of its own origin: no CDN, no online validator', () => {
    const urls = references();
    expect(urls.length).toBeGreaterThanOrEqual(2);
    for (const url of urls) expect(url).toMatch(/^\/docs\/assets\//);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toContain("validatorUrl: 'none'");
  });

  it("serves Swagger UI's script and style exactly as the installed swagger-ui-dist ships them", async () => {
    const version = JSON.parse(readFileSync(join(swaggerUiDist, 'package.json'), 'utf8')).version as string;
    const expected: Record<string, string> = {
      'swagger-ui-bundle.js': 'text/javascript',
      'swagger-ui.css': 'text/css',
    };
    const urls = references();
    for (const [file, type] of Object.entries(expected)) {
      const url = urls.find((u) => u.endsWith(`/${file}`));
      expect(url, file).toBe(`/docs/assets/swagger-ui-dist@${version}/${file}`);
      const asset = await fetch(new URL(url!, edge.url));
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toContain(type);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      const body = Buffer.from(await asset.arrayBuffer());
      expect(createHash('sha256').update(body).digest('hex')).toBe(
        createHash('sha256')
          .update(readFileSync(join(swaggerUiDist, file)))
          .digest('hex'),
      );
    }
  });

  it("tells the browser to load and connect to this origin alone, and to run only the page's own start-up script", () => {
    const csp = Object.fromEntries(
      (res.headers.get('content-security-policy') ?? '').split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values];
      }),
    );
    expect(csp['default-src']).toEqual(["'none'"]);
    expect(csp['connect-src']).toEqual(["'self'"]);
    expect(csp['frame-ancestors']).toEqual(["'none'"]);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    expect(scripts).toHaveLength(1);
    const hash = `'sha256-${createHash('sha256').update(scripts[0]).digest('base64')}'`;
    expect(csp['script-src']).toEqual(["'self'", hash]);
  });

  it('answers /docs/ with a redirect to /docs', async () => {
    const redirect = await fetch(new URL('/docs/', edge.url), { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/docs');
  });
});

describe("the deployed worker's build", () => {
  it('imports the same files as text under wrangler (wrangler.toml Text rule) as under npm start (launcher/workerAssets.ts)', () => {
    const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8');
    const rule = /\[\[rules\]\]\s*\ntype\s*=\s*"Text"\s*\nglobs\s*=\s*\[([^\]]*)\]/.exec(toml);
    expect(rule, 'a [[rules]] type = "Text" block in wrangler.toml').not.toBeNull();
    const globs = [...rule![1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    // wrangler matches a rule's globs against the import specifier, `*` standing for any characters.
    const matches = (glob: string, path: string) =>
      new RegExp(
        `^${glob
          .split('*')
          .map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, '\\$&'))
          .join('.*')}$`,
      ).test(path);
    for (const specifier of TEXT_MODULE_IMPORTS) {
      expect(
        globs.some((g) => matches(g, specifier)),
        specifier,
      ).toBe(true);
      expect(TEXT_MODULES.test(join(root, 'node_modules', specifier))).toBe(true);
    }
    // And the worker imports exactly these.
    const source = readFileSync(join(root, 'workers/docs/docs.ts'), 'utf8');
    const imported = [...source.matchAll(/^import \w+ from '(swagger-ui-dist\/[^']+)';$/gm)]
      .map((m) => m[1])
      .filter((s) => !s.endsWith('.json'));
    expect(imported.sort()).toEqual([...TEXT_MODULE_IMPORTS].sort());
  });
});
