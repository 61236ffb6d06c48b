/**
 * `npm run gen:protocol-docs`: rewrites the generated sections of docs/manager-protocol.md, each between
 * `<!-- generated: <name> -->` and `<!-- end generated -->`, from the code they describe: the result codes
 * (`shared/resultCodes.ts`), the snapshot's kinds (the simulator's worlds and the broker's cache tables) and the manager
 * commands each gateway operation needs (the broker's uses of each handler, `broker/handlers/needs.ts`: the catalog's
 * answers and the hand-written handlers' list in `broker/handlers/custom/commands.ts`; the simulator's rights tables). Everything else in the document is prose and is
 * left as it is. `--check` only compares and exits 1 when a section is out of date; a unit test does the same.
 * The frames', the login's records' and the change events' tables come from the protocol's schemas, as the AsyncAPI
 * document states them (`protocolDocSections`, shared/protocolAsyncApi.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KINDS, TABLE_OF_KIND } from '../broker/cache/pumpCache.js';
import { familyOf } from '../broker/handlers/registry.js';
import { useOf } from '../broker/handlers/needs.js';
import { catalog, type Operation } from '../shared/catalog/index.js';
import { FAMILIES, type Family } from '../shared/protocol.js';
import { protocolDocSections } from '../shared/protocolAsyncApi.js';
import {
  NOT_FOUND_CODE,
  PF4_RESULT,
  PF5_RESULT,
  TOO_FREQUENT_CODE,
  WRONG_PASSWORD_CODE,
} from '../shared/resultCodes.js';
import { parseConfig } from '../sim/config/simConfig.js';
import { PF4_RIGHTS } from '../sim/pf4/pf4Rights.js';
import { Pf4World } from '../sim/pf4/pf4World.js';
import { PF5_RIGHTS } from '../sim/pf5/pf5Commands.js';
import { Pf5World } from '../sim/pf5/pf5World.js';
import { SESSION_COMMANDS } from '../sim/protocol/simDriver.js';
import type { CommandNeeds } from '../sim/world/commandRegistry.js';
import type { SimWorld } from '../sim/world/simWorld.js';
import { isEntryModule } from '../shared/entryModule.js';

export const PROTOCOL_DOC = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/manager-protocol.md');

/** Commands the bridge kit answers itself for every server it runs, the simulator's included (`bridge/kit/bridgedServer.ts`). */
const KIT_COMMANDS: ReadonlySet<string> = new Set(['login', 'Ping']);

const RIGHTS: Record<Family, Readonly<Record<string, CommandNeeds>>> = { PF4: PF4_RIGHTS, PF5: PF5_RIGHTS };

/**
 * Rights the simulator decides from a command's arguments (a `RightRule` function in its rights tables), described
 * in words, by `<family>.<command>`: the generator cannot print a function.
 */
export const ARGUMENT_RIGHTS: Readonly<Record<string, string>> = {
  'PF4.TradeTransaction': 'trades; money for a balance or credit entry',
};

/** A small world of each family, built once (no sockets, no timers): its command registry and its snapshot's kinds. */
let worlds: Record<Family, SimWorld> | undefined;
function world(family: Family): SimWorld {
  const config = (f: Family) =>
    parseConfig({
      servers: [
        {
          name: 'docs',
          family: f,
          accounts: 1,
          trades: 0,
          symbols: 1,
          ticksPerSecond: 0,
          managers: [{ login: 1000, password: 'docs' }],
        },
      ],
    }).servers[0];
  worlds ??= { PF4: new Pf4World(config('PF4'), 1, () => {}), PF5: new Pf5World(config('PF5'), 1, () => {}) };
  return worlds[family];
}

/**
 * Whether the simulator of `family` answers `cmd`: the kit's own commands, those its driver answers itself
 * (`SESSION_COMMANDS`, sim/protocol/simDriver.ts) and its world's registry.
 */
