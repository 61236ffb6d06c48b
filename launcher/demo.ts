/** The embedded default's fixed identities: stable so that the documentation's examples keep working across restarts. */
export const DEMO_ORG_ID = 'd0000000-0000-4000-8000-00000000000d';
export const DEMO_PF4_ID = 'd4000000-0000-4000-8000-0000000000d4';
export const DEMO_PF5_ID = 'd5000000-0000-4000-8000-0000000000d5';
export const DEMO_PF4_SERVER = 'demo-pf4';
export const DEMO_PF5_SERVER = 'demo-pf5';
export const DEMO_MANAGER_LOGIN = 1000;
/** The broker's environment variable holding the demo manager's password: its platform file names it (`passwordEnv`). */
export const DEMO_PASSWORD_ENV = 'DEMO_MANAGER_PASSWORD';
