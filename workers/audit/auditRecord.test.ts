/** What the audit trail keeps of a call (auditRecord.ts): redacted arguments, the outcome of an answer, CSV lines. */
import { describe, expect, it } from 'vitest';
import { csvLine, MAX_ARGS_CHARS, outcomeOf, REDACTED, redactedArgs, type AuditEvent } from './auditRecord.js';

describe('redactedArgs', () => {
  it("redacts the records' credential fields whatever their value, and text members named as secrets, at any depth; keeps rules and every other member", () => {
    const args = {
      login: 7,
      body: {
        password: 'p1',
        Password: 'p2',
        reportsSMTPPass: 'p3',
        nested: [{ apiKey: 'k1', privateKey: 'k2', token: 't1', clientSecret: 's1' }, 'plain'],
        authPasswordMin: 8,
        lastPassChange: '2026-01-01T00:00:00Z',
        name: 'Ann',
        reportsSMTPLogin: 'reports',
        apiData: [{ k: 1 }],
        passwordPhone: 1234,
      },
    };
    expect(JSON.parse(redactedArgs({}, args))).toEqual({
      login: 7,
      body: {
        password: REDACTED,
        Password: REDACTED,
        reportsSMTPPass: REDACTED,
        nested: [{ apiKey: REDACTED, privateKey: REDACTED, token: REDACTED, clientSecret: REDACTED }, 'plain'],
        authPasswordMin: 8,
        lastPassChange: '2026-01-01T00:00:00Z',
        name: 'Ann',
        reportsSMTPLogin: REDACTED,
        apiData: REDACTED,
        passwordPhone: REDACTED,
      },
    });
    // The caller's arguments are not changed.
    expect(args.body.password).toBe('p1');
  });

  it('redacts the whole body of an entry whose body is a secret, and writes 64-bit ids exactly', () => {
    expect(JSON.parse(redactedArgs({ secretBody: true }, { login: 7, body: 'hunter2' }))).toEqual({
      login: 7,
      body: REDACTED,
    });
    expect(redactedArgs({}, { ticket: 9007199254740993n })).toBe('{"ticket":9007199254740993}');
  });

  it('keeps at most MAX_ARGS_CHARS characters, saying how many more there were', () => {
    const text = redactedArgs({}, { body: 'x'.repeat(MAX_ARGS_CHARS * 2) });
    expect(text.length).toBeLessThan(MAX_ARGS_CHARS + 64);
    expect(text).toMatch(/… \(\d+ more characters not kept\)$/);
  });
});

describe('outcomeOf', () => {
  it('reads applied, refused with its code, and unknown from the answer', () => {
    expect(outcomeOf('ok', false)).toEqual({ outcome: 'applied', code: null });
    expect(outcomeOf('Validation', false)).toEqual({ outcome: 'refused', code: 'Validation' });
    expect(outcomeOf('NoConnect', true)).toEqual({ outcome: 'unknown', code: 'NoConnect' });
  });
});

describe('csvLine', () => {
  const event: AuditEvent = {
    id: 3,
    at: '2026-12-04T01:00:00.000Z',
    organizationId: 'org',
    clientId: 'c1',
    address: null,
    operation: 'v2.PF4.UserRecordNew',
    platform: null,
    traceId: 't',
    idempotencyKey: '=HYPERLINK("x")',
    outcome: 'applied',
    code: null,
    completedAt: '2026-12-04T01:00:00.010Z',
    args: '{"body":{"name":"A, B"}}',
    replayed: false,
  };

  it('quotes fields with commas, quotes and line breaks, leaves null empty, and defuses formulas', () => {
    expect(csvLine(event)).toBe(
      `3,2026-12-04T01:00:00.000Z,org,c1,,v2.PF4.UserRecordNew,,t,"'=HYPERLINK(""x"")",applied,,2026-12-04T01:00:00.010Z,"{""body"":{""name"":""A, B""}}",false\r\n`,
    );
    expect(csvLine({ ...event, idempotencyKey: 'a\nb' })).toContain(',"a\nb",');
  });
});
