/** PF4 server administration with logic beyond a passthrough. */
import { serverAdmin } from '../../../shared/catalog/v2/pf4/index.js';
import { bind } from './bind.js';

export const pf4ServerAdminBindings = [
  /** The server answers and then drops every manager connection; the session drops first, reconnects and resyncs. */
  bind(serverAdmin.SrvRestart, async (ctx) => {
    const answer = await ctx.platform.session.request('SrvRestart', undefined, ctx.deadline);
    ctx.platform.session.reconnect('trading server restarting');
    return { data: answer === undefined ? true : answer };
  }),
];
