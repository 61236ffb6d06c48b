/**
 * The records rule ("Change events", docs/manager-protocol.md; the AsyncAPI document): every snapshot record and every
 * change event the suite received on any of its connections by the end of the run is valid against the protocol's
 * schemas (`shared/protocol.ts`): a snapshot item against its kind's record (`CHANGE_EVENTS`, as `resyncChunkOf`
 * checks it), a change event against its kind's and op's message (`changeEventSchema`), and both against the same
 * message of the AsyncAPI document (`shared/protocolAsyncApi.ts`), whose contract records are the contract's
 * components. As the document says, members beyond a record's are allowed (a server's own fields, which the broker
 * drops); missing required members, wrong types and out-of-range values are not.
 *
 * Invariants: a record is reported once, whichever connection carried it (the same record in every snapshot is one
 * problem); each problem names the kind, the op (events), the record's key, the path within the record and what is
 * wrong; chunks of kinds the family has no snapshot of are left to `snapshot.kinds`.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { z } from 'zod';
import {
  CHANGE_EVENTS,
  changeEventSchema,
  resyncChunkOf,
  type ChangeKind,
  type Family,
  type ManagerEvent,
} from '../../../shared/protocol.js';
import { managerProtocolAsyncApi, messageKey } from '../../../shared/protocolAsyncApi.js';
import { isEventFrame, show, type ProbeConnection } from '../connection.js';
import { failed, passed, type Rule } from '../context.js';
import { KEY_FIELDS } from '../families.js';
import { joined } from './expect.js';

// The protocol's JSON Schemas are read as the untyped JSON they are, by the members this rule knows.
/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access -- see above */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type Json = Record<string, any>;

/** The AsyncAPI document's components, compiled once on first use. */
let documentAjv: Ajv | undefined;
function ajv(): Ajv {
  if (documentAjv) return documentAjv;
  const doc = managerProtocolAsyncApi();
  const out = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => void)(out);
  for (const format of ['int32', 'int64', 'double', 'float', 'byte']) out.addFormat(format, true);
  out.addSchema({ components: doc.components }, 'asyncapi');
  documentAjv = out;
  return out;
}

/** The document's schema of one snapshot record of `kind`: the items of its branch of the family's chunk message. */
function snapshotRecordValidator(family: Family, kind: ChangeKind): ValidateFunction {
  const a = ajv();
  const chunk = a.getSchema(`asyncapi#/components/messages/resyncChunk${family}/payload/properties/record`)!
    .schema as Json;
  const branch = (chunk.oneOf ?? chunk.anyOf ?? []).findIndex((b: Json) => b.properties?.kind?.const === kind);
  if (branch < 0) throw new Error(`the document's ${family} chunk has no ${kind} branch`);
  return a.getSchema(
    `asyncapi#/components/messages/resyncChunk${family}/payload/properties/record/oneOf/${branch}/properties/items/items`,
  )!;
}

/** The document's schema of a change event frame. */
function eventValidator(family: Family, kind: ChangeKind, group: 'put' | 'delete'): ValidateFunction {
  return ajv().getSchema(`asyncapi#/components/messages/${messageKey(family, kind, group)}/payload`)!;
}

/** A value as JSON Schema sees it: bigints (int64 beyond 2^53 − 1, read exactly) as numbers, for their type only. */
function forJsonSchema(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(forJsonSchema);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, forJsonSchema(v)]));
  }
  return value;
}

const pathText = (path: readonly PropertyKey[]) => (path.length === 0 ? '(the record)' : path.map(String).join('.'));

function zodProblems(schema: z.ZodType, value: unknown, strip: number): string[] {
  const result = schema.safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => `${pathText(issue.path.slice(strip))}: ${issue.message}`);
}

/** The document's errors, one per path (the first: a nullable member's "must be null" and anyOf's summary add nothing). */
function ajvProblems(validate: ValidateFunction, value: unknown, strip: number): string[] {
  if (validate(forJsonSchema(value))) return [];
  const byPath = new Map<string, string>();
  for (const e of validate.errors ?? []) {
    const path = e.instancePath.split('/').slice(1 + strip);
    if (e.keyword === 'required') path.push(String((e.params as { missingProperty: string }).missingProperty));
    const at = pathText(path);
    if (byPath.has(at)) continue;
    const allowed = e.keyword === 'enum' ? ` ${show((e.params as { allowedValues: unknown }).allowedValues, 80)}` : '';
    byPath.set(at, `${at}: ${e.message ?? e.keyword}${allowed}`);
  }
  return [...byPath.values()];
}

