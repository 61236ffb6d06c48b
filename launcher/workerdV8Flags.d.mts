/** Types of `workerdV8Flags.mjs` (plain JavaScript, run by `launcher/workerd-v8` without a compiler). */
export function withV8Flags(config: Uint8Array, flags: readonly string[]): Uint8Array;
export function v8FlagsOf(config: Uint8Array): string[];
