/**
 * The catalog's shared field schemas (shared/catalog/fields.ts), each parsed directly: what it accepts and converts,
 * the exact issue (code, path, message) of each refusal on both sides of every bound, and what the API description
 * publishes for it. A few calls through validateInputs show how the messages reach the caller (`<field>: <message>`).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  booleanQuery,
  confirmQuery,
  contractBody,
  dateTimeText,
  enumText,
  flagText,
  groupName,
  int32List,
  int64Body,
  int64List,
  intText,
  LIST_VALUES_MAX,
  login32,
  login64,
  maskText,
  mergePatchBody,
  numberText,
  order32,
  pageQuery,
  PAGE_LIMIT_MAX,
  position,
  positiveInt32,
  positiveInt64,
  publishedSchemas,
  symbolName,
  ticket32,
  unixSeconds32,
} from './fields.js';
import { defineOperation } from './operation.js';
import { int64 } from '../records/primitives.js';
import * as contract from '../records/contract.js';
import {
  ChartPeriodMembers,
  EnLogTypeMembers,
  EnOrderFlagsMembers,
  TickRequestFlagsMembers,
} from '../records/contract.js';
import { validateInputs } from './inputs.js';

type Issue = { code: string; path: PropertyKey[]; message: string };
type Outcome = { ok: true; data: unknown } | { ok: false; issues: Issue[] };

/** What a schema makes of a value: the converted data, or each issue's code, path and message. */
function outcome(schema: z.ZodType, value: unknown): Outcome {
  const r = schema.safeParse(value);
  return r.success
    ? { ok: true, data: r.data }
    : { ok: false, issues: r.error.issues.map(({ code, path, message }) => ({ code, path, message })) };
}
const accepted = (data: unknown): Outcome => ({ ok: true, data });
const refused = (...issues: Array<[code: string, message: string, path?: PropertyKey[]]>): Outcome => ({
  ok: false,
  issues: issues.map(([code, message, path = []]) => ({ code, path, message })),
});
const declared = (schema: z.ZodType) => publishedSchemas.get(schema);

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MAX = 9223372036854775807n;

describe('intText: a signed whole number sent as text', () => {
  const shift = intText('shift');

  it('accepts the whole int32 range by default, both ends included, as numbers', () => {
    for (const [text, value] of [
      ['-2147483648', INT32_MIN],
      ['2147483647', INT32_MAX],
      ['0', 0],
      ['-5', -5],
      ['5', 5],
      ['12', 12],
      ['-007', -7],
    ] as const) {
      expect(outcome(shift, text), text).toStrictEqual(accepted(value));
    }
  });

  it('refuses one past either end of the default range, naming the field and the bound', () => {
    expect(outcome(shift, '-2147483649')).toStrictEqual(refused(['too_small', 'shift must be at least -2147483648']));
    expect(outcome(shift, '2147483648')).toStrictEqual(refused(['too_big', 'shift must be at most 2147483647']));
  });

  it('refuses text that is not an optional minus followed by digits', () => {
    for (const text of ['x5', '5x', '1.5', '', '-', '+5', ' 5', '5 ', '--5', '1e3', 'five']) {
      expect(outcome(shift, text), text).toStrictEqual(refused(['invalid_format', 'shift must be an integer']));
    }
    expect(outcome(shift, 5)).toStrictEqual(
      refused(['invalid_type', 'Invalid input: expected string, received number']),
    );
  });

  it('takes custom bounds, both ends included', () => {
    const mode = intText('mode', 0, 7);
    expect(outcome(mode, '0')).toStrictEqual(accepted(0));
    expect(outcome(mode, '7')).toStrictEqual(accepted(7));
    expect(outcome(mode, '-1')).toStrictEqual(refused(['too_small', 'mode must be at least 0']));
    expect(outcome(mode, '8')).toStrictEqual(refused(['too_big', 'mode must be at most 7']));
  });

  it('publishes an int32 exactly when both bounds lie within int32, else an int64, with the bounds', () => {
    expect(declared(intText('a'))).toStrictEqual({
      type: 'integer',
      format: 'int32',
      minimum: INT32_MIN,
      maximum: INT32_MAX,
    });
    expect(declared(intText('a', INT32_MIN, 0))).toStrictEqual({
      type: 'integer',
      format: 'int32',
      minimum: INT32_MIN,
      maximum: 0,
    });
    expect(declared(intText('a', 0, INT32_MAX))).toStrictEqual({
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: INT32_MAX,
    });
    expect(declared(intText('a', INT32_MIN - 1, 0))).toStrictEqual({
      type: 'integer',
      format: 'int64',
      minimum: INT32_MIN - 1,
      maximum: 0,
    });
    expect(declared(intText('a', 0, INT32_MAX + 1))).toStrictEqual({
      type: 'integer',
      format: 'int64',
      minimum: 0,
      maximum: INT32_MAX + 1,
    });
    expect(declared(intText('a', INT32_MIN - 1, INT32_MAX + 1))).toStrictEqual({
      type: 'integer',
      format: 'int64',
      minimum: INT32_MIN - 1,
      maximum: INT32_MAX + 1,
    });
  });
});

