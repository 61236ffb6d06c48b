/**
 * The bounds of a PF4 plugin's configuration and of the binary plugin command channel, held once for the edge (the
 * catalog's validation) and the simulator (the trading server's own checks), so both refuse the same input by the same
 * rule. Problems name the field (`name must be at most 32 characters`) and carry its path inside the record.
 */

/** A plugin file name (the key of the server's plugin list), as the server stores it. */
export const PLUGIN_FILE_MAX = 255;
/** Parameters one plugin holds. */
export const PLUGIN_PARAMS_MAX = 64;
export const PLUGIN_PARAM_NAME_MAX = 32;
export const PLUGIN_PARAM_VALUE_MAX = 128;
/** The switches of a plugin entry (`enabled`, `managerAccess`) are 0 (off) or 1 (on). */
export const PLUGIN_SWITCHES = ['enabled', 'managerAccess'] as const;

/** The most bytes one binary plugin command carries, and the base64 text that encodes them at most. */
export const BINARY_COMMAND_MAX_BYTES = 65_536;
export const BINARY_COMMAND_MAX_CHARS = 4 * Math.ceil(BINARY_COMMAND_MAX_BYTES / 3);

export interface FieldProblem {
  /** Path of the field inside the record (`['params', 3, 'name']`). */
  path: Array<string | number>;
  message: string;
}

interface ParamInput {
  name?: unknown;
  value?: unknown;
}

/**
 * The problems of a parameter list that replaces a plugin's parameters: at most PLUGIN_PARAMS_MAX entries, each with a
 * name (1 to PLUGIN_PARAM_NAME_MAX characters, unique within the list, compared exactly) and a value of at most
 * PLUGIN_PARAM_VALUE_MAX characters (null or absent: empty).
 */
export function pluginParamsProblems(params: readonly ParamInput[]): FieldProblem[] {
  if (params.length > PLUGIN_PARAMS_MAX) {
    return [{ path: ['params'], message: `params must list at most ${PLUGIN_PARAMS_MAX} parameters` }];
  }
  const problems: FieldProblem[] = [];
  const seen = new Map<string, number>();
  params.forEach((param, i) => {
    const { name, value } = param ?? {};
    if (name === undefined || name === null)
      problems.push({ path: ['params', i, 'name'], message: 'name is required' });
    else if (typeof name === 'string' && name.length === 0)
      problems.push({ path: ['params', i, 'name'], message: 'name must not be empty' });
    else if (typeof name === 'string' && name.length > PLUGIN_PARAM_NAME_MAX) {
      problems.push({
        path: ['params', i, 'name'],
        message: `name must be at most ${PLUGIN_PARAM_NAME_MAX} characters`,
      });
    } else if (typeof name === 'string') {
      const first = seen.get(name);
      if (first !== undefined)
        problems.push({
          path: ['params', i, 'name'],
          message: `name ${name} is already the name of params.${first} (names are unique)`,
        });
      else seen.set(name, i);
    }
    if (typeof value === 'string' && value.length > PLUGIN_PARAM_VALUE_MAX) {
      problems.push({
        path: ['params', i, 'value'],
        message: `value must be at most ${PLUGIN_PARAM_VALUE_MAX} characters`,
      });
    }
  });
  return problems;
}

/** Canonical base64 (RFC 4648 section 4): the standard alphabet, padded with `=` to a multiple of 4 characters. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes a well-formed base64 text decodes to. */
function base64DecodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/**
 * Why `data` is not a binary plugin command, or undefined when it is one: required, base64, 1 to
 * BINARY_COMMAND_MAX_BYTES bytes. The text's length is bounded before its alphabet is looked at.
 */
export function binaryDataProblem(data: unknown): string | undefined {
  if (data === undefined || data === null) return 'data is required: the command bytes, base64-encoded';
  if (typeof data !== 'string') return 'data must be a base64 string';
  if (data.length === 0) return 'data must not be empty (at least one byte: the command)';
  const tooLarge = `data must decode to at most ${BINARY_COMMAND_MAX_BYTES} bytes`;
  if (data.length > BINARY_COMMAND_MAX_CHARS) return tooLarge;
  if (!BASE64.test(data))
    return 'data must be base64: A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters';
  return base64DecodedLength(data) > BINARY_COMMAND_MAX_BYTES ? tooLarge : undefined;
}
