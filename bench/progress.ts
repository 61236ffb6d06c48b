/**
 * Progress of a long benchmark on standard error (standard output keeps the report): which run and phase is going,
 * the time spent, and how long remains. The remaining time is the measuring windows still to come (fixed) plus the
 * set-up phases (start-up, resync) still to come, each estimated from the same phase of an earlier run of the same
 * world; while a world's set-up has not been measured yet, the estimate says so instead of guessing. On a terminal
 * a countdown line is rewritten in place; otherwise a line is printed every `quietEverySeconds`.
 */

export interface ProgressRun {
  /** What the run measures, e.g. `PF4 scale world`. */
  label: string;
  /** Runs of the same world share their set-up estimates. */
  world: string;
  windowSeconds: number;
}

export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean;
}

const clock = (seconds: number) => {
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

export class Progress {
  private index = -1;
  private phaseStarted = 0;
  private phaseName = '';
  /** Set-up seconds measured per world (the last run's). */
  private readonly setupSeconds = new Map<string, number>();
  private setupStarted = 0;
  private readonly started: number;
  private countdownTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly runs: ProgressRun[],
    private readonly out: ProgressSink = process.stderr,
    private readonly now: () => number = () => performance.now(),
    private readonly quietEverySeconds = 5,
  ) {
    this.started = now();
  }

  /** The next run begins (its set-up phases follow). */
  nextRun(): void {
    this.stopCountdown();
    this.index++;
    this.phaseName = '';
    this.setupStarted = this.now();
  }

  /** A set-up phase of the current run begins: start-up, resync, … */
  phase(name: string): void {
    this.stopCountdown();
    this.phaseName = name;
    this.phaseStarted = this.now();
    this.line(`${name}…`);
  }

  /** The current run's measuring window begins; counts down until `end()`. */
  window(): void {
    const run = this.runs[this.index];
    this.setupSeconds.set(run.world, (this.now() - this.setupStarted) / 1000);
    this.phaseName = 'measuring';
    this.phaseStarted = this.now();
    const windowEnds = this.now() + run.windowSeconds * 1000;
    const tick = () => {
      const left = (windowEnds - this.now()) / 1000;
      const text = `measuring, ${clock(left)} left of the ${run.windowSeconds} s window`;
      if (this.out.isTTY) this.out.write(`\r\u001b[2K${this.prefix()} ${text}${this.remainingText(left)}`);
      else this.line(text, left);
    };
    tick();
    this.countdownTimer = setInterval(tick, (this.out.isTTY ? 1 : this.quietEverySeconds) * 1000);
    this.countdownTimer.unref?.();
  }

  /** The current run is over. */
  endRun(): void {
    this.stopCountdown();
    this.line(`done in ${clock((this.now() - this.setupStarted) / 1000)}`);
  }

  /** Everything is over. */
  finish(): void {
    this.stopCountdown();
    this.out.write(`bench: all ${this.runs.length} runs done in ${clock((this.now() - this.started) / 1000)}\n`);
  }

  /** Seconds still to come after the current phase, and whether every part of it is known. */
  remaining(currentWindowLeft = 0): { seconds: number; complete: boolean } {
    let seconds = currentWindowLeft;
    let complete = true;
    const current = this.runs[this.index];
    // The current run's window, if it has not begun.
    if (current && this.phaseName !== 'measuring') {
      seconds += current.windowSeconds;
      const setup = this.setupSeconds.get(current.world);
      if (setup === undefined) complete = false;
      else seconds += Math.max(0, setup - (this.now() - this.setupStarted) / 1000);
    }
    for (const run of this.runs.slice(this.index + 1)) {
      seconds += run.windowSeconds;
      const setup = this.setupSeconds.get(run.world);
      if (setup === undefined) complete = false;
      else seconds += setup;
    }
    return { seconds, complete };
  }

  private remainingText(currentWindowLeft = 0): string {
    const { seconds, complete } = this.remaining(currentWindowLeft);
    return complete
      ? `; about ${clock(seconds)} left in all`
      : `; at least ${clock(seconds)} left in all (some start-ups not measured yet)`;
  }

  private prefix(): string {
    const run = this.runs[this.index];
    return `[bench ${this.index + 1}/${this.runs.length} ${clock((this.now() - this.started) / 1000)}] ${run?.label ?? ''}:`;
  }

  private line(text: string, currentWindowLeft = 0): void {
    if (this.out.isTTY) this.out.write('\r\u001b[2K');
    this.out.write(`${this.prefix()} ${text}${this.remainingText(currentWindowLeft)}\n`);
  }

  private stopCountdown(): void {
    if (this.countdownTimer === undefined) return;
    clearInterval(this.countdownTimer);
    this.countdownTimer = undefined;
    if (this.out.isTTY) this.out.write('\n');
  }
}
