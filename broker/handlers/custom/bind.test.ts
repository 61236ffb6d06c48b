import { describe, expect, it } from 'vitest';
import type { Operation } from '../../../shared/catalog/index.js';
import { registryOperations } from '../../../shared/catalog/registry.js';
import { news } from '../../../shared/catalog/v2/pf4/index.js';
import type { Handler } from '../handler.js';
import { bind } from './bind.js';

const run: Handler = () => ({ data: 1 });

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('bind', () => {
  it("pairs a custom entry's op with the handler itself", () => {
    const binding = bind(news.NewsTotal, run);
    expect(binding).toEqual(['PF4.NewsTotal', run]);
    expect(binding[1]).toBe(run);
    expect(bind(registryOperations.Ping, run)).toEqual(['Ping', run]);
  });

  it('refuses an entry declaring another answer kind, naming the entry and the kind', () => {
    const live = thrown(() => bind(news.NewsBodyRequest, run));
    expect(live).toBeInstanceOf(Error);
    expect(live.message).toBe('v2.PF4.NewsBodyRequest declares a live answer, not custom');
    expect(thrown(() => bind(news.NewsGet, run)).message).toBe(
      'v2.PF4.NewsGet declares a cachedList answer, not custom',
    );
  });

  it('refuses an entry with no answer at all', () => {
    expect(registryOperations.TradePlatforms.answer).toBeUndefined();
    expect(thrown(() => bind(registryOperations.TradePlatforms as Operation, run)).message).toBe(
      'registry.Registry.TradePlatforms declares a missing answer, not custom',
    );
  });
});
