/**
 * The answer of the mutation-testing coverage route (`COVERAGE_PATH`) of a worker run by the tests: the coverage the
 * instrumented code counted in this isolate since the last ask (`test/mutation/setup.ts` credits it to the test that
 * caused it). Outside mutation testing nothing is counted and the answer is empty.
 */
interface Coverage {
  static?: Record<string, number>;
  perTest?: Record<string, Record<string, number>>;
}
const ns = () => ((globalThis as { __stryker__?: { mutantCoverage?: Coverage } }).__stryker__ ??= {});

export function takeCoverage(): Response {
  // The instrumented code keeps the counts object it first wrote to, so it is emptied in place, never replaced.
  const counts = (ns().mutantCoverage ??= { static: {}, perTest: {} });
  const taken = JSON.stringify(counts);
  for (const part of [(counts.static ??= {}), (counts.perTest ??= {})])
    for (const id of Object.keys(part)) delete part[id];
  return new Response(taken, { headers: { 'content-type': 'application/json' } });
}
