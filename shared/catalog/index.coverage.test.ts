/**
 * The v2 surface against the contract: every operation of the contract (the service spec's 159, its `inSeed` ones,
 * and the 13 extension operations clients of the reference product call) has a catalog entry with the contract's method, path, parameters and response, a broker handler, and an end-to-end test
 * under test/e2e/v2 that calls it by its catalog id.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catalog, type Operation } from './index.js';
import { contractOperations, type ContractOperation } from '../records/contractOperations.js';
import { openapiComponents } from '../records/contract.js';
import { handlers } from '../../broker/handlers/registry.js';

const spec = contractOperations;
const extensions = contractOperations.filter((o) => !o.inSeed);
const v2 = catalog.filter((e) => e.generation === 'v2');
const shapeOf = (path: string) => path.replace(/\{\w+\}/g, '{}');
/** Bodies the service spec names that the contract leaves undeclared (ExternalCommandJSON: "body any JSON"). */
const SPEC_BODIES = new Set(['POST /api/v2/PF4/{tradePlatform}/ExternalCommandJSON']);
/**
 * Parameters an operation takes beyond the contract's: v2 lists gain `limit` and `cursor` paging (the spec's rule 11),
 * and the list of mails, unpaged in the contract, is one whose bodies can pass the bound on one answer.
 */
const EXTRA_PARAMETERS = new Map([['GET /api/v2/PF4/{tradePlatform}/MailsRequest', ['cursor', 'limit']]]);
const entryFor = (o: ContractOperation) => v2.find((e) => e.method === o.method && shapeOf(e.path) === shapeOf(o.path));

const e2eDir = join(import.meta.dirname, '../../test/e2e/v2');
const e2eSource = readdirSync(e2eDir)
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => readFileSync(join(e2eDir, f), 'utf8'))
  .join('\n');

/** The data schema of a contract envelope (`PF4UserApiResponse` → its `data`), nullability aside. */
function envelopeData(name: string): Record<string, any> {
  const data = (openapiComponents as Record<string, any>)[name]?.properties?.data;
  if (!data) throw new Error(`no envelope ${name}`);
  if (data.anyOf) return data.anyOf.find((s: any) => s.type !== 'null');
  const type = Array.isArray(data.type) ? data.type.find((t: string) => t !== 'null') : data.type;
  return { ...data, type };
}

function responseMatches(entry: Operation, envelope: string): boolean {
  const data = envelopeData(envelope);
  const r = entry.response;
  if (typeof r === 'string') {
    if (r.endsWith('[]')) return data.type === 'array' && data.items?.$ref?.endsWith(`/${r.slice(0, -2)}`);
    return data.$ref?.endsWith(`/${r}`) ?? false;
  }
  return (r as { type?: unknown }).type === data.type || (data.type === undefined && Object.keys(data).length === 0);
}

