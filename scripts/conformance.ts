/**
 * `npm run conformance -- --server ws://HOST:PORT/NAME --login N --password-env VAR [--family PF4|PF5] [--writes]`:
 * the manager-protocol conformance suite against a bridge or the simulator (bridge/conformance/, docs/conformance.md).
 * Exit 0 only when no rule failed, 2 for bad arguments.
 */
import '../shared/requireNode.js';
import { main } from '../bridge/conformance/cli.js';

process.exitCode = await main(
  process.argv.slice(2),
  process.env,
  (text) => process.stdout.write(`${text}\n`),
  (text) => process.stderr.write(`${text}\n`),
);
