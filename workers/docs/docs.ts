// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient declarations of the text imports, nothing to import
/// <reference path="./assets.d.ts" />
/**
 * The interactive API reference at `GET /docs`: Swagger UI (`@hono/swagger-ui` renders the page) reading the
 * gateway's own `/openapi.json`, with its "Authorize" (the OAuth2 client-credentials flow against /connect/token)
 * and "Try it out" calling the API from the page. Nothing is loaded from elsewhere: the page's script and style are
 * the `swagger-ui-dist` files bundled into the worker and served under /docs/assets, and the page's
 * Content-Security-Policy allows this origin alone (no CDN, no online validator, no fonts from afar).
 */
import { Hono } from 'hono';
import { SwaggerUI } from '@hono/swagger-ui';
import swaggerUiBundle from 'swagger-ui-dist/swagger-ui-bundle.js';
import swaggerUiCss from 'swagger-ui-dist/swagger-ui.css';
import swaggerUiPackage from 'swagger-ui-dist/package.json';
import type { AppEnv } from '../env.js';

export const DOCS_PATH = '/docs';
/** `@hono/swagger-ui` asks for `<base>/swagger-ui-dist@<version>/<file>`: the version in the path makes them immutable. */
const ASSETS_BASE = `${DOCS_PATH}/assets`;
const ASSETS_DIR = `${ASSETS_BASE}/swagger-ui-dist@${swaggerUiPackage.version}`;

const TITLE = 'Trade Platform Gateway: API reference';

/** Swagger UI's mount point and start-up script, from the library, pointed at this worker's assets and document. */
function swaggerUiMarkup(): string {
  return SwaggerUI({
    url: '/openapi.json',
    baseUrl: ASSETS_BASE,
    version: swaggerUiPackage.version,
    // Off: the online validator would send the document to a third party and load its badge from there.
    validatorUrl: 'none',
    // 270 operations: listed by tag, each collapsed; the filter box narrows the tags.
    docExpansion: 'list',
    filter: true,
    deepLinking: true,
    displayRequestDuration: true,
    // The schema section repeats every contract record below the operations; each operation shows its own.
    defaultModelsExpandDepth: -1,
    persistAuthorization: true,
  });
}

let page: Promise<{ html: string; csp: string }> | undefined;

/** The page and its policy, made once per isolate: the start-up script is allowed by its hash, nothing inline else. */
function docsPage(): Promise<{ html: string; csp: string }> {
  page ??= (async () => {
    const markup = swaggerUiMarkup();
    const scripts = [...markup.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    const hashes = await Promise.all(
      scripts.map(async (s) => {
        const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s));
        return `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`;
      }),
    );
    const csp = [
      "default-src 'none'",
      `script-src 'self' ${hashes.join(' ')}`,
      // Swagger UI sets element styles from its script.
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
    const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="description" content="${TITLE}" />
    <title>${TITLE}</title>
  </head>
  <body>
${markup}
  </body>
</html>
`;
    return { html, csp };
  })();
  return page;
}

const asset = (body: string, contentType: string) => () =>
  new Response(body, {
    headers: {
      'content-type': contentType,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    },
  });

export function docsRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(DOCS_PATH, async (c) => {
    const { html, csp } = await docsPage();
    return c.html(html, 200, {
      'content-security-policy': csp,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
  });
  app.get(`${DOCS_PATH}/`, (c) => c.redirect(DOCS_PATH, 301));
  app.get(`${ASSETS_DIR}/swagger-ui-bundle.js`, asset(swaggerUiBundle, 'text/javascript; charset=utf-8'));
  app.get(`${ASSETS_DIR}/swagger-ui.css`, asset(swaggerUiCss, 'text/css; charset=utf-8'));
  return app;
}
