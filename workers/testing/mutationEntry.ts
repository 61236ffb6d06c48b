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
      const taken = ns().mutantCoverage ?? {};
      ns().mutantCoverage = { static: {}, perTest: {} };
      return Response.json(taken);
    }
    return app.fetch(request, env as never, ctx);
  },
};
