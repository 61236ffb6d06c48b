/**
 * The fault switches of one trading server, set through the control channel: answer latency, refused logins and a
 * frozen server. Drops and restarts are actions on the server itself (see TradingServer); this holds only the state
 * that later requests consult.
 */
export class Faults {
  delayMs = 0;
  /** When set, the delay applies only to this command. */
  delayCmd: string | null = null;
  refuseLogin = false;
  frozen = false;

  setDelay(ms: number, cmd: string | null): void {
    this.delayMs = ms;
    this.delayCmd = ms > 0 ? cmd : null;
  }

  /** Milliseconds to hold the answer to `cmd`. */
  delayFor(cmd: string): number {
    if (this.delayMs <= 0) return 0;
    return this.delayCmd === null || this.delayCmd === cmd ? this.delayMs : 0;
  }

  describe(): Record<string, unknown> {
    return { delayMs: this.delayMs, delayCmd: this.delayCmd, refuseLogin: this.refuseLogin, frozen: this.frozen };
  }
}
