/** Every v2 PF4 operation, by tag area. */
import { backup } from './backup.js';
import { commonPf4 } from './common.js';
import { config } from './config.js';
import { groups } from './groups.js';
import { history } from './history.js';
import { mail } from './mail.js';
import { margins } from './margins.js';
import { news } from './news.js';
import { online } from './online.js';
import { plugins } from './plugins.js';
import { prices } from './prices.js';
import { reports } from './reports.js';
import { serverAdmin } from './serverAdmin.js';
import { symbols } from './symbols.js';
import { trades } from './trades.js';
import { users } from './users.js';

export {
  backup,
  commonPf4,
  config,
  groups,
  history,
  mail,
  margins,
  news,
  online,
  plugins,
  prices,
  reports,
  serverAdmin,
  symbols,
  trades,
  users,
};

/** The areas in tag order; an operation name appears in one area only (the catalog refuses duplicate ids). */
export const pf4V2Areas = [
  backup,
  commonPf4,
  config,
  groups,
  history,
  mail,
  margins,
  news,
  online,
  plugins,
  prices,
  reports,
  serverAdmin,
  symbols,
  trades,
  users,
];
