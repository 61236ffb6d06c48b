/**
 * Files the edge worker imports as text rather than as code: the Swagger UI script and style it serves on /docs
 * (workers/docs), and the reference web terminal's files (workers/terminal). esbuild gets this plugin (launcher/edge.ts, the bench's stage worker); wrangler gets the same files
 * through the `Text` rule in wrangler.toml, which a test keeps in step with TEXT_MODULES.
 */
import type { Plugin } from 'esbuild';
import type { Plugin as VitePlugin } from 'vite';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

/** The resolved paths of the text modules. */
export const TEXT_MODULES = /[\\/]swagger-ui-dist[\\/](swagger-ui-bundle\.js|swagger-ui\.css)$/;
/** The import specifiers the worker uses for them (wrangler.toml's rule must match each). */
export const TEXT_MODULE_IMPORTS = ['swagger-ui-dist/swagger-ui-bundle.js', 'swagger-ui-dist/swagger-ui.css'];
/** The reference web terminal's files and the SignalR browser bundle it loads, served at /terminal (workers/terminal). */
export const TERMINAL_TEXT_MODULES =
  /[\\/]examples[\\/]web-terminal[\\/][\w-]+\.(html|js|css)$|[\\/]@microsoft[\\/]signalr[\\/]dist[\\/]browser[\\/]signalr\.min\.js$/;

export const textModules: Plugin = {
  name: 'text-modules',
  setup(build) {
    const asText = async (args: { path: string }) => ({
      contents: await readFile(args.path, 'utf8'),
      loader: 'text' as const,
    });
    build.onLoad({ filter: TERMINAL_TEXT_MODULES }, asText);
    build.onLoad({ filter: TEXT_MODULES }, asText);
  },
};

const TEXT_PREFIX = 'virtual:web-terminal-text';

/**
 * The web terminal's files as text for vitest (vitest.config.ts, vitest.mutation.config.ts): the tests that load the
 * worker's modules in Node import them as the worker does, and never run the page's scripts.
 */
export const terminalTextForTests: VitePlugin = {
  name: 'web-terminal-text',
  enforce: 'pre',
  resolveId(source, importer) {
    if (!importer) return null;
    const path = source.startsWith('.')
      ? resolve(dirname(importer), source)
      : source.startsWith('@microsoft/signalr/')
        ? createRequire(importer).resolve(source)
        : null;
    return path && TERMINAL_TEXT_MODULES.test(path) ? `${TEXT_PREFIX}${path}` : null;
  },
  load(id) {
    return id.startsWith(TEXT_PREFIX)
      ? `export default ${JSON.stringify(readFileSync(id.slice(TEXT_PREFIX.length), 'utf8'))};`
      : null;
  },
};
