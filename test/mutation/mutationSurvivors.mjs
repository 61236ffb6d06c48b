/**
 * A StrykerJS reporter for `npm run test:mutation`: every mutant a run finds undetected (survived or without
 * coverage) is appended, as soon as it is tested, to the file MUTATION_SURVIVORS names, one line each:
 *   file:line:column status mutator => replacement | the source line
 * so the survivors of a run that takes hours can be read, and tests written against them, while it goes on.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { PluginKind, declareValuePlugin } from '@stryker-mutator/api/plugin';

const sources = new Map();
function lineOf(fileName, line) {
  if (!sources.has(fileName)) {
    try {
      sources.set(fileName, readFileSync(fileName, 'utf8').split('\n'));
    } catch {
      sources.set(fileName, []);
    }
  }
  return (sources.get(fileName)[line - 1] ?? '').trim().slice(0, 160);
}

const reporter = {
  onMutantTested(result) {
    const out = process.env.MUTATION_SURVIVORS;
    if (!out || (result.status !== 'Survived' && result.status !== 'NoCoverage')) return;
    const { line, column } = result.location.start;
    const replacement = JSON.stringify(result.replacement ?? '').slice(0, 100);
    appendFileSync(
      out,
      `${relative(process.cwd(), result.fileName)}:${line}:${column} ${result.status} ${result.mutatorName} => ${replacement} | ${lineOf(result.fileName, line)}\n`,
    );
  },
};

export const strykerPlugins = [declareValuePlugin(PluginKind.Reporter, 'survivors', reporter)];
