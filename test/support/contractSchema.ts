/**
 * JSON Schema validation against the contract: a v2 answer's `data` must validate against the schema its catalog
 * entry publishes (a contract record, a list of them, or an inline schema). Ajv in JSON Schema 2020-12 mode, the
 * dialect of the OpenAPI 3.1 components.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { openapiComponents } from '../../shared/records/contract.js';
import type { Operation } from '../../shared/catalog/index.js';

const ROOT = 'https://contract.local/';
const ajv = new Ajv2020({ strict: false, allErrors: true });
(formats as unknown as (a: Ajv2020) => void)(ajv);
for (const f of ['int32', 'int64', 'double', 'float', 'byte']) ajv.addFormat(f, true);
ajv.addSchema({ $id: ROOT, components: { schemas: openapiComponents } });

const compiled = new Map<string, ValidateFunction>();

/** The schema of `data` an entry publishes. */
export function dataSchema(response: Operation['response']): Record<string, unknown> {
  if (typeof response !== 'string') return response;
  const ref = (name: string) => ({ $ref: `${ROOT}#/components/schemas/${name}` });
  return response.endsWith('[]') ? { type: 'array', items: ref(response.slice(0, -2)) } : ref(response);
}

/** Validation errors of `data` against the entry's response schema, as readable lines; empty when valid. */
export function contractErrors(entry: Operation, data: unknown): string[] {
  const key = JSON.stringify(entry.response);
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile(dataSchema(entry.response))));
  if (validate(data)) return [];
  return (validate.errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}
