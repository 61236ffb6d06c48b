/**
 * The files under test/ share their worker processes (vitest.config.ts, `isolate: false`), and some set variables of
 * their own for the stack they start (a manager password, a broker secret): each file's environment is put back as it
 * found it once the file is done, so that no file starts its stack with another's settings.
 */
import { afterAll } from 'vitest';

const found = { ...process.env };
afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in found)) delete process.env[name];
  Object.assign(process.env, found);
});
