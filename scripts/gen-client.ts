/**
 * `npm run gen:client`: writes clients/typescript/api.d.ts, the TypeScript types of the API, from the OpenAPI
 * document the edge serves at /openapi.json: by default the one this checkout's catalog builds (no server needed),
 * or with `--url <gateway>` the one a running gateway serves. `--check` only compares and exits 1 when they differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { buildOpenApiDocument } from '../workers/openapi/document.js';
import { CLIENT_TYPES_FILE, clientTypes } from '../clients/typescript/clientTypes.js';

const { values } = parseArgs({ options: { url: { type: 'string' }, check: { type: 'boolean', default: false } } });

async function openApiDocument(): Promise<unknown> {
  if (!values.url) return buildOpenApiDocument();
  const url = new URL('/openapi.json', values.url);
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.json();
}

const types = await clientTypes(await openApiDocument());
const file = relative(process.cwd(), CLIENT_TYPES_FILE);
if (values.check) {
  let current = '';
  try {
    current = readFileSync(CLIENT_TYPES_FILE, 'utf8');
  } catch {
    /* missing counts as different */
  }
  if (current !== types) {
    console.error(`${file} is out of date with the OpenAPI document: run npm run gen:client`);
    process.exit(1);
  }
  console.log(`${file} is up to date`);
} else {
  writeFileSync(CLIENT_TYPES_FILE, types);
  console.log(`wrote ${file} (${Math.round(types.length / 1024)} KiB)`);
}
