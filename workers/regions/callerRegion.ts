/**
 * The region each request belongs to (docs/regions.md): on Cloudflare from where the front saw it (`request.cf`,
 * shared/regions.ts's table); on a local edge, which has no front, from the request's `X-Gateway-Region` header, else
 * `EDGE_REGION`. The header is believed only there: behind the front a caller cannot choose its region. The region is
 * set on the context (`c.get('region')`) and named on every answer in `X-Gateway-Region`.
 */
import type { MiddlewareHandler } from 'hono';
import { isRegion, regionOfLocation, REGIONS, type Region } from '../../shared/regions.js';
import { configOf } from '../config.js';
import type { AppEnv } from '../env.js';
import { refuse } from '../envelope/index.js';
import { changeAnswerHeaders } from '../api/answerHeaders.js';

export const REGION_HEADER = 'x-gateway-region';

/** The region of `request`, or a refusal's message when a local request names one that does not exist. */
export function regionOfRequest(request: Request, fallback: Region): { region: Region } | { problem: string } {
  const cf = (request as { cf?: Record<string, unknown> }).cf;
  if (cf) return { region: regionOfLocation(cf, fallback) };
  const named = request.headers.get(REGION_HEADER);
  if (named === null) return { region: fallback };
  const region = named.trim().toLowerCase();
  return isRegion(region) ? { region } : { problem: `X-Gateway-Region: must be one of ${REGIONS.join(', ')}` };
}

export function callerRegion(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const found = regionOfRequest(c.req.raw, configOf(c.env).EDGE_REGION);
    if ('problem' in found) return refuse(c, { kind: 'Validation', message: found.problem });
    c.set('region', found.region);
    await next();
    changeAnswerHeaders(c, (headers) => headers.set(REGION_HEADER, found.region));
  };
}
