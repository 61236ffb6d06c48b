/**
 * The worker as mutation testing runs it (never deployed): the real entry, plus one route that hands the mutation
 * tester the coverage the instrumented code counted inside workerd since the last ask (`test/mutation/setup.ts`).
 * Bundled only by the edge tests under `npm run test:mutation` (test/support/edge.ts).
 */
import app from '../../../workers/index.js';
import { COVERAGE_PATH } from '../../mutation/coveragePath.js';
import { takeCoverage } from './mutationCoverage.js';

export * from '../../../workers/index.js';

export default {
  fetch(request: Request, env: unknown, ctx: ExecutionContext): Response | Promise<Response> {
    if (new URL(request.url).pathname === COVERAGE_PATH) return takeCoverage();
    return app.fetch(request, env as never, ctx);
  },
};
