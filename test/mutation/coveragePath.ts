/** The route of the mutation-testing worker entry (workers/testing/mutationEntry.ts) that hands over its coverage. */
export const COVERAGE_PATH = '/__mutation/coverage';
