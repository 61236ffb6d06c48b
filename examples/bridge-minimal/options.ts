/**
 * The minimal bridge's command line: each setting from its flag, else its environment variable, else its default.
 * Every refusal names the flag (and the variable) and the rule. The manager's password is read only from the
 * environment variable `--password-env` names, and no message ever holds it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseAddressRanges, type AddressRange } from '../../shared/addressRanges.js';

export const USAGE = `The minimal PF4 bridge: a trading server of accounts and groups from a JSON file, behind the manager protocol

  npm run bridge:minimal -- [--port N] [--host ADDRESS] [--world FILE] [--name NAME] [--login N]
                            [--password-env VAR] [--allow RANGES]

  --port          listening port (BRIDGE_PORT; default 8792; 0: any free port)
  --host          listening address (BRIDGE_HOST; default 127.0.0.1)
  --world         the world file (BRIDGE_WORLD; default examples/bridge-minimal/world.json)
  --name          the trading server's name, its path ws://host:port/NAME (BRIDGE_NAME; default minimal-pf4)
  --login         the manager login the broker logs in with (BRIDGE_MANAGER_LOGIN; default 1000)
  --password-env  the environment variable holding that manager's password (default BRIDGE_MANAGER_PASSWORD)
  --allow         addresses and CIDR ranges besides loopback that may connect (BRIDGE_ALLOW; default none)`;

export const DEFAULT_WORLD = join(dirname(fileURLToPath(import.meta.url)), 'world.json');

export interface BridgeOptions {
  port: number;
  host: string;
  world: string;
  name: string;
  login: number;
  password: string;
  /** The variable the password came from (for messages). */
  passwordEnv: string;
  allow: AddressRange[];
}

/** A refusal of the command line; its message names the flag. */
export class UsageError extends Error {}

export function parseBridgeOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BridgeOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        world: { type: 'string' },
        name: { type: 'string' },
        login: { type: 'string' },
        'password-env': { type: 'string' },
        allow: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) throw new UsageError(USAGE);
  const setting = (flag: keyof typeof values, variable?: string) => {
    const value = values[flag] ?? (variable ? env[variable] : undefined);
    const source = values[flag] !== undefined || !variable ? `--${flag}` : `${variable} (--${flag})`;
    return { value: value as string | undefined, source };
  };

  const port = setting('port', 'BRIDGE_PORT');
  const portNumber = port.value === undefined ? 8792 : Number(port.value);
  if (!/^\d+$/.test(port.value ?? '0') || portNumber > 65535)
    throw new UsageError(`${port.source} must be a port from 0 to 65535, got ${JSON.stringify(port.value)}`);

  const login = setting('login', 'BRIDGE_MANAGER_LOGIN');
  const loginNumber = login.value === undefined ? 1000 : Number(login.value);
  if (!/^\d+$/.test(login.value ?? '1') || loginNumber < 1 || !Number.isSafeInteger(loginNumber)) {
    throw new UsageError(`${login.source} must be an integer >= 1, got ${JSON.stringify(login.value)}`);
  }

  const name = setting('name', 'BRIDGE_NAME');
  const serverName = name.value ?? 'minimal-pf4';
  if (!/^[A-Za-z0-9._~-]{1,64}$/.test(serverName)) {
    throw new UsageError(
      `${name.source} must be 1 to 64 letters, digits, '.', '_', '~' or '-' (it is the URL's path), got ${JSON.stringify(serverName)}`,
    );
  }

  const passwordEnv = values['password-env'] ?? 'BRIDGE_MANAGER_PASSWORD';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(passwordEnv))
    throw new UsageError(
      '--password-env must name an environment variable (letters, digits and _, not starting with a digit); the value given is not repeated, in case it is the password itself',
    );
  const password = env[passwordEnv];
  if (password === undefined || password === '') {
    throw new UsageError(
      values['password-env'] === undefined
        ? `the manager's password: the environment variable ${passwordEnv} is not set (--password-env names another)`
        : "the manager's password: the environment variable --password-env names is not set or empty (its name is not repeated, in case it is the password itself)",
    );
  }

  const allow = setting('allow', 'BRIDGE_ALLOW');
  const ranges = parseAddressRanges(allow.value);
  if (ranges.invalid.length)
    throw new UsageError(`${allow.source} must list IP addresses and CIDR ranges, not ${ranges.invalid.join(', ')}`);

  return {
    port: portNumber,
    host: setting('host', 'BRIDGE_HOST').value ?? '127.0.0.1',
    world: setting('world', 'BRIDGE_WORLD').value ?? DEFAULT_WORLD,
    name: serverName,
    login: loginNumber,
    password,
    passwordEnv,
    allow: ranges.ranges,
  };
}
