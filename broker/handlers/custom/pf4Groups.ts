/** PF4 groups with logic beyond a passthrough: the security arrays from the cache, the live name check. */
import { groups } from '../../../shared/catalog/v2/pf4/index.js';
import { shapeRecord } from '../../../shared/records/shape.js';
import { notFound } from '../../session/managerErrors.js';
import { fromCache, type HandlerContext } from '../handler.js';
import { bind } from './bind.js';

const secEntries = shapeRecord('PF4GroupSec[]');
const marginOverrides = shapeRecord('PF4GroupMargin[]');

/** One member of the group's cached securities row (`{group, secGroups, secMargins}`); an unknown group is not found. */
function securitiesMember(ctx: HandlerContext<{ group: string }>, member: 'secGroups' | 'secMargins', shape: (v: unknown) => unknown) {
  return fromCache(ctx, () => {
    const row = ctx.platform.cache.get('groupSecurities', ctx.args.group);
    if (!row) throw notFound('PF4', `group ${ctx.args.group} not found`);
    let items = Array.isArray(row[member]) ? (row[member] as unknown[]) : [];
    // Only the first secMarginsTotal overrides are in use; the rest of the platform's fixed array is padding.
    const total = ctx.platform.cache.get('groups', ctx.args.group)?.secMarginsTotal;
    if (member === 'secMargins' && typeof total === 'number' && total >= 0) items = items.slice(0, total);
    return { data: shape(items) };
  });
}

export const pf4GroupsBindings = [
  bind(groups.GroupSecGroupsGet, (ctx) => securitiesMember(ctx, 'secGroups', secEntries)),
  bind(groups.GroupSecMarginsGet, (ctx) => securitiesMember(ctx, 'secMargins', marginOverrides)),

  /** Lists every group live and compares names exactly (case-sensitive, ordinal). */
  bind(groups.EnsureGroupNameExist, async (ctx) => {
    const all = await ctx.platform.session.request('GroupsRequest', undefined, ctx.deadline);
    const names = Array.isArray(all) ? all.map((g) => (g && typeof g === 'object' ? (g as { group?: unknown }).group : undefined)) : [];
    return { data: names.includes(ctx.args.group) };
  }),
];
