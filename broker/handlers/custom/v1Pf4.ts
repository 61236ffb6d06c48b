/**
 * v1 PF4 operations with answers of their own; every other v1 PF4 operation shares a v2 handler or is declared with a
 * generic answer (shared/catalog/v1/pf4.ts).
 * - `ManagerCommon` / `ManagerCommonEx`: the common configuration as the gateway's records ConCommonShort / ConCommon
 *   (not contract records, so shaped here by their published schema): the server's `ManagerCommon` (the manager's
 *   view, without the sensitive settings) and `CfgRequestCommon` (the whole section), both asked for the whole
 *   section (`full`). Every field is present: one the server did not send is null (text) or 0 (numbers).
 * - `SymbolsGetAll`: an active symbol's configuration from the cache, shaped as PF4SymbolConfig.
 * - `AdmTradeRecordModify`: the trade record's update fields written to the ticket it names; a record naming its
 *   account (`login`, as a record read has it) has the ticket read first and is refused, not found for that account,
 *   when the ticket is another account's: the server edits the ticket whatever the record's login says.
 */
import { CON_COMMON_SCHEMAS, pf4V1, tradeUpdateArgs } from '../../../shared/catalog/v1/pf4.js';
import { OperationError } from '../../../shared/errors.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { notFound } from '../../session/managerErrors.js';
import { fromCache, type HandlerContext } from '../handler.js';
import { bind } from './bind.js';
import { valueText } from '../../../shared/valueText.js';

type Row = Record<string, unknown>;

/** Shapes a server answer as a record of a published schema: its fields in order, nothing else, none missing. */
function shaperOf(schema: Record<string, unknown>): (value: unknown) => Row {
  const properties = schema.properties as Record<string, { type: string | string[] }>;
  return (value) => {
    const from = (value && typeof value === 'object' ? value : {}) as Row;
    const out: Row = {};
    for (const [field, s] of Object.entries(properties)) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      const v = from[field];
      if (types.includes('integer') && typeof v === 'number' && Number.isInteger(v)) out[field] = v;
      else if (types.includes('string') && typeof v === 'string') out[field] = v;
      else out[field] = types.includes('null') ? null : types.includes('string') ? '' : 0;
    }
    return out;
  };
}

const shapeConCommon = shaperOf(CON_COMMON_SCHEMAS.ConCommon);
const shapeConCommonShort = shaperOf(CON_COMMON_SCHEMAS.ConCommonShort);
const shapeSymbol = shapeRecord('PF4SymbolConfig');
const shapeTrade = shapeRecord('PF4Trade');

async function commonSection(ctx: HandlerContext<unknown>, command: string): Promise<Row> {
  const answer = await ctx.platform.session.request(command, { full: true }, ctx.deadline);
  if (!answer || typeof answer !== 'object')
    throw new OperationError('Internal', `the trading server answered ${command} without a record`);
  return answer as Row;
}

export const v1Pf4Bindings = [
  bind(pf4V1.ManagerCommon, async (ctx) => ({ data: shapeConCommonShort(await commonSection(ctx, 'ManagerCommon')) })),
  bind(pf4V1.ManagerCommonEx, async (ctx) => ({ data: shapeConCommon(await commonSection(ctx, 'CfgRequestCommon')) })),

  bind(pf4V1.SymbolsGetAll, (ctx) =>
    fromCache(ctx, () => {
      const row = ctx.platform.cache.get('symbols', ctx.args.symbol);
      if (!row) throw notFound('PF4', `symbol ${ctx.args.symbol} not found among the active symbols`);
      return { data: shapeSymbol(row) };
    }),
  ),

  bind(pf4V1.AdmTradeRecordModify, async (ctx) => {
    const body = ctx.args.body as Row;
    const { ticket, record } = tradeUpdateArgs(body);
    const { session } = ctx.platform;
    if (body.login !== undefined && body.login !== null) {
      const held = (await session.request('TradeRecordRequest', { order: ticket }, ctx.deadline, {
        keyedRead: true,
      })) as Row | null;
      if (held?.login !== body.login) {
        throw notFound(
          'PF4',
          `body.login: order ${ticket} is not a trade of login ${valueText(body.login)} (it is login ${String(held?.login)}'s); login must be the ticket's, or absent`,
        );
      }
    }
    return {
      data: shapeTrade(
        await session.request('AdmTradeRecordModify', { ticket, record }, ctx.deadline, { keyedRead: true }),
      ),
    };
  }),
];
