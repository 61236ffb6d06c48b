import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  CHANGE_EVENTS,
  CHANGE_OPS,
  CLOSE_CODES,
  changeEventSchema,
  changeKindsOf,
  EVENT_KINDS,
  FAMILIES,
  INT64_TEXT,
  capabilitiesSchema,
  loginArgsSchema,
  loginResultSchema,
  managerAnswerSchema,
  managerRequestSchema,
  RESYNC_OPS,
  resyncChunkOf,
  type ChangeKind,
  type EventKind,
  type EventOp,
  type ManagerAnswer,
  type ManagerEvent,
  type ManagerRequest,
  type ResyncChunk,
} from './protocol.js';
import {
  ASYNCAPI_FILE,
  managerProtocolAsyncApi,
  managerProtocolAsyncApiText,
  messageKey,
  protocolDocSections,
} from './protocolAsyncApi.js';
import { openapiComponents } from './records/contract.js';

type Json = Record<string, any>;
const root = resolve(import.meta.dirname, '..');
const committed = readFileSync(resolve(root, ASYNCAPI_FILE), 'utf8');
const prose = readFileSync(resolve(root, 'docs/manager-protocol.md'), 'utf8');
const doc: Json = managerProtocolAsyncApi();

/** One parser for the file: making one loads its rule sets, and a parse of the document takes seconds. */
const parser = new Parser();
type Diagnostics = Awaited<ReturnType<Parser['parse']>>['diagnostics'];

/** The diagnostics of severity error, as `code path: message`. */
const errorsOf = (diagnostics: Diagnostics): string[] =>
  diagnostics
    .filter((d) => Number(d.severity) === Number(DiagnosticSeverity.Error))
    .map((d) => `${d.code} ${d.path.join('.')}: ${d.message}`);

/** The AsyncAPI parser's errors for `text`. */
async function parserErrors(text: string): Promise<string[]> {
  return errorsOf((await parser.parse(text)).diagnostics);
}

/** Every `$ref` in `node`. */
function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else refs(value, out);
    }
  }
  return out;
}

/** The rows of the markdown table that follows `heading` (a line of the document), first column to last. */
function tableAfter(heading: string): string[][] {
  const lines = prose.split('\n');
  const at = lines.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const start = lines.findIndex((line, i) => i > at && line.startsWith('|'));
  const rows: string[][] = [];
  for (let i = start + 2; lines[i]?.startsWith('|'); i++)
    rows.push(lines[i].split(' | ').map((c) => c.replace(/^\| ?| ?\|$/g, '')));
  return rows;
}

