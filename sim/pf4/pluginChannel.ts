/**
 * The plugin command channel of a simulated PF4 server. A command, JSON or binary, goes to the first plugin in the
 * server's list order that is enabled and open to managers (`enabled` 1, `managerAccess` 1); a disabled plugin is not
 * running and answers nothing.
 *
 * The answering plugin's binary command set, selected by the first byte (the rest is the command's operand):
 *
 * | byte | command | answer |
 * |---|---|---|
 * | 0x01 | echo | the operand, byte for byte |
 * | 0x02 | checksum | CRC-32 (IEEE 802.3, as zlib and PNG compute it) of the operand, then its length: two uint32, big-endian |
 * | 0x03 | state | accounts, open trades and pending orders, active symbols, groups, the server time (Unix seconds): five uint32, big-endian; then the answering plugin's file name in UTF-8 |
 *
 * Another first byte is refused (`InvalidData`), as is a command of no bytes or more than BINARY_COMMAND_MAX_BYTES.
 */
import { BINARY_COMMAND_MAX_BYTES } from '../../shared/plugins.js';
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { CommandError } from '../world/commandError.js';
import type { Pf4World } from './pf4World.js';

type Rec = Record<string, unknown>;

const BINARY_COMMANDS = { echo: 0x01, checksum: 0x02, state: 0x03 } as const;

const KNOWN = Object.entries(BINARY_COMMANDS)
  .map(([name, byte]) => `${hex(byte)} ${name}`)
  .join(', ');

/** The plugin (its entry's `plugin` record) that answers a command now, or a refusal when none does. */
export function answeringPlugin(world: Pf4World): Rec {
  const entry = world.config.lists.Plugin.list().find((p) => {
    const info = p.plugin as Rec;
    return info.enabled === 1 && info.managerAccess === 1;
  });
  if (!entry) throw new CommandError(PF4_RESULT.InvalidData, 'no plugin answered the command');
  return entry.plugin as Rec;
}

/** Runs one binary command on the answering plugin; answers its bytes. */
export function runBinaryCommand(world: Pf4World, command: Uint8Array): Uint8Array {
  if (command.length === 0) throw new CommandError(PF4_RESULT.InvalidData, 'the command must hold at least one byte');
  if (command.length > BINARY_COMMAND_MAX_BYTES) {
    throw new CommandError(PF4_RESULT.InvalidData, `the command must hold at most ${BINARY_COMMAND_MAX_BYTES} bytes`);
  }
  const plugin = answeringPlugin(world);
  const operand = command.subarray(1);
  switch (command[0]) {
    case BINARY_COMMANDS.echo:
      return Uint8Array.from(operand);
    case BINARY_COMMANDS.checksum:
      return uint32s([crc32(operand), operand.length]);
    case BINARY_COMMANDS.state: {
      const counts = [
        world.users.size,
        world.trades.size,
        world.activeSymbols().length,
        world.groups.size,
        Math.floor(Date.now() / 1000),
      ];
      const file = new TextEncoder().encode(String(plugin.file));
      const out = new Uint8Array(counts.length * 4 + file.length);
      out.set(uint32s(counts));
      out.set(file, counts.length * 4);
      return out;
    }
    default:
      throw new CommandError(PF4_RESULT.InvalidData, `binary command ${hex(command[0])} is unknown (${KNOWN})`);
  }
}

function hex(byte: number): string {
  return `0x${byte.toString(16).padStart(2, '0')}`;
}

function uint32s(values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setUint32(i * 4, v >>> 0, false));
  return out;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 with the reflected polynomial 0xEDB88320 (IEEE 802.3), initial and final XOR 0xFFFFFFFF. */
export function crc32(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
