/**
 * Serialized form of cached records, computed once per record version. The cache never mutates a stored record (a
 * change replaces it), so the JSON of a record object stays valid for as long as that object lives, and a hot record
 * or a popular page is stringified once rather than on every read. Weakly held: replaced records take their JSON
 * with them. Ids beyond 2^53 − 1 (bigints) are written exactly.
 */
import { stringifyJson } from '../../shared/losslessJson.js';

const serialized = new WeakMap<object, string>();

export function recordJson(record: object): string {
  let json = serialized.get(record);
  if (json === undefined) {
    json = stringifyJson(record);
    serialized.set(record, json);
  }
  return json;
}

/** Records that `record` is answered as `json` (a row rebuilt from the text a packed table keeps). */
export function rememberJson(record: object, json: string): void {
  serialized.set(record, json);
}

export function recordsJson(records: readonly object[]): string {
  if (records.length === 0) return '[]';
  let out = '[';
  for (let i = 0; i < records.length; i++) out += (i ? ',' : '') + recordJson(records[i]);
  return `${out}]`;
}
