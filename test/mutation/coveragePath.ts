/** The route of the mutation-testing worker entry (test/support/workers/mutationEntry.ts) that hands over its coverage. */
export const COVERAGE_PATH = '/__mutation/coverage';
