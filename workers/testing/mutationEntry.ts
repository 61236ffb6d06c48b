/**
 * The worker as mutation testing runs it (never deployed): the real entry, plus one route that hands the mutation
 * tester the coverage the instrumented code counted inside workerd since the last ask (`test/mutation/setup.ts`).
 * Bundled only by the edge tests under `npm run test:mutation` (test/support/edge.ts).
 */
import app from '../index.js';
import { COVERAGE_PATH } from '../../test/mutation/coveragePath.js';

export * from '../index.js';

interface Coverage { static?: Record<string, number>; perTest?: Record<string, Record<string, number>> }
const ns = () => ((globalThis as { __stryker__?: { mutantCoverage?: Coverage } }).__stryker__ ??= {});

export default {
  fetch(request: Request, env: unknown, ctx: ExecutionContext): Response | Promise<Response> {
    if (new URL(request.url).pathname === COVERAGE_PATH) {
      // The instrumented code keeps the counts object it first wrote to, so it is emptied in place, never replaced.
      const counts = ns().mutantCoverage ??= { static: {}, perTest: {} };
      const taken = JSON.stringify(counts);
      for (const part of [counts.static ??= {}, counts.perTest ??= {}]) for (const id of Object.keys(part)) delete part[id];
      return new Response(taken, { headers: { 'content-type': 'application/json' } });
    }
    return app.fetch(request, env as never, ctx);
  },
};
