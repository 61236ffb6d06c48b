/**
 * The minimal bridge's command line: defaults, flags over environment variables, and refusals naming the flag (and
 * the variable) and the rule. The password comes only from the variable `--password-env` names and is in no message.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_WORLD, parseBridgeOptions, USAGE, UsageError } from './options.js';

const SECRET = 'options-test-secret';
const env = { BRIDGE_MANAGER_PASSWORD: SECRET };
const refusal = (argv: string[], environment: NodeJS.ProcessEnv = env) => {
  try {
    parseBridgeOptions(argv, environment);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('the command line was accepted');
};

describe("the minimal bridge's options", () => {
  it('defaults: port 8792 on loopback, the seed world, minimal-pf4, manager 1000, BRIDGE_MANAGER_PASSWORD', () => {
    expect(parseBridgeOptions([], env)).toEqual({
      port: 8792,
      host: '127.0.0.1',
      world: DEFAULT_WORLD,
      name: 'minimal-pf4',
      login: 1000,
      password: SECRET,
      passwordEnv: 'BRIDGE_MANAGER_PASSWORD',
      allow: [],
    });
  });

  it('takes each setting from its flag, else its environment variable', () => {
    const fromEnv = {
      BRIDGE_PORT: '9100',
      BRIDGE_HOST: '0.0.0.0',
      BRIDGE_WORLD: '/tmp/w.json',
      BRIDGE_NAME: 'live-pf4',
      BRIDGE_MANAGER_LOGIN: '77',
      BRIDGE_ALLOW: '10.0.0.0/8',
      OTHER_SECRET: 'other',
    };
    expect(parseBridgeOptions(['--password-env', 'OTHER_SECRET'], fromEnv)).toMatchObject({
      port: 9100,
      host: '0.0.0.0',
      world: '/tmp/w.json',
      name: 'live-pf4',
      login: 77,
      password: 'other',
      passwordEnv: 'OTHER_SECRET',
      allow: [{ family: 'ipv4', address: '10.0.0.0', prefix: 8 }],
    });
    expect(
      parseBridgeOptions(['--port', '0', '--login', '5', '--name', 'x', '--world', 'w.json', '--allow', '10.1.2.3'], {
        ...fromEnv,
        ...env,
      }),
    ).toMatchObject({ port: 0, login: 5, name: 'x', world: 'w.json', allow: [{ address: '10.1.2.3', prefix: 32 }] });
  });

  it('refuses bad settings naming the flag or the variable', () => {
    expect(refusal(['--port', '70000'])).toBe('--port must be a port from 0 to 65535, got "70000"');
    expect(refusal([], { ...env, BRIDGE_PORT: 'http' })).toBe(
      'BRIDGE_PORT (--port) must be a port from 0 to 65535, got "http"',
    );
    expect(refusal(['--login', '0'])).toBe('--login must be an integer >= 1, got "0"');
    expect(refusal(['--name', 'a/b'])).toMatch(/^--name must be 1 to 64 letters/);
    expect(refusal(['--allow', 'broker.example.com'])).toBe(
      '--allow must list IP addresses and CIDR ranges, not broker.example.com',
    );
    expect(refusal(['--password-env', 'not a name'])).toBe(
      '--password-env must name an environment variable (letters, digits and _, not starting with a digit); the value given is not repeated, in case it is the password itself',
    );
    expect(refusal(['--verbose'])).toMatch(/--verbose/);
    expect(refusal(['--help'])).toBe(USAGE);
  });

  it('refuses to start without the password, naming the default variable but never repeating what --password-env was given; no message holds the password', () => {
    expect(refusal([], {})).toBe(
      "the manager's password: the environment variable BRIDGE_MANAGER_PASSWORD is not set (--password-env names another)",
    );
    // A password given by mistake as the variable's name is not printed back.
    expect(refusal(['--password-env', 'Hunter2'], env)).toBe(
      "the manager's password: the environment variable --password-env names is not set or empty (its name is not repeated, in case it is the password itself)",
    );
    expect(refusal(['--password-env', 'hunter 2'], env)).not.toContain('hunter 2');
    for (const argv of [['--port', 'x'], ['--login', 'x'], ['--allow', 'x'], ['--name', '/'], ['--help']])
      expect(refusal(argv)).not.toContain(SECRET);
  });
});