describe('v2 coverage of the contract', () => {
  it("counts 160 PF4 and 12 PF5 operations in the contract: the spec's 147 and 12, and 13 PF4 extensions", () => {
    expect(spec.filter((o) => o.family === 'PF4')).toHaveLength(160);
    expect(spec.filter((o) => o.family === 'PF5')).toHaveLength(12);
    expect(extensions.map((o) => `${o.method} ${o.path.replace('/api/v2/PF4/{tradePlatform}', '')}`)).toEqual([
      'POST /NewsSend',
      'POST /MailSend',
      'GET /MailsRequest',
      'GET /PluginsGet',
      'GET /PluginParamGet/{pos}',
      'POST /PluginUpdate',
      'GET /CfgRequestPlugin',
      'POST /CfgUpdatePlugin',
      'GET /UsersSnapshot',
      'GET /UsersSyncRead',
      'GET /TradesSnapshot',
      'GET /TradesSyncRead',
      'POST /ExternalCommandBinary',
    ]);
  });

  it('has a catalog entry for every operation, with its method and path', () => {
    expect(spec.filter((o) => !entryFor(o)).map((o) => `${o.method} ${o.path}`)).toEqual([]);
  });

  it('takes the contract parameters of every operation, and no others', () => {
    const wrong: string[] = [];
    for (const o of spec) {
      const e = entryFor(o);
      if (!e) continue;
      const declared = [...Object.keys(e.params?.shape ?? {}), ...Object.keys(e.query?.shape ?? {})]
        .filter((n) => n !== 'confirm')
        .sort();
      const expected = [
        ...o.parameters.filter((p) => p.name !== 'confirm' && p.name !== 'tradePlatform').map((p) => p.name),
        ...(EXTRA_PARAMETERS.get(`${o.method} ${o.path}`) ?? []),
      ].sort();
      if (JSON.stringify(declared) !== JSON.stringify(expected))
        wrong.push(`${e.id}: ${declared.join(',')} ≠ ${expected.join(',')}`);
      if (o.body !== (e.body !== undefined) && e.method !== 'PATCH' && !SPEC_BODIES.has(`${o.method} ${o.path}`))
        wrong.push(`${e.id}: body ${e.body !== undefined} ≠ ${o.body}`);
    }
    expect(wrong).toEqual([]);
  });

  it('publishes the contract response of every operation', () => {
    const wrong = spec
      .map((o) => [o, entryFor(o)] as const)
      .filter(([o, e]) => e && !responseMatches(e, o.response))
      .map(([o, e]) => `${e!.id}: ${JSON.stringify(e!.response)} ≠ ${o.response}`);
    expect(wrong).toEqual([]);
  });

  it('has a broker handler for every operation', () => {
    expect(
      spec
        .map(entryFor)
        .filter((e) => e && !handlers.has(e.op))
        .map((e) => e!.id),
    ).toEqual([]);
  });

  it('has an end-to-end test calling every operation by its catalog id', () => {
    expect(
      spec
        .map(entryFor)
        .filter((e) => e && !e2eSource.includes(`'${e.id}'`))
        .map((e) => e!.id),
    ).toEqual([]);
  });

  it('serves no v2 operation the contract does not have', () => {
    const known = new Set(contractOperations.map((o) => `${o.method} ${shapeOf(o.path)}`));
    expect(v2.filter((e) => !known.has(`${e.method} ${shapeOf(e.path)}`)).map((e) => e.id)).toEqual([]);
  });
});

// ---- v1 --------------------------------------------------------------------------------------------------------

const v1 = catalog.filter((e) => e.generation === 'v1');
const v1Dir = join(import.meta.dirname, '../../test/e2e/v1');
const v1Source = () =>
  readdirSync(v1Dir)
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => readFileSync(join(v1Dir, f), 'utf8'))
    .join('\n');
/** Argument names a handler receives from an entry: path parameters and query, less what the edge consumes itself. */
const argNames = (e: Operation) =>
  [...Object.keys(e.params?.shape ?? {}), ...Object.keys(e.query?.shape ?? {})].filter(
    (n) => !['confirm', 'limit', 'cursor'].includes(n),
  );

/** The v1 PF4 operations of the spec's table (method and path after the prefix, the longest arity of optional segments). */
const SPEC_V1_PF4 = [
  'GET /ManagerCommon',
  'GET /ManagerCommonEx',
  'GET /ServerTime',
  'GET /JournalRequest/{from}/{to}/{mode}/{filter}',
  'GET /TradesGet',
  'GET /TradesGet/{ticket}',
  'GET /AdmTradesRequest/{group}/{openOnly}',
  'GET /TradesGetByLogin/{login}/{group}',
  'POST /AdmTradeRecordModify',
  'GET /TradesUserHistory/{login}/{fromTime}/{toTime}',
  'GET /UsersGet',
  'GET /UsersRequest',
  'GET /UserRecordsRequest',
  'GET /UserRecordGet/{login}',
  'POST /UserRecordNew',
  'POST /UserRecordUpdate',
  'GET /MarginLevelGet/{login}',
  'GET /MarginLevelRequest/{login}',
  'POST /UserPasswordCheck/{login}',
  'POST /UserPasswordSet/{login}',
  'GET /AdmBalanceCheck/{login}',
  'GET /AdmBalanceFix/{login}',
  'GET /SymbolsGetAll/{symbol}',
  'GET /CfgRequestSymbol/{symbol}',
  'GET /CfgRequestSymbolGroup',
  'GET /TickInfoLast/{symbol}',
  'GET /TicksRequest/{symbol}/{start}/{end}/{flags}',
  'GET /ChartRequest/{symbol}/{period}/{start}/{end}/{mode}',
];
/** The ones the spec names without a path, at the paths docs/api.md lists (spec order: tickets, trade, add, hide, ticks, change, refresh, two reads). */
const UNNAMED_V1_PF4 = [
  'GET /TradeRecordsRequest',
  'POST /TradeTransaction',
  'GET /SymbolAdd/{symbol}',
  'GET /SymbolHide/{symbol}',
  'GET /TickInfoLast',
  'POST /SymbolChange',
  'GET /SymbolsRefresh',
  'GET /SymbolInfoGet/{symbol}',
  'GET /SymbolSessionsGet/{symbol}',
];

