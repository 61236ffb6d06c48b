/**
 * Refuses to run on a Node.js older than the project needs, with one line instead of a stack trace from whichever
 * newer API is reached first. Every process entry (`npm start`, the broker, the simulator, the command-line scripts)
 * imports this module before any other, so it is evaluated first. The only module in shared/ with an effect; it
 * reaches `process` through globalThis because shared/ is also compiled against the Workers types, which have none.
 */
import { nodeVersionProblem } from './nodeVersion.js';

interface NodeProcess {
  version: string;
  stderr: { write(text: string): unknown };
  exit(code: number): never;
}

const node = (globalThis as { process?: NodeProcess }).process;
const problem = node ? nodeVersionProblem(node.version) : null;
if (node && problem) {
  node.stderr.write(`${problem}\n`);
  node.exit(1);
}
