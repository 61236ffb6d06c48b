/**
 * The OpenAPI generator without the edge: the document it builds validates with swagger-parser (and a broken copy
 * does not, so the validation is not a formality), and every field helper's published declaration agrees with what
 * the helper parses (the same bounds, the same type).
 */
import { describe, expect, it } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import { z } from 'zod';
import {
  booleanQuery,
  dateTimeText,
  int32List,
  int64List,
  intText,
  numberText,
  pageQuery,
  position,
  positiveInt32,
  positiveInt64,
  publishedSchemas,
  unixSeconds32,
} from '../../shared/catalog/fields.js';
import { buildOpenApiDocument, envelopeCarries } from './document.js';

describe('the generated OpenAPI document', () => {
  it('validates, and a copy with a broken operation does not', async () => {
    const doc = buildOpenApiDocument() as any;
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
    const broken = structuredClone(doc);
    const [path] = Object.keys(broken.paths).filter((p) => p.startsWith('/api/v2/'));
    const op = Object.values<any>(broken.paths[path])[0];
    op.parameters.push({ name: 'login', in: 'body', schema: { type: 'integer' } });
    await expect(SwaggerParser.validate(broken)).rejects.toThrow();
    const dangling = structuredClone(doc);
    Object.values<any>(dangling.paths[path])[0].responses['401'] = { $ref: '#/components/responses/Nope' };
    await expect(SwaggerParser.validate(dangling)).rejects.toThrow();
  });

  it('publishes group routes with their documented one-segment path, enums with the contract spelling, and a body enum as its component', () => {
    const doc = buildOpenApiDocument() as any;
    const paths = Object.keys(doc.paths);
    expect(paths).toContain('/api/v2/PF4/{tradePlatform}/GroupRecordGet/{group}');
    expect(paths.filter((p) => p.includes('{group}{') || p.includes('.+'))).toStrictEqual([]);
    const chart = doc.paths['/api/v2/PF4/{tradePlatform}/ChartRequest/{symbol}'].get.parameters as any[];
    expect(chart.find((p) => p.name === 'period').schema).toStrictEqual({
      type: 'string',
      enum: ['M1', 'M5', 'M15', 'M30', 'H1', 'H4', 'D1', 'W1', 'Mn1'],
    });
    const journal = doc.paths['/api/v2/PF4/{tradePlatform}/JournalRequest'].get.parameters as any[];
    expect(journal.find((p) => p.name === 'mode').schema).toMatchObject({
      type: 'string',
      enum: ['Standard', 'Logins', 'Trades', 'Errors', 'Full', 'Updater', 'SendMail', 'Failover'],
    });
    const ticks = doc.paths['/api/v2/PF4/{tradePlatform}/TicksRequest/{symbol}'].get.parameters as any[];
    expect(ticks.find((p) => p.name === 'flags').schema).toMatchObject({
      type: 'string',
      description: expect.stringContaining('Raw 1, Normal 2'),
    });
    const group =
      doc.paths['/api/v2/PF4/{tradePlatform}/GroupRecord/{group}'].patch.requestBody.content['application/json'].schema;
    expect(JSON.stringify(group.$ref ? doc.components.schemas[group.$ref.split('/').pop()] : group)).toContain(
      '"$ref":"#/components/schemas/MarginMode"',
    );
  });

  it('takes a contract envelope only when it carries the payload the edge answers', () => {
    const envelope = (data: unknown) => ({ properties: { data, error: {}, meta: {} } });
    const user = { $ref: '#/components/schemas/PF4User' };
    expect(envelopeCarries(envelope({ anyOf: [user, { type: 'null' }] }), user)).toBe(true);
    expect(envelopeCarries(envelope({ type: ['array', 'null'], items: user }), { type: 'array', items: user })).toBe(
      true,
    );
    expect(envelopeCarries(envelope({ type: ['array', 'null'], items: user }), user)).toBe(false);
    expect(envelopeCarries(envelope({ type: 'integer', format: 'int32' }), { type: 'integer', format: 'int32' })).toBe(
      true,
    );
    expect(envelopeCarries(envelope({ type: ['string', 'null'] }), { type: ['string', 'null'] })).toBe(true);
    expect(envelopeCarries(envelope({ type: 'boolean' }), { type: 'string' })).toBe(false);
    // Any JSON is not the contract's JsonNode record.
    expect(
      envelopeCarries(envelope({ anyOf: [{ $ref: '#/components/schemas/JsonNode' }, { type: 'null' }] }), {}),
    ).toBe(false);
  });
});