describe('v1 coverage', () => {
  const pf4 = v1.filter((e) => e.family === 'PF4');
  const routes = new Set(pf4.map((e) => `${e.method} ${e.path.replace('/api/PF4/{tradePlatform}', '')}`));

  it("serves the 28 PF4 operations of the spec's v1 table and the 9 it names without a path", () => {
    expect(SPEC_V1_PF4).toHaveLength(28);
    expect(UNNAMED_V1_PF4).toHaveLength(9);
    expect([...SPEC_V1_PF4, ...UNNAMED_V1_PF4].filter((r) => !routes.has(r))).toEqual([]);
  });

  it('serves every shorter arity of an optional trailing segment, and nothing outside the spec', () => {
    const optional = [
      'GET /JournalRequest/{from}',
      'GET /JournalRequest/{from}/{to}',
      'GET /JournalRequest/{from}/{to}/{mode}',
      'GET /TradesUserHistory/{login}',
      'GET /TradesUserHistory/{login}/{fromTime}',
    ];
    expect(optional.filter((r) => !routes.has(r))).toEqual([]);
    expect([...routes].filter((r) => ![...SPEC_V1_PF4, ...UNNAMED_V1_PF4, ...optional].includes(r))).toEqual([]);
  });

  it('has a broker handler for every v1 operation', () => {
    expect(v1.filter((e) => !handlers.has(e.op)).map((e) => e.id)).toEqual([]);
  });

  it('has an end-to-end test under test/e2e/v1 calling every v1 operation by its catalog id', () => {
    const source = v1Source();
    expect(v1.filter((e) => !source.includes(`'${e.id}'`)).map((e) => e.id)).toEqual([]);
  });

  it('gives a handler shared with v2 the arguments it takes there (names, and a body where v2 has one)', () => {
    const wrong: string[] = [];
    for (const e of v1) {
      const sibling = catalog.find((o) => o.generation === 'v2' && o.op === e.op && o.family === e.family);
      if (!sibling) continue;
      const theirs = new Set(argNames(sibling));
      const extra = argNames(e).filter((n) => !theirs.has(n));
      if (extra.length) wrong.push(`${e.id}: ${extra.join(', ')} not taken by ${sibling.id}`);
      if ((e.body === undefined) !== (sibling.body === undefined))
        wrong.push(`${e.id}: body ${e.body !== undefined} ≠ ${sibling.id}'s`);
    }
    expect(wrong).toEqual([]);
  });

  it('keeps v1 free of v2 mechanics: no paging, no confirm', () => {
    expect(v1.filter((e) => e.paged || 'confirm' in (e.query?.shape ?? {})).map((e) => e.id)).toEqual([]);
  });
});

