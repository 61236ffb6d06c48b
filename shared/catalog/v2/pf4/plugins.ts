/**
 * v2 PF4 Plugins: the server's loaded plugin files with their parameters, and the command channel to them (JSON and
 * binary).
 *
 * The plugin list is read live: it is configuration, read live like every configuration list, in the server's own
 * order (which CfgShiftPlugin changes, so a position names a different plugin after a shift), and the trading server's
 * change stream carries no plugin changes for a cache to keep.
 *
 * Both writes address a plugin by `plugin.file` (an unknown file is the family's not-found naming it) and replace its
 * parameter list when `params` is given (absent or null keeps it); the fields the plugin file states about itself
 * (`name`, `version`, `copyright`, `configurable`) are read-only and kept, so a record read back can be sent as is.
 * `PluginUpdate` changes the plugin's state (`enabled`) and parameters; `CfgUpdatePlugin` writes the configuration
 * entry, which also holds `managerAccess` (whether the command channel reaches the plugin). PluginUpdate keeps
 * `managerAccess` whatever its body says.
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { contractBody, position, publishedSchemas } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';
import {
  BINARY_COMMAND_MAX_BYTES,
  BINARY_COMMAND_MAX_CHARS,
  PLUGIN_FILE_MAX,
  PLUGIN_PARAM_NAME_MAX,
  PLUGIN_PARAM_VALUE_MAX,
  PLUGIN_PARAMS_MAX,
  binaryDataProblem,
  pluginParamsProblems,
} from '../../../plugins.js';

/** Any JSON value, passed as is; no body at all is the command `null` (the operation is described without one). */
const anyJsonBody = z.unknown().transform((v) => (v === undefined ? null : v));

/** A plugin switch: 0 (off) or 1 (on). */
const pluginSwitch = (what: string) =>
  z
    .number({ error: () => `${what} must be 0 or 1` })
    .int(`${what} must be 0 or 1`)
    .min(0, `${what} must be 0 or 1`)
    .max(1, `${what} must be 0 or 1`);

/** A required object: its own message when missing or not an object, zod's for an unknown member. */
const objectError = (message: string) => (issue: { code?: string }) =>
  issue.code === 'invalid_type' ? message : undefined;

/** The plugin header of a write: the file names the plugin; the switches are 0 or 1; the file's own fields pass unread. */
const pluginHeader = z.strictObject(
  {
    ...(contractBody('PF4Plugin') as z.ZodObject).shape,
    file: z
      .string({ error: () => 'file is required: the plugin file to update' })
      .min(1, 'file must not be empty')
      .max(PLUGIN_FILE_MAX, `file must be at most ${PLUGIN_FILE_MAX} characters`),
    enabled: pluginSwitch('enabled').optional(),
    managerAccess: pluginSwitch('managerAccess').optional(),
  },
  { error: objectError('plugin is required: {file, enabled?, managerAccess?}') },
);

/**
 * PF4PluginParam as a write: `plugin` with its file required; `params`, when given, the whole new parameter list
 * (bounded, names unique; a null value is empty).
 */
const pluginParamShape = (contractBody('PF4PluginParam') as z.ZodObject).shape;
const pluginParamBody = z
  .strictObject(
    {
      ...pluginParamShape,
      plugin: pluginHeader,
      params: (pluginParamShape.params as z.ZodType).describe(
        `The plugin's whole new parameter list (absent or null: kept; [] empties it): at most ${PLUGIN_PARAMS_MAX} entries, each name 1 to ${PLUGIN_PARAM_NAME_MAX} characters and unique in the list, each value at most ${PLUGIN_PARAM_VALUE_MAX} characters (null: empty).`,
      ),
    },
    { error: objectError('must be a JSON object {plugin, params?}') },
  )
  .superRefine((record, ctx) => {
    if (!Array.isArray(record.params)) return;
    for (const problem of pluginParamsProblems(record.params))
      ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  })
  .transform((record) => ({
    plugin: record.plugin,
    ...(Array.isArray(record.params)
      ? {
          params: record.params.map((p: { name: string; value?: string | null }) => ({
            name: p.name,
            value: p.value ?? '',
          })),
        }
      : {}),
  }));

/** PF4ExternalCommandBinaryRequest: `data`, the command bytes in base64, 1 to BINARY_COMMAND_MAX_BYTES of them. */
const binaryBody = z
  .strictObject({ data: z.unknown().optional() }, { error: objectError('must be a JSON object {data: base64}') })
  .superRefine((body, ctx) => {
    const problem = binaryDataProblem(body.data);
    if (problem) ctx.addIssue({ code: 'custom', path: ['data'], message: problem });
  })
  .transform((body) => ({ data: body.data as string }));
