/**
 * Records exactly as the contract: `shapeRecord(name)` turns whatever a trading server (or bridge) sent into the
 * contract's record `name` with every field present, in the contract's order. A field the server left out is null
 * where the contract allows null, else the type's empty value (0, false, "", the epoch, the enum's first member,
 * `None` for a flag set, [] or an empty record); fields the contract does not have are dropped, and secrets are
 * always answered as null, so nothing a server sends by mistake leaves the gateway.
 *
 * Shapers are built once per schema from the generated OpenAPI components and cached.
 */
import { openapiComponents } from './contract.js';

// The contract's JSON Schemas are walked as the untyped JSON they are: each shaper reads the members it knows.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-return -- see above */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type Schema = Record<string, any>;
type Shaper = (value: unknown) => unknown;

/** Fields that carry credentials: never answered, whatever the record (service spec, "Authentication" item 6). */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'password',
  'passwordInvestor',
  'passwordPhone',
  'investorPassword',
  'phonePassword',
  'reportsSMTPLogin',
  'reportsSMTPPass',
  'otpSecret',
  'apiData',
  'slavePassword',
  'feederPassword',
]);

export const EPOCH = '1970-01-01T00:00:00Z';

const components = openapiComponents as Record<string, Schema>;
const shapers = new Map<string, Shaper>();

const refName = (ref: string) => ref.split('/').pop()!;

/** The shaper of a contract record (`PF4User`) or list (`PF4User[]`). Unknown names pass values through. */
export function shapeRecord(name: string): Shaper {
  let shaper = shapers.get(name);
  if (shaper) return shaper;
  if (name.endsWith('[]')) {
    const item = shapeRecord(name.slice(0, -2));
    shaper = (value) => (Array.isArray(value) ? value.map(item) : []);
  } else {
    const schema = components[name];
    // Placeholder first, so a recursive schema finds itself.
    let built: Shaper = (v) => v;
    shapers.set(name, (v) => built(v));
    built = schema ? shaperOf(schema) : (v) => v;
    shaper = built;
  }
  shapers.set(name, shaper);
  return shaper;
}

/** Whether a contract schema name is known. */
export function isContractRecord(name: string): boolean {
  return name.replace(/\[\]$/, '') in components;
}

interface FieldPlan {
  name: string;
  shape: Shaper;
  empty: () => unknown;
  nullable: boolean;
}

function shaperOf(schema: Schema): Shaper {
  const { nullable, base } = unwrap(schema);
  if (base.$ref) {
    const name = refName(base.$ref);
    const target = components[name];
    if (target?.enum) return (v) => v; // enum names and flag sets pass as the server names them
    const inner = shapeRecord(name);
    return (v) => (v === null || v === undefined ? (nullable ? null : inner({})) : inner(v));
  }
  if (base.type === 'object' && base.properties) {
    const fields: FieldPlan[] = Object.entries(base.properties as Record<string, Schema>).map(([name, s]) => ({
      name,
      shape: shaperOf(s),
      empty: emptyOf(s),
      nullable: unwrap(s).nullable,
    }));
    return (value) => {
      const src = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      const out: Record<string, unknown> = {};
      for (const f of fields) {
        const v = src[f.name];
        if (SECRET_FIELDS.has(f.name)) out[f.name] = f.nullable ? null : f.empty();
        else out[f.name] = v === undefined || (v === null && !f.nullable) ? f.empty() : v === null ? null : f.shape(v);
      }
      return out;
    };
  }
  if (base.type === 'array') {
    const item = base.items ? shaperOf(base.items) : (v: unknown) => v;
    return (v) => (Array.isArray(v) ? v.map(item) : v);
  }
  return (v) => v;
}

/** The value of a missing field. */
function emptyOf(schema: Schema): () => unknown {
  const { nullable, base } = unwrap(schema);
  if (nullable) return () => null;
  if (base.$ref) {
    const name = refName(base.$ref);
    const target = components[name];
    if (target?.enum) {
      const first = (target.enum as string[]).includes('None') ? 'None' : target.enum[0];
      return () => first;
    }
    return () => shapeRecord(name)({});
  }
  switch (base.type) {
    case 'integer':
    case 'number':
      return () => 0;
    case 'boolean':
      return () => false;
    case 'array':
      return () => [];
    case 'object':
      return () => (base.properties ? shaperOf(base)({}) : {});
    case 'string':
      if (base.format === 'date-time') return () => EPOCH;
      if (base.enum) return () => base.enum[0];
      return () => '';
    default:
      return () => null;
  }
}

/** Splits the OpenAPI 3.1 nullable forms (`type: [t, "null"]`, `anyOf: [s, {type: "null"}]`) from the base schema. */
function unwrap(schema: Schema): { nullable: boolean; base: Schema } {
  if (Array.isArray(schema.anyOf)) {
    const rest = schema.anyOf.filter((s: Schema) => s.type !== 'null');
    const nullable = rest.length < schema.anyOf.length;
    const inner = rest.length === 1 ? rest[0] : { anyOf: rest };
    const base = inner.allOf?.length === 1 ? inner.allOf[0] : inner;
    return { nullable, base };
  }
  if (schema.allOf?.length === 1) return { nullable: false, base: schema.allOf[0] };
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t: string) => t !== 'null');
    return {
      nullable: types.length < schema.type.length,
      base: { ...schema, type: types.length === 1 ? types[0] : types },
    };
  }
  return { nullable: false, base: schema };
}
