/**
 * JSON Schema validation against the contract: a v2 answer's `data` must validate against the schema its catalog
 * entry publishes (a contract record, a list of them, or an inline schema). Ajv in JSON Schema 2020-12 mode, the
 * dialect of the OpenAPI 3.1 components.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { openapiComponents } from '../../shared/records/contract.js';
import * as contract from '../../shared/records/contract.js';
import type { Operation } from '../../shared/catalog/index.js';

const ROOT = 'https://contract.local/';
const ajv = new Ajv2020({ strict: false, allErrors: true });
(formats as unknown as (a: Ajv2020) => void)(ajv);
for (const f of ['int32', 'int64', 'double', 'float', 'byte']) ajv.addFormat(f, true);
ajv.addSchema({ $id: ROOT, components: { schemas: everyFieldRequired(withFlagSets(openapiComponents)) } });

/**
 * Answers carry every field of their record (issue: "every field of the record present"), so for validating answers
 * every property of every record is required, whatever the published document says of requests.
 */
function everyFieldRequired(components: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(components)) {
    const s = schema as { properties?: Record<string, unknown> };
    out[name] = s.properties && !name.endsWith('ApiResponse') ? { ...s, required: Object.keys(s.properties) } : schema;
  }
  return out;
}

/**
 * Flag-set enums (`flagSet` in the generated zod) carry the names of the set bits joined by ", " (`Enabled, Password`),
 * as the contract's records are written and read; the published JSON Schema lists only the single members.
 */
function withFlagSets(components: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...components };
  for (const [name, schema] of Object.entries(components)) {
    const members = (schema as { enum?: string[] }).enum;
    const zod = (contract as Record<string, { _zod?: { def?: { type?: string } } }>)[name];
    if (!members || !zod || zod._zod?.def?.type === 'enum') continue;
    const one = `(?:${[...members, 'Bit\\d{1,2}'].join('|')})`;
    out[name] = { type: 'string', maxLength: 1024, pattern: `^\\s*${one}\\s*(?:,\\s*${one}\\s*)*$` };
  }
  return out;
}

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
  return (validate.errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}
