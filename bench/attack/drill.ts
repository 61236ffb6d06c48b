/**
 * One run of the attack drill: the stack its attacks run on (the last one started), the findings as they are made,
 * each printed to standard output as its line, and every log line of the stack's processes with the time it came.
 * Progress goes to standard error.
 */
import type { Stack } from '../../launcher/stack.js';
import { findingLine, type Finding } from './figures.js';

export const progress = (line: string) => process.stderr.write(`… ${line}\n`);

/** How many of the stack's log lines are kept (the oldest go first). */
const LOG_LINES_KEPT = 50_000;

export class Drill {
  readonly findings: Finding[] = [];
  private current: Stack | undefined;
  private readonly logLines: Array<{ at: number; line: string }> = [];

  get stack(): Stack {
    if (!this.current) throw new Error('the drill has no stack yet');
    return this.current;
  }

  set stack(stack: Stack) {
    this.current = stack;
  }

  /** The stack, if one started. */
  get started(): Stack | undefined {
    return this.current;
  }

  get edgeUrl(): string {
    return this.stack.edgeUrl;
  }

  found(f: Finding): void {
    this.findings.push(f);
    console.log(findingLine(f));
  }

  /** For the stack's `log` option. */
  readonly log = (line: string): void => {
    this.logLines.push({ at: Date.now(), line });
    if (this.logLines.length > LOG_LINES_KEPT) this.logLines.shift();
  };

  /** The edge's error-level lines (and unhandled errors) logged since `from`. */
  errorLinesSince(from: number): Array<{ at: number; line: string }> {
    return this.logLines.filter(
      (l) =>
        l.at >= from &&
        l.line.startsWith('edge ') &&
        (/"level":"error"/.test(l.line) || l.line.includes('unhandled edge error')),
    );
  }
}
