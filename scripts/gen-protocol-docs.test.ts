import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KINDS } from '../broker/cache/pumpCache.js';
import { customHandlers } from '../broker/handlers/custom/index.js';
import { CUSTOM_HANDLER_COMMANDS } from '../broker/handlers/custom/commands.js';
import { useOf } from '../broker/handlers/needs.js';
import { familyOf } from '../broker/handlers/registry.js';
import { catalog } from '../shared/catalog/index.js';
import { FAMILIES, type Family } from '../shared/protocol.js';
import { PF4_RIGHTS } from '../sim/pf4/pf4Rights.js';
import { PF5_RIGHTS } from '../sim/pf5/pf5Commands.js';
import {
  ARGUMENT_RIGHTS,
  generatedSections,
  PROTOCOL_DOC,
  rewriteGenerated,
  rightOf,
  simulatorAnswers,
} from './gen-protocol-docs.js';

/** What the generator makes now, made once for the file (it builds small worlds of both families). */
const sections = generatedSections();

describe('docs/manager-protocol.md', () => {
  it('has every generated section as the code makes it now (npm run gen:protocol-docs rewrites them)', () => {
    const doc = readFileSync(PROTOCOL_DOC, 'utf8');
    expect([...sections.keys()]).toEqual([
      'result-codes',
      'snapshot-PF4',
      'snapshot-PF5',
      'operations-common',
      'operations-PF4',
      'operations-PF5',
      'frames',
      'login-fields',
      'change-events',
    ]);
    expect(doc).toBe(rewriteGenerated(doc, sections));
  });

  it("lists the result codes by number with both families' names and the broker's reading of them", () => {
    const table = sections.get('result-codes')!;
    expect(table).toContain(
      '| 3 | `InvalidData` | `ErrParams` | PF4: not found (a keyed read), wrong password (password checks) |',
    );
    expect(table).toContain('| 13 |  | `ErrNotfound` | PF5: not found |');
    expect(table).toContain('| 18 |  | `ErrNotMain` |  |');
    expect(table).toContain('| 255 | `UnhandledException` |  |  |');
  });

  it("gives the snapshot kinds in the simulator's order with the key the broker deletes by", () => {
    const pf5 = sections.get('snapshot-PF5')!.split('\n').slice(2);
    expect(pf5.map((line) => line.split(' | ')[1])).toEqual([
      '`users`',
      '`positions`',
      '`orders`',
      '`deals`',
      '`ticks`',
      '`symbols`',
      '`groups`',
    ]);
    expect(sections.get('snapshot-PF4')).toContain('| 6 | `margin` | `margins` | `login` | `PF4MarginLevel` |');
  });

  it("names each operation's commands with the simulator's rights, and its cache tables", () => {
    const pf4 = sections.get('operations-PF4')!;
    expect(pf4).toContain('| `UserRecordUpdate` | v2 | replace | `UserRecordRequest`, `UserRecordUpdate` (manager) |');
    expect(pf4).toContain('| `UserRecordGet` | v2, v1 | cachedRecord | cache `users` |');
    expect(pf4).toContain('| `ReportsRequest` | v2 | live | `ReportsRequest` (reports ✂) |');
    expect(pf4).toContain('`TradeRecordRequest`, `TradeTransaction` (trades; money for a balance or credit entry)');
    expect(sections.get('operations-PF5')).toContain(
      '| `DealUpdate` | v1 | replace | `DealRequestByTicket`, `DealUpdate` (TradesManager) |',
    );
  });
});

