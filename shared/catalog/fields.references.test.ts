/**
 * mergePatchBody looks through the contract's references (`z.lazy`) to tell an enum field, which has no empty value,
 * from the rest: it follows at most four references, so that a reference cycle cannot hang it. The contract's own
 * records reference an enum once; records with deeper chains and a cycle are added to the contract module here.
 */
import { describe, expect, it, vi } from 'vitest';
import type { ZodType } from 'zod';

vi.mock('../records/contract.js', async (importOriginal) => {
  const real = await importOriginal<Record<string, unknown>>();
  const { z } = await import('zod');
  const side = z.enum(['Buy', 'Sell']);
  /** `side` behind `depth` references. */
  const behind = (depth: number): ZodType => (depth === 0 ? side : z.lazy(() => behind(depth - 1)));
  const cycle: ZodType = z.lazy(() => cycle);
  const records = {
    SideBehind4: z.strictObject({ side: behind(4).optional(), note: z.string().nullable().optional() }),
    SideBehind5: z.strictObject({ side: behind(5).optional() }),
    SelfReference: z.strictObject({ loop: cycle.optional() }),
  };
  const published = Object.fromEntries(Object.keys(records).map((name) => [name, { type: 'object' }]));
  return {
    ...real,
    ...records,
    openapiComponents: { ...(real.openapiComponents as Record<string, unknown>), ...published },
  };
});

const { mergePatchBody } = await import('./fields.js');

const emptied = (field: string) => ({
  success: false,
  issues: [{ path: [field], message: `${field} cannot be emptied (null): give one of its values` }],
});
function outcome(name: string, patch: unknown) {
  const r = mergePatchBody(name).safeParse(patch);
  return r.success
    ? { success: true, data: r.data }
    : { success: false, issues: r.error.issues.map(({ path, message }) => ({ path, message })) };
}

describe('mergePatchBody through references', () => {
  it('finds an enum four references deep: null is refused, a member is taken', () => {
    expect(outcome('SideBehind4', { side: null })).toStrictEqual(emptied('side'));
    expect(outcome('SideBehind4', { side: 'Sell', note: null })).toStrictEqual({
      success: true,
      data: { side: 'Sell', note: null },
    });
  });

  it('stops after four references: a field five deep is not known as an enum, so null passes', () => {
    expect(outcome('SideBehind5', { side: null })).toStrictEqual({ success: true, data: { side: null } });
    expect(outcome('SideBehind5', { side: 'Buy' })).toStrictEqual({ success: true, data: { side: 'Buy' } });
  });

  it('builds the patch of a record whose field references itself, without looping', () => {
    expect(outcome('SelfReference', { loop: null })).toStrictEqual({ success: true, data: { loop: null } });
  });
});