/** The v1 PF5 operations of the spec's tables (method and path after the prefix, the longest arity of optional segments). */
const SPEC_V1_PF5 = [
  'POST /UserAdd',
  'GET /UserRequest/{login}',
  'GET /UserAccountGet/{login}',
  'GET /UserAccountRequest/{login}',
  'GET /UserGet/{login}',
  'GET /UserGetByLogins',
  'GET /UserGetByGroup/{mask}',
  'POST /UserUpdate',
  'POST /UserPasswordCheck/{login}/{type}',
  'POST /UserPasswordChange/{login}/{type}',
  'GET /PositionGet/{login}',
  'GET /PositionGetByLogins',
  'GET /PositionGetByTickets',
  'GET /PositionRequestByGroup/{mask}',
  'GET /PositionGetBySymbol/{mask}/{symbol}',
  'POST /PositionDeleteBatch',
  'GET /OrderGetByGroup/{mask}',
  'GET /OrderGetBySymbol/{mask}/{symbol}',
  'GET /OrderGetByLogins',
  'GET /OrderGetByTickets',
  'GET /OrderRequestByGroup/{mask}',
  'GET /OrderRequestByGroupSymbol/{mask}/{symbol}',
  'POST /OrderRequestByTickets',
  'GET /HistoryRequest/{login}/{fromTime}/{toTime}',
  'GET /HistoryRequestByGroup/{mask}/{fromTime}/{toTime}',
  'POST /HistoryRequestByTickets',
  'GET /DealRequest/{login}/{fromTime}/{toTime}',
  'GET /DealRequestByGroup/{mask}/{fromTime}/{toTime}',
  'GET /DealRequestByGroupSymbol/{mask}/{symbol}/{fromTime}/{toTime}',
  'GET /DealRequestByLogins/{fromTime}/{toTime}',
  'GET /DealRequestByTicket/{ticket}',
  'POST /DealRequestByTickets',
  'GET /GroupGet/{group}',
  'GET /GroupRequest/{group}',
  'GET /GroupRequestArray/{mask}',
  'POST /SymbolUpdate/{symbol}',
  'GET /SymbolRequestArray/{mask}/{group}',
  'GET /ChartRequest/{symbol}/{fromTime}/{toTime}',
];
/** The ones the spec names without a path, at the paths docs/api.md lists (spec order). */
const UNNAMED_V1_PF5 = [
  'POST /OrderDeleteBatch',
  'GET /OrderGet/{ticket}',
  'GET /DealRequestByTickets',
  'POST /DealUpdate',
  'POST /DealDeleteBatch',
  'GET /SymbolGet/{symbol}',
];

describe('v1 PF5 coverage', () => {
  const pf5 = v1.filter((e) => e.family === 'PF5');
  const route = (e: Operation) => `${e.method} ${e.path.replace('/api/PF5/{tradePlatform}', '')}`;
  const routes = new Set(pf5.map(route));
  const windowed = SPEC_V1_PF5.filter((r) => r.endsWith('/{fromTime}/{toTime}'));
  /** `…/{fromTime}` and the path without both: the shorter arities of the optional time segments. */
  const shorter = windowed.flatMap((r) => [
    r.replace(/\/\{toTime\}$/, ''),
    r.replace(/\/\{fromTime\}\/\{toTime\}$/, ''),
  ]);

  it("serves the 38 PF5 operations of the spec's v1 tables and the 6 it names without a path", () => {
    expect(SPEC_V1_PF5).toHaveLength(38);
    expect(UNNAMED_V1_PF5).toHaveLength(6);
    expect([...SPEC_V1_PF5, ...UNNAMED_V1_PF5].filter((r) => !routes.has(r))).toEqual([]);
  });

  it('serves the optional fromTime / toTime and group segments at every arity with one handler, and nothing outside the spec', () => {
    const optional = [...shorter, 'GET /SymbolRequestArray/{mask}'];
    expect(optional.filter((r) => !routes.has(r))).toEqual([]);
    expect([...routes].filter((r) => ![...SPEC_V1_PF5, ...UNNAMED_V1_PF5, ...optional].includes(r))).toEqual([]);
    for (const full of [...windowed, 'GET /SymbolRequestArray/{mask}/{group}']) {
      const base = full.replace(/(\/\{fromTime\}\/\{toTime\}|\/\{group\})$/, '');
      const family = pf5.filter((e) => route(e) === full || route(e).startsWith(`${base}/{`) || route(e) === base);
      expect(new Set(family.map((e) => e.op)).size, full).toBe(1);
    }
  });

  it('takes PF5 logins and tickets as 64-bit ids in paths and queries', () => {
    const wrong: string[] = [];
    for (const e of pf5) {
      for (const [name, field] of Object.entries({ ...e.params?.shape, ...e.query?.shape } as Record<string, any>)) {
        if (!['login', 'ticket', 'logins', 'tickets'].includes(name)) continue;
        const value = name.endsWith('s') ? ['9007199254740991'] : '9007199254740991';
        if (!field.safeParse(value).success) wrong.push(`${e.id}.${name}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
