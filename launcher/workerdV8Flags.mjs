// @ts-check
/**
 * V8 flags for the local edge's workerd. workerd takes them only in its configuration (`Config.v8Flags`), and
 * Miniflare builds that configuration without them, so `launcher/workerd-v8` (the program Miniflare starts in place
 * of workerd, through `MINIFLARE_WORKERD_PATH`) runs this file on the binary configuration Miniflare writes to it and
 * hands the result to the real workerd.
 *
 * Plain JavaScript so that it starts in a few tens of milliseconds, with no compiler, each time an edge starts.
 *
 * Run as a program: reads the configuration from standard input, writes it with the flags of `GATEWAY_V8_FLAGS`
 * (flags separated by spaces) to standard output.
 *
 * The configuration is an unpacked Cap'n Proto stream (https://capnproto.org/encoding.html): a segment table, then
 * the segments; the root pointer (word 0 of segment 0) points at the `Config` struct, whose pointer 2 is
 * `v8Flags :List(Text)`. The list and its texts are appended to segment 0, which moves nothing already in it (its
 * pointers are offsets within it) nor in other segments (far pointers name their segment); only segment 0's size in
 * the table and the one pointer change.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `Config.v8Flags`'s index among the struct's pointers (workerd.capnp: `v8Flags @2 :List(Text)`). */
const V8_FLAGS_POINTER = 2;
const WORD = 8;
const ELEMENT_BYTE = 2;
const ELEMENT_POINTER = 6;

/**
 * The configuration `config` with `Config.v8Flags` set to `flags` (replacing any list it had).
 * @param {Uint8Array} config
 * @param {readonly string[]} flags
 * @returns {Uint8Array}
 */
export function withV8Flags(config, flags) {
  const input = Buffer.from(config.buffer, config.byteOffset, config.byteLength);
  if (input.length < 8) throw new Error('workerd configuration: too short for a segment table');
  const segments = input.readUInt32LE(0) + 1;
  const tableBytes = Math.ceil((4 + 4 * segments) / WORD) * WORD;
  if (input.length < tableBytes) throw new Error('workerd configuration: segment table cut short');
  const sizes = Array.from({ length: segments }, (_, i) => input.readUInt32LE(4 + 4 * i));
  const total = tableBytes + sizes.reduce((a, s) => a + s * WORD, 0);
  if (input.length !== total)
    throw new Error(`workerd configuration: ${input.length} bytes where its segment table says ${total}`);

  const segment0 = input.subarray(tableBytes, tableBytes + sizes[0] * WORD);
  const root = segment0.readBigUInt64LE(0);
  if ((root & 3n) !== 0n) throw new Error('workerd configuration: its root is not a struct in segment 0');
  const offset = Number(BigInt.asIntN(30, (root & 0xffffffffn) >> 2n));
  const dataWords = Number((root >> 32n) & 0xffffn);
  const pointers = Number(root >> 48n);
  if (pointers <= V8_FLAGS_POINTER) throw new Error('workerd configuration: its root struct has no v8Flags field');
  const fieldWord = 1 + offset + dataWords + V8_FLAGS_POINTER;
  if (fieldWord < 1 || fieldWord >= sizes[0])
    throw new Error('workerd configuration: its root struct lies outside segment 0');

  // The list of text pointers, then each text (NUL-terminated, padded to a word), after segment 0's last word.
  const texts = flags.map((f) => Buffer.from(`${f}\0`, 'utf8'));
  const listWord = sizes[0];
  const extra = Buffer.alloc(WORD * (flags.length + texts.reduce((a, t) => a + Math.ceil(t.length / WORD), 0)));
  let textWord = listWord + flags.length;
  texts.forEach((text, i) => {
    extra.writeBigUInt64LE(listPointer(textWord - (listWord + i + 1), ELEMENT_BYTE, text.length), i * WORD);
    text.copy(extra, (textWord - listWord) * WORD);
    textWord += Math.ceil(text.length / WORD);
  });

  const out = Buffer.concat([
    input.subarray(0, tableBytes),
    segment0,
    extra,
    input.subarray(tableBytes + segment0.length),
  ]);
  out.writeUInt32LE(sizes[0] + extra.length / WORD, 4);
  out.writeBigUInt64LE(
    listPointer(listWord - (fieldWord + 1), ELEMENT_POINTER, flags.length),
    tableBytes + fieldWord * WORD,
  );
  return out;
}

/**
 * A list pointer: `offset` words from the end of the pointer to the list's first word.
 * @param {number} offset
 * @param {number} elementSize
 * @param {number} count
 */
function listPointer(offset, elementSize, count) {
  const low = (BigInt.asUintN(30, BigInt(offset)) << 2n) | 1n;
  const high = (BigInt(count) << 3n) | BigInt(elementSize);
  return (high << 32n) | low;
}

/**
 * `Config.v8Flags` as a configuration holds it (an empty list when it has none): for tests.
 * @param {Uint8Array} config
 * @returns {string[]}
 */
export function v8FlagsOf(config) {
  const input = Buffer.from(config.buffer, config.byteOffset, config.byteLength);
  const segments = input.readUInt32LE(0) + 1;
  const base = Math.ceil((4 + 4 * segments) / WORD) * WORD;
  const word = (/** @type {number} */ w) => input.readBigUInt64LE(base + w * WORD);
  const target = (/** @type {number} */ at, /** @type {bigint} */ p) =>
    at + 1 + Number(BigInt.asIntN(30, (p & 0xffffffffn) >> 2n));
  const root = word(0);
  const fieldWord = target(0, root) + Number((root >> 32n) & 0xffffn) + V8_FLAGS_POINTER;
  const list = word(fieldWord);
  if (list === 0n) return [];
  const first = target(fieldWord, list);
  return Array.from({ length: Number(list >> 35n) }, (_, i) => {
    const text = word(first + i);
    const start = base + target(first + i, text) * WORD;
    return input.subarray(start, start + Number(text >> 35n) - 1).toString('utf8');
  });
}

const main =
  process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (main) {
  const flags = (process.env.GATEWAY_V8_FLAGS ?? '').split(' ').filter(Boolean);
  process.stdout.write(withV8Flags(readFileSync(0), flags));
}
