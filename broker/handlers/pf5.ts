/** PF5 handlers: cached users from the pumping cache, the server clock live. */
import { recordJson } from '../cache/recordJson.js';
import { notFound } from '../session/managerErrors.js';
import { serverTime } from './common.js';
import { fromCache, type HandlerContext, type HandlerTable } from './handler.js';

function userGet(ctx: HandlerContext) {
  const login = Number(ctx.args.login);
  return fromCache(ctx, () => {
    const user = ctx.platform.cache.get('users', login);
    if (!user) throw notFound('PF5', `login ${login} not found`);
    return { json: recordJson(user) };
  });
}

export const pf5Handlers: HandlerTable = {
  'PF5.ServerTime': serverTime,
  'PF5.UserGet': userGet,
};