describe('position and unixSeconds32: int32 counts from 0', () => {
  it('position is named pos unless told, and takes 0 .. int32 max', () => {
    const pos = position();
    expect(outcome(pos, '0')).toStrictEqual(accepted(0));
    expect(outcome(pos, '2147483647')).toStrictEqual(accepted(INT32_MAX));
    expect(outcome(pos, '-1')).toStrictEqual(refused(['too_small', 'pos must be at least 0']));
    expect(outcome(pos, '2147483648')).toStrictEqual(refused(['too_big', 'pos must be at most 2147483647']));
    expect(outcome(pos, 'x')).toStrictEqual(refused(['invalid_format', 'pos must be an integer']));
    expect(outcome(position('index'), '-1')).toStrictEqual(refused(['too_small', 'index must be at least 0']));
  });

  it('unixSeconds32 takes 0 (1970) .. 2147483647 (2038-01-19), naming the field', () => {
    const from = unixSeconds32('from');
    expect(outcome(from, '0')).toStrictEqual(accepted(0));
    expect(outcome(from, '2147483647')).toStrictEqual(accepted(INT32_MAX));
    expect(outcome(from, '-1')).toStrictEqual(refused(['too_small', 'from must be at least 0']));
    expect(outcome(from, '2147483648')).toStrictEqual(refused(['too_big', 'from must be at most 2147483647']));
    expect(outcome(from, '1.5')).toStrictEqual(refused(['invalid_format', 'from must be an integer']));
  });
});

describe('positiveInt32 and the 32-bit ids', () => {
  it('names the value "value" unless told', () => {
    const value = positiveInt32();
    expect(outcome(value, '0')).toStrictEqual(refused(['too_small', 'value must be at least 1']));
    expect(outcome(value, 'x')).toStrictEqual(refused(['invalid_format', 'value must be a positive integer']));
    expect(outcome(value, '2147483648')).toStrictEqual(refused(['too_big', 'value must be at most 2147483647']));
  });

  it('login32, ticket32 and order32 take 1 .. int32 max and name themselves in every message', () => {
    for (const [name, schema] of [
      ['login', login32],
      ['ticket', ticket32],
      ['order', order32],
    ] as const) {
      expect(outcome(schema, '1'), name).toStrictEqual(accepted(1));
      expect(outcome(schema, '2147483647'), name).toStrictEqual(accepted(INT32_MAX));
      expect(outcome(schema, '0'), name).toStrictEqual(refused(['too_small', `${name} must be at least 1`]));
      expect(outcome(schema, '2147483648'), name).toStrictEqual(
        refused(['too_big', `${name} must be at most 2147483647`]),
      );
      expect(outcome(schema, '-1'), name).toStrictEqual(
        refused(['invalid_format', `${name} must be a positive integer`]),
      );
    }
  });

  it('takes digits only: leading zeros are read, anything else is refused', () => {
    expect(outcome(login32, '12')).toStrictEqual(accepted(12));
    expect(outcome(login32, '007')).toStrictEqual(accepted(7));
    for (const text of ['x5', '5x', '', ' 5', '1.0', '+1', '1e3']) {
      expect(outcome(login32, text), text).toStrictEqual(
        refused(['invalid_format', 'login must be a positive integer']),
      );
    }
  });
});

describe('positiveInt64: a 64-bit id sent as text, read exactly', () => {
  it('answers a number up to 2^53 − 1 and a bigint beyond, up to the int64 maximum', () => {
    expect(outcome(login64, '1')).toStrictEqual(accepted(1));
    expect(outcome(login64, '9007199254740991')).toStrictEqual(accepted(9007199254740991));
    expect(outcome(login64, '9007199254740992')).toStrictEqual(accepted(9007199254740992n));
    expect(outcome(login64, '9223372036854775807')).toStrictEqual(accepted(INT64_MAX));
  });

  it('refuses 0 and anything beyond the int64 maximum with custom issues naming the field', () => {
    expect(outcome(login64, '0')).toStrictEqual(refused(['custom', 'login must be at least 1']));
    expect(outcome(login64, '000')).toStrictEqual(refused(['custom', 'login must be at least 1']));
    expect(outcome(login64, '9223372036854775808')).toStrictEqual(
      refused(['custom', 'login must be at most 9223372036854775807']),
    );
    expect(outcome(login64, '1'.repeat(40))).toStrictEqual(
      refused(['custom', 'login must be at most 9223372036854775807']),
    );
  });

  it('takes digits only, and names the value "value" unless told', () => {
    for (const text of ['-1', 'x', '1.5', ''])
      expect(outcome(login64, text), text).toStrictEqual(
        refused(['invalid_format', 'login must be a positive integer']),
      );
    expect(outcome(positiveInt64(), '0')).toStrictEqual(refused(['custom', 'value must be at least 1']));
    expect(outcome(positiveInt64(), '9223372036854775808')).toStrictEqual(
      refused(['custom', 'value must be at most 9223372036854775807']),
    );
  });

  it('publishes an int64 with its minimum and no maximum', () => {
    expect(declared(positiveInt64('ticket'))).toStrictEqual({ type: 'integer', format: 'int64', minimum: 1 });
  });
});

