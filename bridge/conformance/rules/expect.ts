/**
 * Small checks the rules share, each answering what was expected and what came in one phrase (or nothing when it
 * holds), so every failure's detail reads the same way.
 */
import type { Family } from '../../../shared/protocol.js';
import { managerCodeName } from '../../../shared/resultCodes.js';
import { show, type Answer } from '../connection.js';

/** A code as the detail names it: `3 (InvalidData)`. */
export function codeText(family: Family, code: unknown): string {
  if (typeof code !== 'number') return show(code, 40);
  const name = managerCodeName(family, code);
  return typeof name === 'string' ? `${code} (${name})` : String(code);
}

/** Undefined when `answer` is an error with `code`; else what came instead. */
export function errorWithCode(answer: Answer, family: Family, code: number, what: string): string | undefined {
  if (answer.kind === 'result')
    return `${what}: expected error ${codeText(family, code)}, got result ${show(answer.value, 80)}`;
  if (answer.code !== code)
    return `${what}: expected error ${codeText(family, code)}, got ${codeText(family, answer.code)} ${show(answer.message, 80)}`;
  return undefined;
}

/** Whether an answer is the family's "unknown command" refusal. */
export function isUnknownCommand(answer: Answer): boolean {
  return answer.kind === 'error' && typeof answer.message === 'string' && answer.message.startsWith('unknown command ');
}

/** Joins problems into one detail. */
export function joined(problems: readonly string[], max = 4): string {
  return problems.length > max
    ? `${problems.slice(0, max).join('; ')}; … ${problems.length - max} more`
    : problems.join('; ');
}