describe('published declarations of the field helpers', () => {
  const declared = (schema: z.ZodType) => publishedSchemas.get(schema) as Record<string, any>;
  const ok = (schema: z.ZodType, value: unknown) => schema.safeParse(value).success;

  it('publish integer fields with exactly the bounds they parse', () => {
    const cases: Array<[string, z.ZodType, number, number, string]> = [
      ['positiveInt32', positiveInt32('login'), 1, 2147483647, 'int32'],
      ['intText', intText('shift'), -2147483648, 2147483647, 'int32'],
      ['intText bounded', intText('mode', 0, 7), 0, 7, 'int32'],
      ['position', position(), 0, 2147483647, 'int32'],
      ['unixSeconds32', unixSeconds32('timestamp'), 0, 2147483647, 'int32'],
      ['limit', (pageQuery.limit as z.ZodOptional<z.ZodType>).unwrap(), 1, 5000, 'int32'],
    ];
    for (const [name, schema, min, max, format] of cases) {
      expect(declared(schema), name).toEqual({ type: 'integer', format, minimum: min, maximum: max });
      expect(ok(schema, String(min)), name).toBe(true);
      expect(ok(schema, String(max)), name).toBe(true);
      expect(ok(schema, String(min - 1)), name).toBe(false);
      expect(ok(schema, String(BigInt(max) + 1n)), name).toBe(false);
      expect(schema.parse(String(min)), name).toBe(min);
    }
  });

  it('publish 64-bit ids as int64 with their minimum, and parse them exactly up to the int64 maximum', () => {
    const login = positiveInt64('login');
    expect(declared(login)).toEqual({ type: 'integer', format: 'int64', minimum: 1 });
    expect(login.parse('1')).toBe(1);
    expect(login.parse('9223372036854775807')).toBe(9223372036854775807n);
    expect(ok(login, '0')).toBe(false);
    expect(ok(login, '9223372036854775808')).toBe(false);
  });

  it('publish repeated id lists as arrays of those integers', () => {
    const doc = z.toJSONSchema(int32List('logins', 3), {
      io: 'input',
      override: ({ zodSchema, jsonSchema }) => {
        const published = publishedSchemas.get(zodSchema as unknown as z.ZodType);
        if (published) {
          for (const k of Object.keys(jsonSchema)) delete (jsonSchema as any)[k];
          Object.assign(jsonSchema, published);
        }
      },
    });
    expect(doc).toMatchObject({
      type: 'array',
      minItems: 1,
      maxItems: 3,
      items: { type: 'integer', minimum: 1, maximum: 2147483647 },
    });
    expect(int32List('logins', 3).parse(['1', '2'])).toEqual([1, 2]);
    // The list is the array, piped into dropping repeated values.
    expect(int32List('logins', 3).parse(['2', '1', '2'])).toEqual([2, 1]);
    expect(declared((int64List('logins') as any)._zod.def.in._zod.def.element)).toMatchObject({
      type: 'integer',
      format: 'int64',
    });
  });

  it('publish numbers, booleans and date-times as such', () => {
    expect(declared(numberText('price'))).toEqual({ type: 'number', format: 'double' });
    expect(numberText('price').parse('1.25')).toBe(1.25);
    expect(declared(booleanQuery)).toEqual({ type: 'boolean' });
    expect([booleanQuery.parse('true'), booleanQuery.parse('false')]).toEqual([true, false]);
    expect(declared(dateTimeText('from'))).toEqual({ type: 'string', format: 'date-time', maxLength: 64 });
    expect(ok(dateTimeText('from'), '2024-01-02T03:04:05Z')).toBe(true);
    expect(ok(dateTimeText('from'), 'x'.repeat(65))).toBe(false);
  });
});
