// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient declarations of the text imports, nothing to import
/// <reference path="./assets.d.ts" />
/**
 * The reference web terminal (examples/web-terminal) at `GET /terminal/`, only when `TERMINAL=1`: otherwise these
 * routes do not exist (404 like any unknown path). The page calls this same origin (the API, the token endpoint and
 * the hub), so its Content-Security-Policy allows this origin alone; it holds no credential: the user types the API
 * client's id and secret, or pastes a token.
 */
import { Hono } from 'hono';
import indexHtml from '../../examples/web-terminal/index.html';
import appJs from '../../examples/web-terminal/app.js';
import gatewayJs from '../../examples/web-terminal/gateway.js';
import streamsJs from '../../examples/web-terminal/streams.js';
import styleCss from '../../examples/web-terminal/style.css';
import signalrJs from '@microsoft/signalr/dist/browser/signalr.min.js';
import type { AppEnv } from '../env.js';
import { configOf } from '../config.js';
import { terminalContentPolicy } from '../../shared/terminalPolicy.js';

export const TERMINAL_PATH = '/terminal';

const JS = 'text/javascript; charset=utf-8';
const FILES: Record<string, { body: string; type: string }> = {
  '': { body: indexHtml, type: 'text/html; charset=utf-8' },
  'app.js': { body: appJs, type: JS },
  'gateway.js': { body: gatewayJs, type: JS },
  'streams.js': { body: streamsJs, type: JS },
  'style.css': { body: styleCss, type: 'text/css; charset=utf-8' },
  // Without its source-map comment: the map is not served.
  'vendor/signalr.min.js': { body: signalrJs.replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n'), type: JS },
};

const CSP = terminalContentPolicy("'self'");

export function terminalRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(`${TERMINAL_PATH}/*`, async (c, next) => {
    if (!configOf(c.env).TERMINAL) return next();
    // The page's files are named relative to it: the page is the folder's index.
    if (c.req.path === TERMINAL_PATH) return c.redirect(`${TERMINAL_PATH}/`, 301);
    const file = FILES[c.req.path.slice(TERMINAL_PATH.length + 1)];
    if (!file) return next();
    return c.body(file.body, 200, {
      'content-type': file.type,
      'cache-control': 'no-cache',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
  });
  return app;
}
