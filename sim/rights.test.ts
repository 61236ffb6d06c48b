/**
 * Manager rights over a real connection: a command needing a right the manager lacks is refused with the family's
 * rights code, a report window asked for without the permission drops the connection, and a PF4 manager's rights
 * follow the server's manager configuration at the next login.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PF4_RESULT, PF5_RESULT } from '../shared/resultCodes.js';
import { startSim, type RunningSim } from './index.js';
import { ManagerClient, getState } from '../test/support/sim/managerClient.js';

let sim: RunningSim;
const clients: ManagerClient[] = [];

async function loggedIn(server: string, login: number, password: string): Promise<ManagerClient> {
  const client = await ManagerClient.connect(sim.port, server);
  clients.push(client);
  await client.ok('login', { login, password, pump: false });
  return client;
}

beforeAll(async () => {
  sim = await startSim({
    config: {
      servers: [
        {
          name: 'pf4',
          family: 'PF4',
          accounts: 20,
          trades: 10,
          ticksPerSecond: 0,
          managers: [
            { login: 1000, password: 'admin-pw' },
            { login: 2000, password: 'desk-pw', rights: ['manager', 'trades'] },
          ],
        },
        {
          name: 'pf5',
          family: 'PF5',
          accounts: 20,
          trades: 10,
          ticksPerSecond: 0,
          managers: [{ login: 2000, password: 'desk-pw', rights: ['AccRead'] }],
        },
      ],
    },
  });
});

afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

afterAll(async () => {
  await sim.close();
});

describe('manager rights', () => {
  it('answers NotEnoughRights for administrator commands and keeps the connection', async () => {
    const desk = await loggedIn('pf4', 2000, 'desk-pw');
    const error = await desk.fails('HistoryCorrect', { symbol: 'EURUSD' });
    expect(error).toEqual({ code: PF4_RESULT.NotEnoughRights, message: 'HistoryCorrect needs the admin right' });
    expect((await desk.fails('AdmBalanceCheck', { login: 100000 })).code).toBe(PF4_RESULT.NotEnoughRights);
    expect((await desk.fails('CfgDeleteHoliday', { pos: 0 })).code).toBe(PF4_RESULT.NotEnoughRights);
    expect(await desk.ok('UserRecordRequest', { login: 100000 })).toMatchObject({ login: 100000 });
  });

  it('drops the connection when a report window is asked for without the reports permission', async () => {
    const desk = await loggedIn('pf4', 2000, 'desk-pw');
    const before = (await getState(sim.port, 'pf4')).rightsDrops;
    void desk.call('ReportsRequest', { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', logins: [100000] });
    await desk.waitForClose();
    expect(desk.closeCode).toBe(1008);
    expect((await getState(sim.port, 'pf4')).rightsDrops).toBe(before + 1);
    const admin = await loggedIn('pf4', 1000, 'admin-pw');
    expect(
      await admin.ok('ReportsRequest', { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', logins: [100000] }),
    ).toEqual([]);
  });

  it('applies a changed manager configuration at the next login', async () => {
    const admin = await loggedIn('pf4', 1000, 'admin-pw');
    const managers = await admin.ok<Array<Record<string, unknown>>>('CfgRequestManager');
    const desk = managers.find((m) => m.login === 2000)!;
    expect(desk).toMatchObject({ manager: true, trades: true, admin: false });
    await admin.ok('CfgUpdateManager', { record: { ...desk, admin: true } });
    const promoted = await ManagerClient.connect(sim.port, 'pf4');
    clients.push(promoted);
    const login = await promoted.ok<{ rights: string[] }>('login', { login: 2000, password: 'desk-pw', pump: false });
    expect(login.rights).toEqual(['manager', 'admin', 'trades']);
    expect(await promoted.ok('HistoryCorrect', { symbol: 'EURUSD' })).toBe(0);
    await admin.ok('CfgUpdateManager', { record: desk });
  });

  it('answers ErrPermissions on PF5 for a change the manager has no right to', async () => {
    const desk = await loggedIn('pf5', 2000, 'desk-pw');
    expect(
      (await desk.fails('UserAdd', { record: { group: 'demo\\retail', leverage: 100, firstName: 'A' } })).code,
    ).toBe(PF5_RESULT.ErrPermissions);
    expect(await desk.ok('UserRequest', { login: 500000 })).toMatchObject({ login: 500000 });
  });
});
