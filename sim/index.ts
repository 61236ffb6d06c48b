/** The trading-server simulator: start it in-process, or run `main.ts` for a separate process. */
export { startSim, DEFAULT_SEED, type SimOptions, type RunningSim } from './sim.js';
export {
  parseConfig,
  loadConfigFile,
  defaultConfig,
  DEFAULT_MANAGER_PASSWORD,
  type SimConfig,
  type SimConfigInput,
  type ServerConfig,
  type ManagerConfig,
} from './config/simConfig.js';
export { TradingServer } from './server/tradingServer.js';