describe('int64Body: a 64-bit id in a JSON body', () => {
  const login = int64Body('login');

  it('accepts safe integers as numbers and larger ids as bigints, up to the int64 maximum', () => {
    expect(outcome(login, 1)).toStrictEqual(accepted(1));
    expect(outcome(login, 9007199254740991)).toStrictEqual(accepted(9007199254740991));
    expect(outcome(login, 9007199254740992n)).toStrictEqual(accepted(9007199254740992n));
    expect(outcome(login, INT64_MAX)).toStrictEqual(accepted(INT64_MAX));
  });

  it('refuses a number beyond 2^53 − 1 (already rounded) and a bigint beyond int64, asking for digits', () => {
    const tooBig = refused(['custom', 'login must be at most 9223372036854775807, written in digits']);
    expect(outcome(login, 9007199254740992)).toStrictEqual(tooBig);
    expect(outcome(login, 1e19)).toStrictEqual(tooBig);
    expect(outcome(login, INT64_MAX + 1n)).toStrictEqual(tooBig);
  });

  it('refuses values below the minimum, 1 by default or as told, numbers and bigints alike', () => {
    expect(outcome(login, 0)).toStrictEqual(refused(['custom', 'login must be at least 1']));
    expect(outcome(login, 0n)).toStrictEqual(refused(['custom', 'login must be at least 1']));
    expect(outcome(login, -9007199254740993n)).toStrictEqual(refused(['custom', 'login must be at least 1']));
    const agent = int64Body('agent', 0);
    expect(outcome(agent, 0)).toStrictEqual(accepted(0));
    expect(outcome(agent, -1)).toStrictEqual(refused(['custom', 'agent must be at least 0']));
  });

  it('refuses fractions and non-finite numbers as not integers, checked before the minimum', () => {
    for (const v of [1.5, 0.5, -0.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(outcome(login, v), String(v)).toStrictEqual(refused(['custom', 'login must be an integer']));
    }
  });

  it('says a missing or null id is required, and any other type is not an integer', () => {
    expect(outcome(login, undefined)).toStrictEqual(refused(['custom', 'login is required']));
    expect(outcome(login, null)).toStrictEqual(refused(['custom', 'login is required']));
    for (const v of ['5', true, {}, [1]])
      expect(outcome(login, v), JSON.stringify(v)).toStrictEqual(refused(['custom', 'login must be an integer']));
  });

  it('publishes an int64 with its minimum, and the contract int64 as a plain int64', () => {
    expect(declared(login)).toStrictEqual({ type: 'integer', format: 'int64', minimum: 1 });
    expect(declared(int64Body('agent', 0))).toStrictEqual({ type: 'integer', format: 'int64', minimum: 0 });
    expect(declared(int64)).toStrictEqual({ type: 'integer', format: 'int64' });
  });
});

describe('numberText: a finite number sent as text', () => {
  const price = numberText('price');

  it('accepts decimal notation with an optional sign, fraction and exponent', () => {
    const cases: Array<[string, number]> = [
      ['0', 0],
      ['1', 1],
      ['12', 12],
      ['-1', -1],
      ['1.25', 1.25],
      ['-0.5', -0.5],
      ['12.75', 12.75],
      ['1e5', 100000],
      ['1E5', 100000],
      ['2.5E-3', 0.0025],
      ['1e+2', 100],
      ['1e-2', 0.01],
      ['1e10', 1e10],
      ['1.5e12', 1.5e12],
    ];
    for (const [text, value] of cases) expect(outcome(price, text), text).toStrictEqual(accepted(value));
  });

  it('refuses anything else as not a number, naming the field', () => {
    for (const text of [
      '',
      'x1',
      '1x',
      '1.',
      '.5',
      '1.x',
      'e5',
      '1e',
      '1e+',
      '1ex',
      '1e5x',
      '+1',
      '1.2.3',
      '1,5',
      ' 1',
      '0x10',
      'Infinity',
      'NaN',
      '--1',
    ]) {
      expect(outcome(price, text), text).toStrictEqual(refused(['invalid_format', 'price must be a number']));
    }
  });

  it('refuses digits beyond the range of a double as not finite, naming the field', () => {
    expect(outcome(price, '1e999')).toStrictEqual(refused(['invalid_type', 'price must be a finite number']));
    expect(outcome(price, '-1e999')).toStrictEqual(refused(['invalid_type', 'price must be a finite number']));
  });

  it('publishes a double', () => {
    expect(declared(price)).toStrictEqual({ type: 'number', format: 'double' });
  });
});

describe('dateTimeText: an ISO 8601 date-time sent as text', () => {
  const from = dateTimeText('from');

  it('answers the same instant as an ISO string in UTC, applying the offset', () => {
    expect(outcome(from, '2024-01-02T03:04:05Z')).toStrictEqual(accepted('2024-01-02T03:04:05.000Z'));
    expect(outcome(from, '2024-01-02T03:04:05+02:00')).toStrictEqual(accepted('2024-01-02T01:04:05.000Z'));
    expect(outcome(from, '2024-01-02T03:04:05-00:30')).toStrictEqual(accepted('2024-01-02T03:34:05.000Z'));
    expect(outcome(from, '2024-02-29T23:59:59.25Z')).toStrictEqual(accepted('2024-02-29T23:59:59.250Z'));
  });

  it('reads a time without an offset as UTC, not as the machine time zone', () => {
    // Here, whatever this worker's zone: the readings are UTC.
    expect(outcome(from, '2024-01-02T03:04:05')).toStrictEqual(accepted('2024-01-02T03:04:05.000Z'));
    expect(outcome(from, '2024-01-02T03:04')).toStrictEqual(accepted('2024-01-02T03:04:00.000Z'));
    expect(outcome(from, '2024-01-02T03:04:05.5')).toStrictEqual(accepted('2024-01-02T03:04:05.500Z'));
    // And in a process whose zone is 5 h 30 east of UTC (a worker thread cannot change its own zone), where a plain
    // Date reads the same text as local time.
    const script = `import { dateTimeText } from './shared/catalog/fields.ts';
      const from = dateTimeText('from');
      const texts = ['2024-01-02T03:04:05', '2024-01-02T03:04', '2024-01-02T03:04:05.5'];
      console.log(JSON.stringify({ plain: new Date(texts[0]).toISOString(), read: texts.map((t) => from.parse(t)) }));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, TZ: 'Asia/Kolkata' },
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toStrictEqual({
      plain: '2024-01-01T21:34:05.000Z',
      read: ['2024-01-02T03:04:05.000Z', '2024-01-02T03:04:00.000Z', '2024-01-02T03:04:05.500Z'],
    });
  });

  it('refuses text that is not an ISO 8601 date-time, even when Date.parse would read it', () => {
    for (const text of [
      '2024-01-02',
      '2024-02-30T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-01-02T03:04:05z',
      '2024-01-02T03:04:05+0200',
      '2024-01-02T03:04Z',
      'Tue, 02 Jan 2024 03:04:05 GMT',
      'yesterday',
      '',
    ]) {
      expect(outcome(from, text), text).toStrictEqual(refused(['custom', 'from must be an ISO 8601 date-time']));
    }
  });

  it('takes at most 64 characters', () => {
    const fraction = (digits: number) => `2024-01-02T03:04:05.${'1'.repeat(digits)}Z`;
    expect(fraction(43)).toHaveLength(64);
    expect(outcome(from, fraction(43))).toStrictEqual(accepted('2024-01-02T03:04:05.111Z'));
    expect(outcome(from, fraction(44))).toStrictEqual(refused(['too_big', 'from must be at most 64 characters']));
    expect(outcome(from, 'x'.repeat(65))).toStrictEqual(
      refused(['too_big', 'from must be at most 64 characters'], ['custom', 'from must be an ISO 8601 date-time']),
    );
  });

  it('publishes a date-time of at most 64 characters', () => {
    expect(declared(from)).toStrictEqual({ type: 'string', format: 'date-time', maxLength: 64 });
  });
});

describe('int32List and int64List: repeated id parameters', () => {
  it('int32List converts every value and takes 1 .. LIST_VALUES_MAX (1000) of them by default', () => {
    const logins = int32List('logins');
    expect(LIST_VALUES_MAX).toBe(1000);
    expect(outcome(logins, ['1', '2147483647'])).toStrictEqual(accepted([1, INT32_MAX]));
    expect(outcome(logins, [])).toStrictEqual(refused(['too_small', 'logins must list at least one value']));
    const most = Array.from({ length: 1000 }, (_, i) => String(i + 1));
    expect(outcome(logins, most)).toStrictEqual(accepted(most.map(Number)));
    expect(outcome(logins, [...most, '1001'])).toStrictEqual(
      refused(['too_big', 'logins must list at most 1000 values']),
    );
  });

  it('int32List and int64List ask for a value listed twice once, in the order of first appearance; duplicates count', () => {
    expect(outcome(int32List('logins'), ['7', '3', '7', '3', '9'])).toStrictEqual(accepted([7, 3, 9]));
    expect(outcome(int64List('tickets'), ['9223372036854775807', '5', '9223372036854775807'])).toStrictEqual(
      accepted([INT64_MAX, 5]),
    );
    // One login repeated past the bound is refused, not collapsed into one (the list is counted as sent).
    expect(outcome(int32List('logins'), Array(1001).fill('1'))).toStrictEqual(
      refused(['too_big', 'logins must list at most 1000 values']),
    );
    expect(outcome(int32List('logins'), Array(1000).fill('1'))).toStrictEqual(accepted([1]));
  });

  it('int32List names the field and the position of a bad value', () => {
    const logins = int32List('logins');
    expect(outcome(logins, ['1', '0'])).toStrictEqual(refused(['too_small', 'logins must be at least 1', [1]]));
    expect(outcome(logins, ['x', '2'])).toStrictEqual(
      refused(['invalid_format', 'logins must be a positive integer', [0]]),
    );
    expect(outcome(logins, ['2147483648'])).toStrictEqual(
      refused(['too_big', 'logins must be at most 2147483647', [0]]),
    );
  });

  it('int32List takes a custom maximum count', () => {
    const logins = int32List('logins', 2);
    expect(outcome(logins, ['1', '2'])).toStrictEqual(accepted([1, 2]));
    expect(outcome(logins, ['1', '2', '3'])).toStrictEqual(refused(['too_big', 'logins must list at most 2 values']));
  });

  it('int64List reads every value exactly and takes 1 .. 1000 of them by default', () => {
    const tickets = int64List('tickets');
    expect(outcome(tickets, ['1', '9223372036854775807'])).toStrictEqual(accepted([1, INT64_MAX]));
    expect(outcome(tickets, [])).toStrictEqual(refused(['too_small', 'tickets must list at least one value']));
    expect(outcome(tickets, Array(1000).fill('7'))).toStrictEqual(accepted([7]));
    expect(outcome(tickets, Array(1001).fill('7'))).toStrictEqual(
      refused(['too_big', 'tickets must list at most 1000 values']),
    );
    expect(outcome(tickets, ['1', '9223372036854775808'])).toStrictEqual(
      refused(['custom', 'tickets must be at most 9223372036854775807', [1]]),
    );
    expect(outcome(tickets, ['0'])).toStrictEqual(refused(['custom', 'tickets must be at least 1', [0]]));
  });

  it('int64List takes a custom maximum count', () => {
    const tickets = int64List('tickets', 1);
    expect(outcome(tickets, ['5'])).toStrictEqual(accepted([5]));
    expect(outcome(tickets, ['5', '6'])).toStrictEqual(refused(['too_big', 'tickets must list at most 1 values']));
  });
});

describe('enumText, names and masks', () => {
  it('enumText accepts a member in any case, answering its contract spelling, and lists all of them otherwise', () => {
    const side = enumText('side', ['Buy', 'Sell'] as const);
    expect(outcome(side, 'Sell')).toStrictEqual(accepted('Sell'));
    for (const v of ['buy', 'BUY', 'bUy']) expect(outcome(side, v), v).toStrictEqual(accepted('Buy'));
    for (const v of ['', 'Buy ', 'Buyer', '0', '1'])
      expect(outcome(side, v), v).toStrictEqual(refused(['custom', 'side must be one of Buy, Sell']));
    expect(outcome(side, undefined)).toStrictEqual(refused(['invalid_type', 'side must be one of Buy, Sell']));
    expect(publishedSchemas.get(side)).toStrictEqual({ type: 'string', enum: ['Buy', 'Sell'] });
  });

  it('enumText reads an enum the spec numbers in order (EnLogType) also by its number, and no other by number', () => {
    const mode = enumText('mode', EnLogTypeMembers);
    const message =
      'mode must be one of Standard, Logins, Trades, Errors, Full, Updater, SendMail, Failover or its number 0 to 7';
    expect(outcome(mode, '4')).toStrictEqual(accepted('Full'));
    expect(outcome(mode, '0')).toStrictEqual(accepted('Standard'));
    expect(outcome(mode, '7')).toStrictEqual(accepted('Failover'));
    expect(outcome(mode, 'FULL')).toStrictEqual(accepted('Full'));
    for (const v of ['8', '-1', '4.0', ' 4', '0x4', '0004'])
      expect(outcome(mode, v), v).toStrictEqual(refused(['custom', message]));
    // A chart period's number is not its position: read by name only.
    const period = enumText('period', ChartPeriodMembers);
    expect(outcome(period, 'MN1')).toStrictEqual(accepted('Mn1'));
    expect(outcome(period, 'h4')).toStrictEqual(accepted('H4'));
    expect(outcome(period, '1')).toStrictEqual(
      refused(['custom', 'period must be one of M1, M5, M15, M30, H1, H4, D1, W1, Mn1']),
    );
  });

  describe('flagText', () => {
    const flags = flagText('flags', TickRequestFlagsMembers, { Raw: 1, Normal: 2 }, { zero: 'All', maxLength: 64 });
    const message =
      'flags must be Raw, Normal, All or several of them joined by ", ", or the number of their bits (Raw 1, Normal 2)';

    it('reads member names in any case, joined by commas with or without spaces, each once in the contract spelling', () => {
      expect(outcome(flags, 'All')).toStrictEqual(accepted('All'));
      expect(outcome(flags, 'raw')).toStrictEqual(accepted('Raw'));
      expect(outcome(flags, 'NORMAL,raw, Raw')).toStrictEqual(accepted('Normal, Raw'));
    });

    it('reads the number of the set bits as their names, and 0 as the value given for no bit', () => {
      expect(outcome(flags, '1')).toStrictEqual(accepted('Raw'));
      expect(outcome(flags, '2')).toStrictEqual(accepted('Normal'));
      expect(outcome(flags, '3')).toStrictEqual(accepted('Raw, Normal'));
      expect(outcome(flags, '0')).toStrictEqual(accepted('All'));
    });

    it('refuses unknown names, unnamed bits, signs and fractions, naming the members and the bits', () => {
      for (const v of ['', 'Raw,Ticks', 'Raw,', '4', '5', '7', '-1', '1.0', '4294967297', 'Bit3']) {
        expect(outcome(flags, v), v).toStrictEqual(refused(['custom', message]));
      }
      expect(outcome(flags, 'r'.repeat(65))).toStrictEqual(refused(['too_big', 'flags must be at most 64 characters']));
    });

    it('reads 0 as None where the set has that member, and refuses it where it has none and no value is given', () => {
      const order = flagText('orderFlags', EnOrderFlagsMembers, {
        Market: 0x1,
        Limit: 0x2,
        Stop: 0x4,
        StopLimit: 0x8,
        SL: 0x10,
        TP: 0x20,
        CloseBy: 0x40,
      });
      expect(outcome(order, '0')).toStrictEqual(accepted('None'));
      expect(outcome(order, '65')).toStrictEqual(accepted('Market, CloseBy'));
      expect(outcome(order, 'closeby, sl')).toStrictEqual(accepted('CloseBy, SL'));
      const bare = flagText('flags', ['Raw', 'Normal'], { Raw: 1, Normal: 2 });
      expect(outcome(bare, '0').ok).toBe(false);
    });
  });

  it('groupName takes 1 to 16 characters', () => {
    expect(outcome(groupName, 'g')).toStrictEqual(accepted('g'));
    expect(outcome(groupName, 'g'.repeat(16))).toStrictEqual(accepted('g'.repeat(16)));
    expect(outcome(groupName, '')).toStrictEqual(refused(['too_small', 'group must not be empty']));
    expect(outcome(groupName, 'g'.repeat(17))).toStrictEqual(
      refused(['too_big', 'group must be at most 16 characters']),
    );
  });

  it('symbolName takes 1 to 12 characters', () => {
    expect(outcome(symbolName, 'E')).toStrictEqual(accepted('E'));
    expect(outcome(symbolName, 'S'.repeat(12))).toStrictEqual(accepted('S'.repeat(12)));
    expect(outcome(symbolName, '')).toStrictEqual(refused(['too_small', 'symbol must not be empty']));
    expect(outcome(symbolName, 'S'.repeat(13))).toStrictEqual(
      refused(['too_big', 'symbol must be at most 12 characters']),
    );
  });

  it('maskText takes 1 to 1024 characters', () => {
    expect(outcome(maskText, '*')).toStrictEqual(accepted('*'));
    expect(outcome(maskText, 'm'.repeat(1024))).toStrictEqual(accepted('m'.repeat(1024)));
    expect(outcome(maskText, '')).toStrictEqual(refused(['too_small', 'mask must not be empty']));
    expect(outcome(maskText, 'm'.repeat(1025))).toStrictEqual(
      refused(['too_big', 'mask must be at most 1024 characters']),
    );
  });
});

describe('pageQuery, booleanQuery and confirmQuery', () => {
  it('limit is optional and takes 1 .. 5000 as digits', () => {
    expect(PAGE_LIMIT_MAX).toBe(5000);
    expect(outcome(pageQuery.limit, undefined)).toStrictEqual(accepted(undefined));
    expect(outcome(pageQuery.limit, '1')).toStrictEqual(accepted(1));
    expect(outcome(pageQuery.limit, '5000')).toStrictEqual(accepted(5000));
    expect(outcome(pageQuery.limit, '0')).toStrictEqual(refused(['too_small', 'limit must be at least 1']));
    expect(outcome(pageQuery.limit, '5001')).toStrictEqual(refused(['too_big', 'limit must be at most 5000']));
    expect(outcome(pageQuery.limit, '-1')).toStrictEqual(
      refused(['invalid_format', 'limit must be a positive integer']),
    );
  });

  it('cursor is optional and takes at most 512 characters', () => {
    expect(outcome(pageQuery.cursor, undefined)).toStrictEqual(accepted(undefined));
    expect(outcome(pageQuery.cursor, '')).toStrictEqual(accepted(''));
    expect(outcome(pageQuery.cursor, 'c'.repeat(512))).toStrictEqual(accepted('c'.repeat(512)));
    expect(outcome(pageQuery.cursor, 'c'.repeat(513))).toStrictEqual(
      refused(['too_big', 'cursor must be at most 512 characters']),
    );
    expect(Object.keys(pageQuery)).toStrictEqual(['limit', 'cursor']);
  });

  it('booleanQuery reads true and false in any case, and nothing else', () => {
    for (const v of ['true', 'True', 'TRUE', 'tRuE']) expect(outcome(booleanQuery, v), v).toStrictEqual(accepted(true));
    for (const v of ['false', 'False', 'FALSE']) expect(outcome(booleanQuery, v), v).toStrictEqual(accepted(false));
    for (const v of ['1', '0', 'yes', '', 'truee', ' true']) {
      expect(outcome(booleanQuery, v), String(v)).toStrictEqual(refused(['custom', 'must be true or false']));
    }
    expect(outcome(booleanQuery, undefined)).toStrictEqual(refused(['invalid_type', 'must be true or false']));
    expect(declared(booleanQuery)).toStrictEqual({ type: 'boolean' });
  });

  it('confirmQuery is an optional confirm flag', () => {
    expect(Object.keys(confirmQuery)).toStrictEqual(['confirm']);
    expect(outcome(confirmQuery.confirm, undefined)).toStrictEqual(accepted(undefined));
    expect(outcome(confirmQuery.confirm, 'true')).toStrictEqual(accepted(true));
    expect(outcome(confirmQuery.confirm, 'yes')).toStrictEqual(refused(['custom', 'must be true or false']));
  });
});

describe('contractBody', () => {
  it('answers the contract record itself', () => {
    expect(contractBody('PF4Access')).toBe(contract.PF4Access);
    expect(contractBody('PF5Time')).toBe(contract.PF5Time);
  });

  it('refuses a name that is not both an exported schema and a published record', () => {
    expect(() => contractBody('NoSuchRecord')).toThrow(new Error('no contract record NoSuchRecord'));
    // Exported by the contract module, but a member list rather than a published record.
    expect(() => contractBody('ActivationModesMembers')).toThrow(
      new Error('no contract record ActivationModesMembers'),
    );
    // Published, but not a schema of its own.
    expect(() => contractBody('ApiError')).toThrow(new Error('no contract record ApiError'));
  });
});

describe('mergePatchBody: a JSON merge patch of a contract record', () => {
  const backup = mergePatchBody('PF4Backup');

  it('passes the fields it changes through, with null emptying a field that has an empty value', () => {
    const patch = {
      fullBackupPeriod: 'H4',
      fullBackupPath: null,
      fullBackupShift: null,
      exportPath: '/x',
      watchTimeout: 5,
    };
    expect(outcome(backup, patch)).toStrictEqual(accepted(patch));
    expect(outcome(backup, { fullBackupPath: null })).toStrictEqual(accepted({ fullBackupPath: null }));
  });

  it('refuses null for an enum that cannot be null, and takes null for one that can', () => {
    expect(outcome(backup, { fullBackupPeriod: null })).toStrictEqual(
      refused(['custom', 'fullBackupPeriod cannot be emptied (null): give one of its values', ['fullBackupPeriod']]),
    );
    const tier = mergePatchBody('PF5ConCommTier');
    expect(outcome(tier, { mode: null })).toStrictEqual(accepted({ mode: null }));
    expect(outcome(tier, { mode: 'Pips', value: null })).toStrictEqual(accepted({ mode: 'Pips', value: null }));
  });

  it('refuses a value of the wrong type naming the field', () => {
    expect(outcome(backup, { fullBackupShift: 'x' })).toStrictEqual(
      refused(['invalid_type', 'Invalid input: expected number, received string', ['fullBackupShift']]),
    );
    expect(outcome(backup, { fullBackupPeriod: 'Y9' })).toStrictEqual(
      refused(['invalid_union', 'Invalid input', ['fullBackupPeriod']]),
    );
  });

  it('refuses an empty patch', () => {
    expect(outcome(backup, {})).toStrictEqual(refused(['custom', 'a merge patch must change at least one field']));
  });

  it('refuses unknown members naming all of them', () => {
    expect(outcome(backup, { watchIp: 1, a: 1, b: 2 })).toStrictEqual(
      refused(['unrecognized_keys', 'unknown field a, b']),
    );
    // Unknown members are not changes: a patch of only those changes nothing either.
    expect(outcome(backup, { a: 1 })).toStrictEqual(
      refused(['unrecognized_keys', 'unknown field a'], ['custom', 'a merge patch must change at least one field']),
    );
  });

  it('refuses a body that is not a JSON object', () => {
    for (const v of [undefined, null, [], 'x', 5, true]) {
      expect(outcome(backup, v), JSON.stringify(v)).toStrictEqual(
        refused(['invalid_type', 'must be a JSON object (a merge patch)']),
      );
    }
  });

  it('refuses any change, null included, to a field named immutable, and only to those', () => {
    const guarded = mergePatchBody('PF4Backup', { immutable: ['watchIp', 'watchLogin'] });
    expect(outcome(guarded, { watchIp: 5 })).toStrictEqual(
      refused(['invalid_type', 'watchIp cannot be changed', ['watchIp']]),
    );
    expect(outcome(guarded, { watchLogin: null })).toStrictEqual(
      refused(['invalid_type', 'watchLogin cannot be changed', ['watchLogin']]),
    );
    expect(outcome(guarded, { watchTimeout: 5 })).toStrictEqual(accepted({ watchTimeout: 5 }));
    expect(outcome(backup, { watchIp: 5 })).toStrictEqual(accepted({ watchIp: 5 }));
  });

  it('refuses a record the contract does not have', () => {
    expect(() => mergePatchBody('PF4Nothing')).toThrow(new Error('no contract record PF4Nothing'));
  });
});

describe('messages as the caller reads them (validateInputs)', () => {
  const _none = { kind: 'none' } as const;
  const url = (query = '') => new URL(`http://edge/x${query}`);
  const entry = defineOperation({
    name: 'FieldsProbe',
    generation: 'v2',
    family: 'PF5',
    method: 'POST',
    path: '/p/{login}',
    tag: 't',
    summary: 's',
    response: 'X',
    timeout: 'read',
    read: 'live',
    mutating: true,
    params: z.object({ login: login64 }),
    query: z.object({
      tickets: int32List('tickets', 3),
      live: booleanQuery.optional(),
      from: dateTimeText('from').optional(),
      ...pageQuery,
    }),
    body: mergePatchBody('PF4Backup'),
  });

  it('converts path, query and body values', () => {
    expect(
      validateInputs(
        entry,
        { login: '9007199254740993' },
        url('?tickets=4&tickets=5&live=false&from=2024-01-02T03:04:05%2B01:00&limit=10'),
        { kind: 'json', value: { fullBackupPath: null } },
      ),
    ).toStrictEqual({
      ok: true,
      args: {
        login: 9007199254740993n,
        tickets: [4, 5],
        live: false,
        from: '2024-01-02T02:04:05.000Z',
        limit: 10,
        body: { fullBackupPath: null },
      },
    });
  });

  it('prefixes each message with the field path, and joins several problems', () => {
    expect(
      validateInputs(entry, { login: '0' }, url('?tickets=1&tickets=0&live=1&limit=5001'), {
        kind: 'json',
        value: { fullBackupPeriod: null },
      }),
    ).toStrictEqual({
      ok: false,
      message:
        'login: login must be at least 1; tickets.1: tickets must be at least 1; live: must be true or false; limit: limit must be at most 5000; ' +
        'body.fullBackupPeriod: fullBackupPeriod cannot be emptied (null): give one of its values',
    });
    expect(
      validateInputs(entry, { login: '1' }, url('?tickets=1&tickets=2&tickets=3&tickets=4'), {
        kind: 'json',
        value: [],
      }),
    ).toStrictEqual({
      ok: false,
      message: 'tickets: tickets must list at most 3 values; body: must be a JSON object (a merge patch)',
    });
  });

  it('names a missing 64-bit id in a body as required', () => {
    const create = defineOperation({
      name: 'IdProbe',
      generation: 'v2',
      family: 'PF5',
      method: 'POST',
      path: '/q',
      tag: 't',
      summary: 's',
      response: 'X',
      timeout: 'change',
      read: 'live',
      body: z.object({ login: int64Body('login') }),
    });
    expect(validateInputs(create, {}, url(), { kind: 'json', value: {} })).toStrictEqual({
      ok: false,
      message: 'body.login: login is required',
    });
    expect(validateInputs(create, {}, url(), { kind: 'json', value: { login: 12.5 } })).toStrictEqual({
      ok: false,
      message: 'body.login: login must be an integer',
    });
  });
});
