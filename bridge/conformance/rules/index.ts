/**
 * Every conformance rule, in the order the suite runs them: the login rules, keep-alive, capabilities, the snapshot,
 * answers, frames, int64 values, the `--writes` changes, the reconnect (after the changes, so that with `--writes` a
 * server that serves an old snapshot is seen even when nothing else moves), the clean-up, the cache and the restart,
 * then the rules over every answer of the run and over every record the run received. Ids are stable: tests and broken-server checks name them.
 */
import type { Rule } from '../context.js';
import { answerRules } from './answers.js';
import { capabilityRules } from './capabilities.js';
import { frameRules } from './frames.js';
import { int64Rules } from './int64.js';
import { livenessRules } from './liveness.js';
import { loginRules } from './login.js';
import { reconnectRules } from './reconnect.js';
import { recordRules } from './records.js';
import { snapshotRules } from './snapshot.js';
import { afterChangeRules, changeRules } from './writes.js';

const [concurrent, ...overTheRun] = answerRules;

export const RULES: readonly Rule[] = [
  ...loginRules,
  ...livenessRules,
  ...capabilityRules,
  ...snapshotRules,
  concurrent,
  ...frameRules,
  ...int64Rules,
  ...changeRules,
  ...reconnectRules,
  ...afterChangeRules,
  ...overTheRun,
  ...recordRules,
];

const ids = new Set<string>();
for (const rule of RULES) {
  if (ids.has(rule.id)) throw new Error(`conformance rule ${rule.id} listed twice`);
  ids.add(rule.id);
}