export function simulatorAnswers(family: Family, cmd: string): boolean {
  return KIT_COMMANDS.has(cmd) || SESSION_COMMANDS[family].includes(cmd) || world(family).commands().has(cmd);
}

const code = (text: string) => `\`${text}\``;
const cell = (text: string) => text.replaceAll('|', '\\|');
const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// ---- result codes ------------------------------------------------------------------------------------------------

function resultCodes(): string {
  const names: Record<Family, Map<number, string>> = {
    PF4: new Map(Object.entries(PF4_RESULT).map(([name, n]) => [n, name])),
    PF5: new Map(Object.entries(PF5_RESULT).map(([name, n]) => [n, name])),
  };
  const roles = (family: Family, n: number) =>
    [
      NOT_FOUND_CODE[family] === n ? (family === 'PF4' ? 'not found (a keyed read)' : 'not found') : null,
      WRONG_PASSWORD_CODE[family] === n ? 'wrong password (password checks)' : null,
      TOO_FREQUENT_CODE[family] === n ? 'too frequent (the broker answers it itself)' : null,
    ].filter((r): r is string => r !== null);
  const numbers = [...new Set([...names.PF4.keys(), ...names.PF5.keys()])].sort((a, b) => a - b);
  const lines = ['| code | PF4 | PF5 | the broker reads it as |', '|---:|---|---|---|'];
  for (const n of numbers) {
    const use = FAMILIES.filter((f) => roles(f, n).length)
      .map((f) => `${f}: ${roles(f, n).join(', ')}`)
      .join('; ');
    lines.push(
      `| ${n} | ${names.PF4.has(n) ? code(names.PF4.get(n)!) : ''} | ${names.PF5.has(n) ? code(names.PF5.get(n)!) : ''} | ${use} |`,
    );
  }
  return lines.join('\n');
}

// ---- snapshot ----------------------------------------------------------------------------------------------------

function tableOfKind(family: Family, kind: string): string {
  const table = TABLE_OF_KIND[kind] ?? kind;
  if (!KINDS[family][table]) throw new Error(`the ${family} snapshot kind ${kind} has no broker cache table ${table}`);
  return table;
}

function snapshotKinds(family: Family): string {
  const lines = ['| # | kind | broker table | key field | kept as |', '|---:|---|---|---|---|'];
  world(family)
    .snapshot()
    .forEach((part, i) => {
      const table = tableOfKind(family, part.kind);
      const spec = KINDS[family][table];
      const keptAs = spec.schema ? code(spec.schema) : spec.shape ? 'its own fields' : 'as sent';
      lines.push(`| ${i + 1} | ${code(part.kind)} | ${code(table)} | ${code(spec.key)} | ${keptAs} |`);
    });
  return lines.join('\n');
}

// ---- operations --------------------------------------------------------------------------------------------------

/** The right the simulator of `family` requires for `cmd`, in words, or null when a logged-in manager is enough. */
export function rightOf(family: Family, cmd: string): string | null {
  const needs = RIGHTS[family][cmd];
  if (!needs?.right) return null;
  const right = typeof needs.right === 'function' ? ARGUMENT_RIGHTS[`${family}.${cmd}`] : needs.right;
  if (right === undefined)
    throw new Error(`${family} ${cmd}: its right depends on its arguments; describe it in ARGUMENT_RIGHTS`);
  return needs.dropWithoutRight ? `${right} ✂` : right;
}

function commandCell(families: readonly Family[], cmd: string): string {
  for (const f of families) {
    if (!simulatorAnswers(f, cmd)) throw new Error(`the ${f} simulator does not answer ${cmd}, which the broker sends`);
  }
  const rights = [...new Set(families.map((f) => rightOf(f, cmd)))];
  const right = rights.length === 1 ? rights[0] : families.map((f) => `${f} ${rightOf(f, cmd) ?? 'none'}`).join(', ');
  return right ? `${code(cmd)} (${right})` : code(cmd);
}

