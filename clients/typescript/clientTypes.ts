/**
 * TypeScript types of the gateway's API, generated from its OpenAPI document by openapi-typescript: `paths` (every
 * route with its parameters, request body and answers) and `components` (the contract records). Committed as
 * clients/typescript/api.d.ts; `npm run gen:client` writes it and test/e2e/client.test.ts fails when it differs from
 * what the served /openapi.json gives, so the committed types cannot drift from the API.
 */
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLIENT_TYPES_FILE = join(root, 'clients/typescript/api.d.ts');

const HEADER = `${COMMENT_HEADER.trimEnd()}
/* Types of the trade platform gateway's API, from its /openapi.json. Regenerate with: npm run gen:client */

`;

/** The declaration file for an OpenAPI document (the parsed JSON of /openapi.json). */
export async function clientTypes(document: unknown): Promise<string> {
  // The document is whole (no external $ref), so nothing is fetched; `silent` keeps the library's notes off stdout.
  const ast = await openapiTS(structuredClone(document) as OpenAPI3, { silent: true });
  return HEADER + astToString(ast);
}
