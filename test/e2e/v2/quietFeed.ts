/**
 * A stack whose simulator's quote feed is off, for end-to-end files that compare quotes and bars exactly: every quote
 * and bar is one a test (or the world's start) put there. Also a manager session on the PF4 server, without the change
 * stream, to read the server's own state.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { ManagerClient } from '../../support/sim/managerClient.js';
import { stackForFile, type Client } from '../support.js';

export function quietFeedStack(): { client: Client; sim: ManagerClient } {
  const password = randomBytes(18).toString('base64url');
  // The file runs in its own process, so the stack's processes take the managers' password from here.
  process.env.SIM_MANAGER_PASSWORD = password;
  const managers = [{ login: 1000, password }];
  const setup = stackForFile({
    simConfig: {
      servers: [
        { name: 'demo-pf4', family: 'PF4', ticksPerSecond: 0, managers },
        { name: 'demo-pf5', family: 'PF5', ticksPerSecond: 0, managers },
      ],
    },
  });
  const holder = {} as { client: Client; sim: ManagerClient };
  beforeAll(async () => {
    holder.client = setup.client;
    holder.sim = await ManagerClient.connect(setup.client.stack.sim.port, 'demo-pf4');
    await holder.sim.ok('login', { login: 1000, password, pump: false });
  });
  afterAll(() => holder.sim?.close());
  return holder;
}