describe('docs/manager-protocol.asyncapi.json', () => {
  it("is what the protocol's schemas make now (npm run gen:asyncapi writes it)", () => {
    expect(committed).toBe(managerProtocolAsyncApiText());
  });

  it('parses as an AsyncAPI 3.0.0 document without errors', async () => {
    const { document, diagnostics } = await parser.parse(committed);
    expect(errorsOf(diagnostics)).toEqual([]);
    expect(document!.version()).toBe('3.0.0');
    expect(
      document!
        .servers()
        .all()
        .map((s) => [s.id(), s.protocol(), s.pathname()]),
    ).toEqual([['tradingServer', 'ws', '/{server}']]);
    expect(
      document!
        .operations()
        .all()
        .map((o) => `${o.action()} ${o.id()}`),
    ).toEqual([
      'receive receiveLogin',
      'receive receivePing',
      'receive receiveCommand',
      'send sendResync',
      'send sendPF4Changes',
      'send sendPF5Changes',
    ]);
    const login = document!.operations().get('receiveLogin')!;
    expect(
      login
        .reply()!
        .messages()
        .all()
        .map((m) => m.id()),
    ).toEqual(['loginAnswer', 'errorAnswer']);
  }, 60_000);

  it('is refused by the parser when broken, so the check above can fail', async () => {
    const broken = JSON.parse(committed) as Json;
    broken.operations.receivePing.action = 'publish';
    delete broken.components.schemas.PF4User;
    const errors = await parserErrors(JSON.stringify(broken));
    expect(errors.some((e) => e.includes('operations.receivePing.action'))).toBe(true);
    expect(errors.some((e) => e.includes('PF4User'))).toBe(true);
  }, 60_000);

  it('resolves every reference inside itself and holds each contract record as the contract has it, members beyond it allowed', () => {
    for (const ref of refs(doc)) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce((at: any, part) => at?.[part], doc);
      expect(target, ref).toBeDefined();
    }
    const contract = openapiComponents as Record<string, Json>;
    const user = doc.components.schemas.PF4User;
    expect(Object.keys(user.properties)).toEqual(Object.keys(contract.PF4User.properties));
    expect(contract.PF4User.additionalProperties).toBe(false);
    expect(user).not.toHaveProperty('additionalProperties');
    expect(doc.components.schemas.PF5Deal.properties.deal).toEqual({
      type: 'integer',
      format: 'int64',
      description: INT64_TEXT,
    });
  });

  it('says of every int64 that it travels as bare digits beyond 2^53 − 1', () => {
    const int64s: Json[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        if ((node as Json).format === 'int64') int64s.push(node);
        Object.values(node).forEach(walk);
      }
    };
    walk(doc);
    expect(int64s.length).toBeGreaterThan(10);
    for (const node of int64s) expect(node.description).toContain('beyond 2^53 − 1 it travels as bare digits');
    expect(doc.info.description).toContain(
      'int64 values (PF5 logins, tickets, deal, order and position ids) travel as bare digits beyond 2^53 − 1',
    );
  });

  it('has a message per family, change kind and op group with the ops and the record of CHANGE_EVENTS', () => {
    const messages = doc.components.messages as Record<string, { payload: Json }>;
    for (const family of FAMILIES) {
      const sent = doc.operations[`send${family}Changes`].messages.map((m: Json) => m.$ref.split('/').pop());
      const expected: string[] = [];
      for (const kind of changeKindsOf(family)) {
        const spec = CHANGE_EVENTS[family][kind]!;
        const put = spec.ops.filter((op) => op !== 'delete');
        if (put.length) {
          expected.push(messageKey(family, kind, 'put'));
          const payload = messages[messageKey(family, kind, 'put')].payload;
          expect(payload.properties.event).toEqual({ type: 'string', const: kind });
          expect(put.length === 1 ? [payload.properties.op.const] : payload.properties.op.enum).toEqual(put);
        }
        if (spec.ops.includes('delete')) {
          expected.push(messageKey(family, kind, 'delete'));
          expect(messages[messageKey(family, kind, 'delete')].payload.properties.op).toEqual({
            type: 'string',
            const: 'delete',
          });
        }
      }
      expect(sent).toEqual(expected);
    }
    expect(messages.pf4UsersPut.payload.properties.record).toEqual({ $ref: '#/components/schemas/PF4User' });
    expect(messages.pf5PositionsDelete.payload.properties.record).toEqual({
      $ref: '#/components/schemas/PF5PositionKey',
    });
    const chunks = messages.resyncChunkPF4.payload.properties.record.oneOf.map((c: Json) => c.properties.kind.const);
    expect(chunks).toEqual(changeKindsOf('PF4').filter((k) => CHANGE_EVENTS.PF4[k]!.snapshot));
  });

  it('names the close codes of CLOSE_CODES', () => {
    const listed = doc.channels.managerSession['x-close-codes'];
    expect(Object.keys(listed).map(Number)).toEqual(Object.values(CLOSE_CODES));
    expect(listed['1013'].name).toBe('tooSlow');
  });
});

describe("the protocol's schemas", () => {
  it('are the frame types the code uses', () => {
    expectTypeOf<ManagerRequest>().toEqualTypeOf<{ id: number; cmd: string; args?: Record<string, unknown> }>();
    expectTypeOf<ManagerAnswer>().toEqualTypeOf<
      { id: number; result: unknown } | { id: number; error: { code: number; message: string } }
    >();
    expectTypeOf<ManagerEvent>().toEqualTypeOf<{ event: EventKind; op: EventOp; record: unknown }>();
    expectTypeOf<ResyncChunk>().toEqualTypeOf<{ kind: ChangeKind; items: unknown[] }>();
    expectTypeOf<EventOp>().toEqualTypeOf<'add' | 'update' | 'delete' | 'begin' | 'chunk' | 'end'>();
    expect(EVENT_KINDS.at(-1)).toBe('resync');
  });

  it('read a frame with both result and error as the error', () => {
    expect(managerAnswerSchema.parse({ id: 4, result: 1, error: { code: 3, message: 'no' } })).toEqual({
      id: 4,
      error: { code: 3, message: 'no' },
    });
    expect(managerAnswerSchema.parse({ id: 4, result: null })).toEqual({ id: 4, result: null });
    expect(managerAnswerSchema.safeParse({ id: 0, result: 1 }).success).toBe(false);
  });

  it("check a change event's op and its record's key, int64 keys beyond 2^53 − 1 included", () => {
    const deleted = changeEventSchema('PF5', 'positions', 'delete');
    expect(deleted.parse({ event: 'positions', op: 'delete', record: { position: 2n ** 60n } }).record).toEqual({
      position: 2n ** 60n,
    });
    const wrong = deleted.safeParse({ event: 'positions', op: 'delete', record: { position: 1.5 } });
    expect(wrong.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'record.position: must be a 64-bit integer, written in digits',
    ]);
    expect(
      changeEventSchema('PF5', 'positions', 'put').safeParse({ event: 'positions', op: 'delete', record: {} }).success,
    ).toBe(false);
    expect(
      changeEventSchema('PF4', 'users', 'put').safeParse({ event: 'users', op: 'add', record: [1] }).error?.issues[0]
        .message,
    ).toBe('must be a PF4User record (a JSON object)');
    expect(() => changeEventSchema('PF5', 'users', 'delete')).toThrow('PF5 users events have no delete');
    expect(() => resyncChunkOf('PF5', 'margin')).toThrow('the PF5 snapshot has no margin');
  });

  it('give every delete the record its kind is deleted by', () => {
    for (const family of FAMILIES) {
      for (const kind of changeKindsOf(family)) {
        const spec = CHANGE_EVENTS[family][kind]!;
        expect(spec.ops.includes('delete'), `${family} ${kind}`).toBe(spec.deleted !== undefined);
        expect([...spec.ops].sort(), `${family} ${kind}`).toEqual(
          CHANGE_OPS.filter((op) => spec.ops.includes(op)).sort(),
        );
      }
    }
  });
});

