/**
 * `npm run gen:asyncapi`: writes docs/manager-protocol.asyncapi.json, the manager protocol's AsyncAPI 3.0 document,
 * from the protocol's schemas (shared/protocolAsyncApi.ts makes it). `--check` only compares and exits 1 when the
 * committed file differs from what the schemas make now.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ASYNCAPI_FILE, managerProtocolAsyncApiText } from '../shared/protocolAsyncApi.js';

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const path = resolve(dirname(fileURLToPath(import.meta.url)), '..', ASYNCAPI_FILE);
const file = relative(process.cwd(), path);
const text = managerProtocolAsyncApiText();
let current: string | undefined;
try {
  current = readFileSync(path, 'utf8');
} catch {
  /* missing counts as different */
}

if (values.check) {
  if (current !== text) {
    console.error(`${file} is out of date with the protocol's schemas: run npm run gen:asyncapi`);
    process.exit(1);
  }
  console.log(`${file} is up to date`);
} else if (current === text) {
  console.log(`${file} is up to date`);
} else {
  writeFileSync(path, text);
  console.log(`wrote ${file}`);
}
