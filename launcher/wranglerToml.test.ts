/**
 * The TOML subset the local edge reads wrangler.toml with (launcher/wranglerToml.ts): the real wrangler.toml reads as
 * wrangler itself reads it, each construct of the subset, and a refusal naming the line for anything outside it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { experimental_readRawConfig } from 'wrangler';
import { parseToml, readWranglerConfig, sqliteClasses } from './wranglerToml.js';

const file = join(import.meta.dirname, '..', 'wrangler.toml');

describe('wrangler.toml', () => {
  it('reads as wrangler reads it', () => {
    const ours = readWranglerConfig(file);
    const wranglers = experimental_readRawConfig({ config: file }).rawConfig;
    expect(ours).toStrictEqual(JSON.parse(JSON.stringify(wranglers)));
  }, 60_000);

  it('gives SQLite storage to the classes the migrations create with it, less those deleted later', () => {
    expect([...sqliteClasses(readWranglerConfig(file))].sort()).toStrictEqual([
      'AuditTrail',
      'ClientRateLimiter',
      'IdempotencyLedger',
      'PlatformLink',
      'PlatformStream',
      'WebhookDeliveries',
      'WebhookSource',
    ]);
  });
});

describe('parseToml', () => {
  it('reads tables, arrays of tables, dotted keys and every value of the subset', () => {
    const doc = parseToml(
      [
        '# a comment',
        'name = "gw" # after a value',
        'n = -1_000',
        'empty = ""',
        'on = true',
        'off = false',
        "literal = 'C:\\path # not a comment'",
        'escaped = "a\\"b\\\\c\\n\\u00e9"',
        'list = ["a", \'b\', 3, [true], ]',
        'inline = { pattern = "x.example.com", custom_domain = true }',
        'a.b = "dotted"',
        '',
        '[vars]',
        'URL = "http://127.0.0.1:8790"',
        '[[objects.bindings]]',
        'name = "ONE"',
        '[[objects.bindings]]',
        'name = "TWO"',
        '[env.staging.vars]',
        '"quoted key" = "v"',
        '[[env.staging.objects.bindings]]',
        'name = "THREE"',
      ].join('\n'),
    );
    expect(doc).toStrictEqual({
      name: 'gw',
      n: -1000,
      empty: '',
      on: true,
      off: false,
      literal: 'C:\\path # not a comment',
      escaped: 'a"b\\c\né',
      list: ['a', 'b', 3, [true]],
      inline: { pattern: 'x.example.com', custom_domain: true },
      a: { b: 'dotted' },
      vars: { URL: 'http://127.0.0.1:8790' },
      objects: { bindings: [{ name: 'ONE' }, { name: 'TWO' }] },
      env: { staging: { vars: { 'quoted key': 'v' }, objects: { bindings: [{ name: 'THREE' }] } } },
    });
  });

  it('refuses what the subset leaves out, naming the line', () => {
    const refused = (text: string) => {
      try {
        parseToml(text, 'w.toml');
        return 'read';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refused('a = 1\na = 2')).toBe('w.toml:2: a is defined twice');
    expect(refused('x = 1.5')).toBe('w.toml:1: unsupported value 1.5');
    expect(refused('d = 2025-09-01')).toBe('w.toml:1: unsupported value 2025-09-01');
    expect(refused('s = """\nmore"""')).toBe('w.toml:1: multi-line strings are not supported');
    expect(refused('list = [\n"a"]')).toBe('w.toml:1: arrays must close on their line');
    expect(refused('s = "open')).toBe('w.toml:1: unterminated string');
    expect(refused('k = "v" extra')).toBe('w.toml:1: unexpected extra');
    expect(refused('a = 1\n[a]')).toBe('w.toml:2: a is not a table');
    expect(refused('[t]\n[[t]]')).toBe('w.toml:2: t is not an array of tables');
  });
});