describe('docs/manager-protocol.md agrees with the schemas and the document', () => {
  it("has the generated tables of the frames, the login's records and the change events as the schemas make them", () => {
    for (const [name, text] of protocolDocSections())
      expect(prose).toContain(`<!-- generated: ${name} -->\n${text}\n<!-- end generated -->`);
    const login = tableAfter('<!-- generated: login-fields -->');
    expect(login.filter((r) => r[0] === '`LoginArgs`').map((r) => r[1])).toEqual(
      Object.keys(loginArgsSchema.shape).map((f) => `\`${f}\``),
    );
    expect(login.filter((r) => r[0] === '`LoginResult`').map((r) => r[1])).toEqual(
      Object.keys(loginResultSchema.shape).map((f) => `\`${f}\``),
    );
    const events = tableAfter('<!-- generated: change-events -->');
    expect(events.map((r) => `${r[0]} ${r[1]} ${r[2]}`)).toEqual(
      FAMILIES.flatMap((f) => changeKindsOf(f).map((k) => `${f} \`${k}\` ${CHANGE_EVENTS[f][k]!.ops.join(', ')}`)),
    );
  });

  it("names in the Login section's table of what the broker checks every field of LoginResult, and its example is a login", () => {
    const lines = prose.split('\n');
    const header = lines.indexOf('| field | what the broker does with it |');
    expect(header).toBeGreaterThan(lines.indexOf('## Login'));
    const fields: string[] = [];
    for (let i = header + 2; lines[i]?.startsWith('|'); i++) fields.push(/^\| `([A-Za-z.]+)` \|/.exec(lines[i])![1]);
    expect(fields).toEqual(
      Object.keys(loginResultSchema.shape).flatMap((f) =>
        f === 'capabilities' ? Object.keys(capabilitiesSchema.shape).map((c) => `${f}.${c}`) : [f],
      ),
    );
    const example = /\n(\{"id": 1, "cmd": "login", .*\})\n/.exec(prose.slice(prose.indexOf('## Login')))![1];
    const request = managerRequestSchema.parse(JSON.parse(example));
    expect(loginArgsSchema.parse(request.args)).toMatchObject({ pump: true, versions: [1] });
  });

  it("gives the change events' ops and the snapshot's ops as the schemas have them", () => {
    const change = /`\{event: <kind>, op: ((?:"[a-z]+"(?: \| )?)+), record\}`/.exec(prose);
    expect(change?.[1].split(' | ').map((op) => op.replaceAll('"', ''))).toEqual([...CHANGE_OPS]);
    const snapshot = [...prose.matchAll(/\{"event": "resync", "op": "([a-z]+)",/g)].map((m) => m[1]);
    expect(snapshot).toEqual([...RESYNC_OPS]);
  });

  it('lists the close codes of CLOSE_CODES and of the document', () => {
    const codes = tableAfter('### Close codes').map((r) => Number(r[0]));
    expect(codes).toEqual(Object.values(CLOSE_CODES));
    expect(codes.map(String)).toEqual(Object.keys(doc.channels.managerSession['x-close-codes']));
  });

  it('names the AsyncAPI document and how it is written', () => {
    expect(prose).toContain(
      '[`manager-protocol.asyncapi.json`](manager-protocol.asyncapi.json) is this protocol as an\nAsyncAPI 3.0 document, written by `npm run gen:asyncapi`',
    );
  });
});
