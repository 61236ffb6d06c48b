/**
 * What the audit trail records of one call that is not a read (docs/audit.md), free of the Durable Object so it is
 * unit-tested alone (`auditRecord.test.ts`): the row's fields, the call's arguments with every secret redacted before
 * anything is stored, and the outcome read from the answer the caller got.
 *
 * Secrets are redacted by name wherever they sit in the arguments: the records' credential fields (SECRET_FIELDS,
 * never answered either: `reportsSMTPLogin`, `apiData`, …) whatever their value, and any text member whose name holds
 * `password`, `secret`, `token`, `apikey` or `privatekey`, or ends in `pass` (a number such as `authPasswordMin` is a
 * rule, not a secret, and is kept) and by the catalog where the whole body is
 * one (`secretBody`: the password bodies of UserPasswordSet and UserPasswordCheck, v1 and v2). What is kept is
 * bounded: at most MAX_ARGS_CHARS of JSON, the rest cut with a note of how much.
 */
import type { Operation } from '../../shared/catalog/index.js';
import { AUDIT_PAGE_MAX, type AUDIT_OUTCOME_NAMES } from '../../shared/catalog/registry.js';
import { stringifyJson } from '../../shared/losslessJson.js';
import { SECRET_FIELDS } from '../../shared/records/shape.js';

/** How a recorded call ended: applied, refused (with its error code) or unknown (with the code that said so). */
export type AuditOutcome = (typeof AUDIT_OUTCOME_NAMES)[number];

/** One row of the trail as the API answers it. */
export interface AuditEvent {
  /** Position in the organization's trail: the paging cursor. */
  id: number;
  /** When the call reached the edge (ISO 8601, UTC). */
  at: string;
  organizationId: string;
  clientId: string;
  /** The source address Cloudflare's front named; null when not known (the local edge). */
  address: string | null;
  /** The catalog id of the operation (`v2.PF4.UserDeposit`). */
  operation: string;
  /** The trade platform it addressed; null for the registry's own operations. */
  platform: string | null;
  traceId: string;
  idempotencyKey: string | null;
  outcome: AuditOutcome;
  /** The error code of a refusal or an unknown outcome (`Validation`, `NoConnect`); null when applied. */
  code: string | null;
  /** When the outcome was learned: the answer, or later for an unknown outcome completed under its key. */
  completedAt: string;
  /** The arguments (path, query, body) as JSON text, secrets redacted. */
  args: string;
  /**
   * The answer was an earlier call's, replayed under the same Idempotency-Key by its ledger: nothing was sent or
   * changed again.
   */
  replayed: boolean;
}

/** What the edge sends the trail of one answered call (the trail adds the id and when it recorded it). */
export interface AuditRow extends Omit<AuditEvent, 'id' | 'completedAt'> {
  /** The row's own id: a batch sent twice stores it once. */
  uid: string;
}

/** The name of an organization's audit object. */
export const auditName = (organizationId: string) => `audit:${organizationId.toLowerCase()}`;
export const MAX_PAGE = AUDIT_PAGE_MAX;

/** What a page is filtered by (every field optional); `after` is the id the previous page ended with. */
export interface AuditFilter {
  fromMs?: number;
  toMs?: number;
  clientId?: string;
  operation?: string;
  platform?: string;
  outcome?: AuditOutcome;
}

export interface AuditPage {
  events: AuditEvent[];
  /** The id to ask the next page after; null when this page is the last. */
  next: number | null;
}

export const REDACTED = '[redacted]';
export const MAX_ARGS_CHARS = 8192;
const SECRET_NAME = /password|secret|token|apikey|privatekey|pass$/i;

/**
 * A member that holds a secret: a credential field of the records (SECRET_FIELDS, the fields never answered), whatever
 * its value, or a text member named like one.
 */
const isSecret = (name: string, value: unknown) =>
  value !== null &&
  value !== undefined &&
  (SECRET_FIELDS.has(name) || (SECRET_NAME.test(name) && typeof value === 'string'));

/** The arguments as stored: secrets replaced by `[redacted]`, at most MAX_ARGS_CHARS characters. */
export function redactedArgs(entry: Pick<Operation, 'secretBody'>, args: Record<string, unknown>): string {
  const copy = redact(args) as Record<string, unknown>;
  if (entry.secretBody && 'body' in copy) copy.body = REDACTED;
  const text = stringifyJson(copy);
  return text.length <= MAX_ARGS_CHARS
    ? text
    : `${text.slice(0, MAX_ARGS_CHARS)}… (${text.length - MAX_ARGS_CHARS} more characters not kept)`;
}

/** A copy with every member whose name is a secret's redacted, walked with an explicit stack (any depth). */
function redact(value: unknown): unknown {
  const root = { value: clone(value) };
  const stack: unknown[] = [root.value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      node.forEach((item, i) => {
        node[i] = clone(item);
        stack.push(node[i]);
      });
    } else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      for (const name of Object.keys(record)) {
        if (isSecret(name, record[name])) record[name] = REDACTED;
        else {
          record[name] = clone(record[name]);
          stack.push(record[name]);
        }
      }
    }
  }
  return root.value;
}

/** A shallow copy of an object or array (its members are copied as the walk reaches them); other values as they are. */
const clone = (value: unknown): unknown =>
  Array.isArray(value) ? [...(value as unknown[])] : value !== null && typeof value === 'object' ? { ...value } : value;

/**
 * The outcome of an answer: `outcome` is what the route set for the access log (`ok` or the error code), `unknown`
 * whether the answer said `X-Request-Outcome: unknown`.
 */
export function outcomeOf(outcome: string, unknown: boolean): Pick<AuditEvent, 'outcome' | 'code'> {
  if (unknown) return { outcome: 'unknown', code: outcome === 'ok' ? null : outcome };
  return outcome === 'ok' ? { outcome: 'applied', code: null } : { outcome: 'refused', code: outcome };
}

/** The fields of AuditEvent in order: the CSV export's columns and the published record's. */
export const AUDIT_EVENT_FIELDS = [
  'id',
  'at',
  'organizationId',
  'clientId',
  'address',
  'operation',
  'platform',
  'traceId',
  'idempotencyKey',
  'outcome',
  'code',
  'completedAt',
  'args',
  'replayed',
] as const satisfies ReadonlyArray<keyof AuditEvent>;

export const CSV_HEADER = `${AUDIT_EVENT_FIELDS.join(',')}\r\n`;

/**
 * One row as a CSV line (RFC 4180: CRLF line ends, a field holding a comma, a quote or a line break quoted, quotes
 * doubled; null as an empty field). A field a spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`,
 * a tab or a carriage return: a caller's own idempotency key, say) is written with a leading `'`, so opening the export
 * runs nothing.
 */
export function csvLine(event: AuditEvent): string {
  return `${AUDIT_EVENT_FIELDS.map((column) => csvField(event[column])).join(',')}\r\n`;
}

function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
