/**
 * PF4 news from the pumping cache: the count of headers, the header at a position, and a body once the server has
 * pushed it (after `NewsBodyRequest`). Headers and bodies are separate tables: `news` (the topics, key order, which is
 * arrival order) and `newsBodies` (`{key, body}`).
 */
import { news } from '../../../shared/catalog/v2/pf4/index.js';
import type { KeyedTable } from '../../cache/keyedTable.js';
import type { Row } from '../../cache/pumpCache.js';
import { notFound } from '../../session/managerErrors.js';
import { fromCache, type HandlerContext } from '../handler.js';
import { bind } from './bind.js';

function table(ctx: HandlerContext<unknown>, name: 'news' | 'newsBodies'): KeyedTable<Row> {
  const found = ctx.platform.cache.table(name);
  if (!found) throw new Error(`the ${ctx.platform.family} cache keeps no ${name} table`);
  return found;
}

export const pf4NewsBindings = [
  bind(news.NewsTotal, (ctx) => fromCache(ctx, () => ({ data: table(ctx, 'news').size }))),

  /** Out of range is the family's not-found, as the server answers its own `NewsTopicGet`. */
  bind(news.NewsTopicGet, (ctx) =>
    fromCache(ctx, () => {
      const topics = table(ctx, 'news');
      const topic = topics.at(ctx.args.pos);
      if (!topic) throw notFound('PF4', `news position ${ctx.args.pos} is out of range (${topics.size} items)`);
      return { data: topic };
    }),
  ),

  /**
   * A listed topic whose body has not been fetched yet is not found too, with a message that says so. A body is
   * answered only while its topic is listed: the server drops its oldest items (a `news` delete), bodies and all.
   */
  bind(news.NewsBodyGet, (ctx) =>
    fromCache(ctx, () => {
      const { key } = ctx.args;
      const bodies = table(ctx, 'newsBodies');
      if (!table(ctx, 'news').get(key)) throw notFound('PF4', `news ${key} not found`);
      const row = bodies.get(key);
      if (row && typeof row.body === 'string') return { data: row.body };
      throw notFound('PF4', `the body of news ${key} is not cached; NewsBodyRequest fetches it`);
    }),
  ),
];
