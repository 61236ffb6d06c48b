/** PF4 groups with logic beyond a passthrough: the live, case-sensitive name check. */
import { groups } from '../../../shared/catalog/v2/pf4/index.js';
import { bind } from './bind.js';

export const pf4GroupsBindings = [
  /** Lists every group live and compares names exactly (case-sensitive, ordinal). */
  bind(groups.EnsureGroupNameExist, async (ctx) => {
    const all = await ctx.platform.session.request('GroupsRequest', undefined, ctx.deadline);
    const names = Array.isArray(all) ? all.map((g) => (g && typeof g === 'object' ? (g as { group?: unknown }).group : undefined)) : [];
    return { data: names.includes(ctx.args.group) };
  }),
];
