import { afterEach, describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import { isEntryModule } from './entryModule.js';

const argv = process.argv;
afterEach(() => {
  process.argv = argv;
});

describe('isEntryModule', () => {
  it('is true for the module the process was started with, by a relative or absolute path, and false for others', () => {
    const script = '/repo/scripts/secrets.ts';
    process.argv = ['node', script];
    expect(isEntryModule(pathToFileURL(script).href)).toBe(true);
    expect(isEntryModule(pathToFileURL('/repo/scripts/registry.ts').href)).toBe(false);
    process.argv = ['node', 'scripts/secrets.ts'];
    expect(isEntryModule(pathToFileURL(`${process.cwd()}/scripts/secrets.ts`).href)).toBe(true);
  });

  it('is false when the process names no script (a REPL, node -e)', () => {
    process.argv = ['node'];
    expect(isEntryModule(pathToFileURL('/repo/scripts/secrets.ts').href)).toBe(false);
    process.argv = ['node', ''];
    expect(isEntryModule(pathToFileURL('/repo/scripts/secrets.ts').href)).toBe(false);
  });
});
