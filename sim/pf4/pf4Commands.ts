/**
 * The PF4 manager commands the simulator answers (besides login, Ping, ServerTime and SrvRestart, which the
 * protocol layer handles for every family), assembled from one module per area into the world's one registry.
 * Errors carry PF4 result codes: InvalidData for bad arguments, unknown keys and collisions, trade codes for refused
 * trade transactions, NotEnoughRights for a missing manager right.
 */
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { CommandRegistry } from '../world/commandRegistry.js';
import { registerAccountCommands } from './commands/accountCommands.js';
import { registerTradeCommands } from './commands/tradeCommands.js';
import { registerMarketCommands } from './commands/marketCommands.js';
import { registerConfigCommands } from './commands/configCommands.js';
import { registerChartCommands } from './commands/chartCommands.js';
import { registerReportCommands } from './commands/reportCommands.js';
import { registerServiceCommands } from './commands/serviceCommands.js';
import { PF4_RIGHTS } from './pf4Rights.js';
import type { Pf4World } from './pf4World.js';

export function pf4Commands(world: Pf4World): CommandRegistry {
  const registry = new CommandRegistry(PF4_RESULT.InvalidData, PF4_RIGHTS);
  registerAccountCommands(registry, world);
  registerTradeCommands(registry, world);
  registerMarketCommands(registry, world);
  registerConfigCommands(registry, world);
  registerChartCommands(registry, world);
  registerReportCommands(registry, world);
  registerServiceCommands(registry, world);
  return registry;
}