/** What is wrong with one record: zod's issues first (the protocol's records), else the document's (the contract's). */
function problemsOf(zodCheck: () => string[], documentCheck: () => string[]): string[] {
  const fromZod = zodCheck();
  return (fromZod.length ? fromZod : documentCheck()).filter((p, i, all) => all.indexOf(p) === i);
}

function keyText(family: Family, kind: ChangeKind, record: unknown): string {
  const field = KEY_FIELDS[family][kind];
  if (!field || typeof record !== 'object' || record === null) return '';
  return field in record ? ` ${field} ${show((record as Json)[field], 60)}` : ` without ${field}`;
}

export interface RecordCheck {
  snapshotRecords: number;
  events: number;
  /** One line per invalid record, in arrival order. */
  problems: string[];
}

/** Checks every snapshot record and change event of `connections` (frames in arrival order) for `family`. */
export function checkRecords(family: Family, connections: readonly ProbeConnection[]): RecordCheck {
  const out: RecordCheck = { snapshotRecords: 0, events: 0, problems: [] };
  const seen = new Set<string>();
  const note = (text: string, problems: string[]) => {
    if (problems.length === 0) return;
    const line = `${text}: ${problems.slice(0, 3).join(', ')}${problems.length > 3 ? ` (${problems.length - 3} more)` : ''}`;
    if (!seen.has(line)) {
      seen.add(line);
      out.problems.push(line);
    }
  };
  const specs = CHANGE_EVENTS[family];
  for (const connection of connections) {
    for (const frame of connection.frames) {
      if (!isEventFrame(frame.value)) continue;
      const event = frame.value as ManagerEvent;
      if (event.event === 'resync') {
        if (event.op !== 'chunk') continue;
        const chunk = event.record as { kind?: unknown; items?: unknown } | null;
        const kind = chunk?.kind as ChangeKind;
        if (!specs[kind]?.snapshot || !Array.isArray(chunk?.items)) continue;
        const record = resyncChunkOf(family, kind).shape.items.element;
        const validate = snapshotRecordValidator(family, kind);
        for (const item of chunk.items) {
          out.snapshotRecords++;
          note(
            `snapshot ${kind}${keyText(family, kind, item)}`,
            problemsOf(
              () => zodProblems(record, item, 0),
              () => ajvProblems(validate, item, 0),
            ),
          );
        }
        continue;
      }
      out.events++;
      const kind = event.event;
      const spec = specs[kind];
      const what = `a ${String(event.event)} ${String(event.op)} event${keyText(family, kind, event.record)}`;
      if (!spec) {
        note(what, [`${family} servers push no ${String(event.event)} events`]);
        continue;
      }
      const group = event.op === 'delete' ? 'delete' : 'put';
      if (!spec.ops.some((op) => (group === 'delete') === (op === 'delete'))) {
        note(what, [`op: ${family} ${kind} events are ${spec.ops.join(', ')}`]);
        continue;
      }
      const frameValue = { event: event.event, op: event.op, record: event.record };
      // Paths inside the record are named without the frame's `record.`; a wrong op is named `op`.
      const relative = (problems: string[]) =>
        problems.map((p) => p.replace(/^record\./, '').replace(/^record: /, '(the record): '));
      note(
        what,
        problemsOf(
          () => relative(zodProblems(changeEventSchema(family, kind, group), frameValue, 0)),
          () => relative(ajvProblems(eventValidator(family, kind, group), frameValue, 0)),
        ),
      );
    }
  }
  return out;
}

export const recordRules: Rule[] = [
  {
    id: 'records.schema',
    name: "every snapshot record and change event of the run is valid against the protocol's schemas (own fields allowed)",
    timeoutMs: (t) => t.snapshotMs,
    run(ctx) {
      const family = ctx.requireFamily();
      ctx.requireMain();
      const { snapshotRecords, events, problems } = checkRecords(family, ctx.observer.connections);
      const counted = `${snapshotRecords} snapshot records and ${events} change events`;
      if (problems.length) return failed(`${problems.length} invalid of ${counted}: ${joined(problems, 3)}`);
      return passed(`${counted} valid`);
    },
  },
];
