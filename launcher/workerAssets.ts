/**
 * Files the edge worker imports as text rather than as code: the Swagger UI script and style it serves on /docs
 * (workers/docs). esbuild gets this plugin (launcher/edge.ts, the bench's stage worker); wrangler gets the same files
 * through the `Text` rule in wrangler.toml, which a test keeps in step with TEXT_MODULES.
 */
import type { Plugin } from 'esbuild';
import { readFile } from 'node:fs/promises';

/** The resolved paths of the text modules. */
export const TEXT_MODULES = /[\\/]swagger-ui-dist[\\/](swagger-ui-bundle\.js|swagger-ui\.css)$/;
/** The import specifiers the worker uses for them (wrangler.toml's rule must match each). */
export const TEXT_MODULE_IMPORTS = ['swagger-ui-dist/swagger-ui-bundle.js', 'swagger-ui-dist/swagger-ui.css'];

export const textModules: Plugin = {
  name: 'text-modules',
  setup(build) {
    build.onLoad({ filter: TEXT_MODULES }, async (args) => ({ contents: await readFile(args.path, 'utf8'), loader: 'text' }));
  },
};