publishedSchemas.add(binaryBody, {
  type: 'object',
  required: ['data'],
  additionalProperties: false,
  properties: {
    data: {
      type: 'string',
      format: 'byte',
      minLength: 4,
      maxLength: BINARY_COMMAND_MAX_CHARS,
      description: `The command bytes, base64 (standard alphabet, padded): 1 to ${BINARY_COMMAND_MAX_BYTES} bytes.`,
    },
  },
});

const BOUNDS = `params at most ${PLUGIN_PARAMS_MAX}, names 1 to ${PLUGIN_PARAM_NAME_MAX} characters and unique, values at most ${PLUGIN_PARAM_VALUE_MAX}`;

export const plugins = {
  PluginsGet: defineOperation({
    name: 'PluginsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/PluginsGet`,
    tag: 'Plugins',
    summary:
      "The server's loaded plugins (file, name, version, copyright, enabled, configurable, managerAccess) in the server's list order, live.",
    response: 'PF4Plugin[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'PluginsGet' },
  }),
  PluginParamGet: defineOperation({
    name: 'PluginParamGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/PluginParamGet/{pos}`,
    tag: 'Plugins',
    summary:
      "The plugin at a zero-based position of the server's list order with its parameters, live; not-found envelope (naming the position and the list size) when out of range.",
    params: z.object({ pos: position('pos') }),
    response: 'PF4PluginParam',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'PluginParamGet', keyedRead: true },
  }),
  CfgRequestPlugin: defineOperation({
    name: 'CfgRequestPlugin',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/CfgRequestPlugin`,
    tag: 'Plugins',
    summary: "Every loaded plugin with its parameters, in the server's list order, live.",
    response: 'PF4PluginParam[]',
    timeout: 'read',
    read: 'live',
    answer: { kind: 'live', command: 'CfgRequestPlugin' },
  }),
  PluginUpdate: defineOperation({
    name: 'PluginUpdate',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/PluginUpdate`,
    tag: 'Plugins',
    summary: `Changes the state of the plugin named by plugin.file: enabled (0 or 1) when given, and its whole parameter list when params is given (${BOUNDS}); managerAccess and the file's own fields are kept; not-found envelope for an unknown file; true when written.`,
    body: pluginParamBody,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'PluginUpdate', keyedRead: true },
  }),
  CfgUpdatePlugin: defineOperation({
    name: 'CfgUpdatePlugin',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/CfgUpdatePlugin`,
    tag: 'Plugins',
    summary: `Writes the configuration entry of the plugin named by plugin.file: enabled and managerAccess (0 or 1) when given, and its whole parameter list when params is given (${BOUNDS}); the file's own fields are kept; not-found envelope for an unknown file; true when written.`,
    body: pluginParamBody,
    response: { type: 'boolean' },
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: { kind: 'live', command: 'CfgUpdatePlugin', keyedRead: true },
  }),
  ExternalCommandJSON: defineOperation({
    name: 'ExternalCommandJSON',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/ExternalCommandJSON`,
    tag: 'Plugins',
    summary:
      "Passes the JSON body verbatim (no body: null) to the first plugin that answers with success and returns that plugin's answer.",
    body: anyJsonBody,
    response: {},
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    // A plugin can do anything on the server: administrative. Its payload is opaque, control characters included.
    scope: 'webapi.admin',
    controlCharacters: { body: 'any' },
    answer: { kind: 'live', command: 'ExternalCommandJSON', args: (a) => ({ payload: a.body }) },
  }),
  ExternalCommandBinary: defineOperation({
    name: 'ExternalCommandBinary',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/ExternalCommandBinary`,
    tag: 'Plugins',
    summary: `Passes the bytes of data (base64, 1 to ${BINARY_COMMAND_MAX_BYTES} bytes) to the first enabled plugin open to managers and returns that plugin's answer bytes as data (base64).`,
    body: binaryBody,
    response: 'PF4ExternalCommandBinaryResponse',
    timeout: 'maintenance',
    read: 'live',
    mutating: true,
    // As the JSON channel: a plugin can do anything on the server.
    scope: 'webapi.admin',
    answer: { kind: 'live', command: 'ExternalCommandBinary' },
  }),
};
