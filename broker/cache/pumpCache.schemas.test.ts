/**
 * The cache's kinds agree with the protocol's schemas (`CHANGE_EVENTS`, shared/protocol.ts): a kind the cache keeps
 * carries the contract record the cache shapes it to, and its delete carries the key field the cache deletes by.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { CHANGE_EVENTS, CONTRACT_RECORDS, changeKindsOf, FAMILIES } from '../../shared/protocol.js';
import { openapiComponents } from '../../shared/records/contract.js';
import { KINDS, TABLE_OF_KIND } from './pumpCache.js';

type Def = {
  type: string;
  left?: z.ZodType;
  right?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
};
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def; parent?: z.ZodType } })._zod;

/** The contract records `schema` is made of: itself, or the sides of an intersection. */
function contractNames(schema: z.ZodType): string[] {
  for (let at: z.ZodType | undefined = schema; at; at = defOf(at).parent) {
    const name = CONTRACT_RECORDS.get(at);
    if (name) return [name];
  }
  const def = defOf(schema).def;
  return def.type === 'intersection' ? [...contractNames(def.left!), ...contractNames(def.right!)] : [];
}

/** The fields a key record has, or a contract record's properties. */
function fieldsOf(schema: z.ZodType): string[] {
  const def = defOf(schema).def;
  if (def.type === 'object') return Object.keys(def.shape!);
  const [contract] = contractNames(schema);
  return Object.keys((openapiComponents as Record<string, { properties: object }>)[contract].properties);
}

describe("the cache's kinds and the protocol's change events", () => {
  it('keep each kind as the contract record its events carry', () => {
    const checked: string[] = [];
    for (const family of FAMILIES) {
      for (const kind of changeKindsOf(family)) {
        const table = KINDS[family][TABLE_OF_KIND[kind] ?? kind];
        if (!table?.schema) continue;
        expect(contractNames(CHANGE_EVENTS[family][kind]!.record), `${family} ${kind}`).toEqual([table.schema]);
        checked.push(`${family} ${kind}`);
      }
    }
    expect(checked).toContain('PF4 groups');
    expect(checked).toContain('PF5 deals');
    expect(checked.length).toBe(14);
  });

  it('delete a record by the key field its delete carries', () => {
    const checked: string[] = [];
    for (const family of FAMILIES) {
      for (const kind of changeKindsOf(family)) {
        const spec = CHANGE_EVENTS[family][kind]!;
        const table = KINDS[family][TABLE_OF_KIND[kind] ?? kind];
        if (!spec.deleted || !table) continue;
        const fields = fieldsOf(spec.deleted);
        if (defOf(spec.deleted).def.type === 'object') expect(fields, `${family} ${kind}`).toEqual([table.key]);
        else expect(fields, `${family} ${kind}`).toContain(table.key);
        checked.push(`${family} ${kind}`);
      }
    }
    expect(checked).toEqual([
      'PF4 users',
      'PF4 trades',
      'PF4 symbols',
      'PF4 margin',
      'PF4 online',
      'PF4 news',
      'PF4 symbolSessions',
      'PF5 positions',
      'PF5 orders',
      'PF5 deals',
    ]);
  });

  it('keep a table for every kind of a snapshot', () => {
    for (const family of FAMILIES) {
      for (const kind of changeKindsOf(family).filter((k) => CHANGE_EVENTS[family][k]!.snapshot)) {
        expect(KINDS[family][TABLE_OF_KIND[kind] ?? kind], `${family} ${kind}`).toBeDefined();
      }
    }
  });
});