function operations(family: Family | null): string {
  const byOp = new Map<string, Operation[]>();
  for (const entry of catalog) {
    if (entry.read === 'local' || familyOf(entry.op) !== family) continue;
    const list = byOp.get(entry.op);
    if (list) list.push(entry);
    else byOp.set(entry.op, [entry]);
  }
  const families = family ? [family] : FAMILIES;
  const rows = [...byOp].map(([op, entries]) => {
    const name = family ? op.slice(family.length + 1) : op;
    const last = name.split('.').pop()!;
    const routes = [...new Set(entries.map((e) => (e.name === last ? e.generation : `${e.generation} ${e.name}`)))];
    // The handler is the first entry's (broker/handlers/registry.ts builds one per op).
    const use = useOf(entries[0]);
    for (const table of use.cache) {
      for (const f of families)
        if (!KINDS[f][table]) throw new Error(`${op} reads the cache table ${table}, which ${f} has not`);
    }
    const needs = [
      ...use.commands.map((cmd) => commandCell(families, cmd)),
      ...(use.cache.length ? [`cache ${use.cache.map(code).join(', ')}`] : []),
    ].join(', ');
    return {
      name,
      line: `| ${code(name)} | ${routes.join(', ')} | ${use.kind} | ${cell(needs)}${use.note ? cell(`; ${use.note}`) : ''} |`,
    };
  });
  rows.sort((a, b) => ordinal(a.name, b.name));
  return [
    '| operation | routes | answer | needs (simulator right) |',
    '|---|---|---|---|',
    ...rows.map((r) => r.line),
  ].join('\n');
}

// ---- the document ------------------------------------------------------------------------------------------------

/** Every generated section by its marker name, as the code makes it now. */
export function generatedSections(): Map<string, string> {
  return new Map([
    ['result-codes', resultCodes()],
    ['snapshot-PF4', snapshotKinds('PF4')],
    ['snapshot-PF5', snapshotKinds('PF5')],
    ['operations-common', operations(null)],
    ['operations-PF4', operations('PF4')],
    ['operations-PF5', operations('PF5')],
    // The frames, the login's records and the change events, from the protocol's schemas (as the AsyncAPI document).
    ...protocolDocSections(),
  ]);
}

const SECTION = /<!-- generated: ([A-Za-z0-9-]+) -->\n[\s\S]*?<!-- end generated -->/g;

/**
 * `doc` with each generated section's body replaced by `sections`' text. Refuses a marker it has no section for, a
 * section the document has no marker for, and a marker used twice.
 */
export function rewriteGenerated(doc: string, sections: ReadonlyMap<string, string>): string {
  const seen = new Set<string>();
  const out = doc.replace(SECTION, (_whole, name: string) => {
    const text = sections.get(name);
    if (text === undefined)
      throw new Error(`the document has a generated section ${name} that the generator does not make`);
    if (seen.has(name)) throw new Error(`the document has the generated section ${name} twice`);
    seen.add(name);
    return `<!-- generated: ${name} -->\n${text}\n<!-- end generated -->`;
  });
  const missing = [...sections.keys()].filter((name) => !seen.has(name));
  if (missing.length)
    throw new Error(
      `the document lacks the generated sections ${missing.join(', ')} (<!-- generated: <name> --> … <!-- end generated -->)`,
    );
  return out;
}

function main(args: readonly string[]): void {
  const file = relative(process.cwd(), PROTOCOL_DOC);
  const current = readFileSync(PROTOCOL_DOC, 'utf8');
  const next = rewriteGenerated(current, generatedSections());
  if (args.includes('--check')) {
    if (next !== current) {
      console.error(`${file} is out of date with the code: run npm run gen:protocol-docs`);
      process.exit(1);
    }
    console.log(`${file} is up to date`);
    return;
  }
  if (next === current) {
    console.log(`${file} is up to date`);
    return;
  }
  writeFileSync(PROTOCOL_DOC, next);
  console.log(`rewrote the generated sections of ${file}`);
}

if (isEntryModule(import.meta.url)) main(process.argv.slice(2));