describe('the generator', () => {
  const doc = [
    '# t',
    '<!-- generated: a -->',
    'old',
    '<!-- end generated -->',
    'prose',
    '<!-- generated: b -->',
    '<!-- end generated -->',
    '',
  ].join('\n');

  it('rewrites only the text between the markers', () => {
    const out = rewriteGenerated(
      doc,
      new Map([
        ['a', 'A'],
        ['b', 'B1\nB2'],
      ]),
    );
    expect(out).toBe(
      [
        '# t',
        '<!-- generated: a -->',
        'A',
        '<!-- end generated -->',
        'prose',
        '<!-- generated: b -->',
        'B1\nB2',
        '<!-- end generated -->',
        '',
      ].join('\n'),
    );
  });

  it('refuses a marker it makes no section for, a section without a marker and a marker used twice', () => {
    expect(() => rewriteGenerated(doc, new Map([['a', 'A']]))).toThrow(
      'the document has a generated section b that the generator does not make',
    );
    expect(() =>
      rewriteGenerated(
        doc,
        new Map([
          ['a', 'A'],
          ['b', 'B'],
          ['c', 'C'],
        ]),
      ),
    ).toThrow('the document lacks the generated sections c');
    expect(() =>
      rewriteGenerated(
        `${doc}<!-- generated: a -->\n<!-- end generated -->\n`,
        new Map([
          ['a', 'A'],
          ['b', 'B'],
        ]),
      ),
    ).toThrow('the document has the generated section a twice');
  });

  it("takes what the simulator answers from the kit, its driver's own commands and its world", () => {
    const world: Record<Family, string> = { PF4: 'UserRecordsRequest', PF5: 'UserAdd' };
    for (const f of FAMILIES) {
      for (const cmd of ['login', 'Ping', 'ServerTime', world[f]])
        expect(simulatorAnswers(f, cmd), `${f} ${cmd}`).toBe(true);
      expect(simulatorAnswers(f, 'NoSuchCommand')).toBe(false);
    }
    expect([simulatorAnswers('PF4', 'SrvRestart'), simulatorAnswers('PF5', 'SrvRestart')]).toStrictEqual([true, false]);
  });
});

describe("the custom handlers' list (broker/handlers/custom/commands.ts)", () => {
  const customOps = new Set(catalog.filter((e) => e.answer?.kind === 'custom').map((e) => e.op));

  it('lists every hand-written handler and nothing else', () => {
    expect(Object.keys(CUSTOM_HANDLER_COMMANDS).sort()).toEqual([...customHandlers.keys()].sort());
    expect([...customOps].sort()).toEqual([...customHandlers.keys()].sort());
  });

  it("names only commands the handlers' source sends and the simulator answers, and tables the cache keeps", () => {
    const folder = resolve(import.meta.dirname, '../broker/handlers/custom');
    const source = readdirSync(folder)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => readFileSync(join(folder, f), 'utf8'))
      .join('\n');
    for (const [op, use] of Object.entries(CUSTOM_HANDLER_COMMANDS)) {
      const families = familyOf(op) ? [familyOf(op)!] : FAMILIES;
      for (const cmd of use.commands ?? []) {
        expect(source, `${op} sends ${cmd}`).toContain(`'${cmd}'`);
        for (const f of families) expect(simulatorAnswers(f, cmd), `the ${f} simulator answers ${cmd}`).toBe(true);
      }
      for (const table of use.cache ?? [])
        for (const f of families) expect(KINDS[f][table], `${f} cache table ${table}`).toBeDefined();
      expect((use.commands?.length ?? 0) + (use.cache?.length ?? 0), `${op} needs something`).toBeGreaterThan(0);
    }
  });

  it('is what the operations tables use for a custom answer', () => {
    const entry = catalog.find((e) => e.op === 'PF4.TradesRequest')!;
    expect(useOf(entry)).toEqual({ kind: 'custom', ...CUSTOM_HANDLER_COMMANDS['PF4.TradesRequest'], cache: [] });
  });

  it("describes exactly the rights the simulator decides from a command's arguments", () => {
    const byArguments = (['PF4', 'PF5'] as const).flatMap((f) =>
      Object.entries(f === 'PF4' ? PF4_RIGHTS : PF5_RIGHTS)
        .filter(([, needs]) => typeof needs.right === 'function')
        .map(([cmd]) => `${f}.${cmd}`),
    );
    expect(Object.keys(ARGUMENT_RIGHTS).sort()).toEqual(byArguments.sort());
    expect(rightOf('PF4', 'TradeTransaction')).toBe(ARGUMENT_RIGHTS['PF4.TradeTransaction']);
    expect(rightOf('PF4', 'DailyReportsRequest')).toBe('serverReports ✂');
    expect(rightOf('PF5', 'UserRequest')).toBeNull();
  });
});
