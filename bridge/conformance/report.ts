/**
 * The suite's report as text: a table of every rule (id, result, name, detail), in run order, and the summary line
 * `conformance: P passed, F failed, S skipped` as its last line. Details are shown on one line each.
 */
import type { ConformanceReport } from './suite.js';

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

export function summaryLine(report: ConformanceReport): string {
  return `conformance: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`;
}

export function formatReport(report: ConformanceReport): string {
  const rows = report.results.map((r) => [r.id, r.result, oneLine(r.name), oneLine(r.detail)]);
  const header = ['rule', 'result', 'checks', 'detail'];
  const widths = [0, 1, 2].map((i) => Math.max(header[i].length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i < 3 ? cell.padEnd(widths[i]) : cell))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w)).concat('------')),
    ...rows.map(line),
    '',
    summaryLine(report),
  ].join('\n');
}
