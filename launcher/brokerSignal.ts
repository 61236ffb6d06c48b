/**
 * Faults for failover drills and tests: one signal sent to one broker of a stack, and what followed. SIGKILL (a
 * crash) and SIGTERM (a drain, then an exit) are waited for until the process has exited, then, when asked or when
 * the stack supervises it, until the broker runs again on its port; SIGSTOP (a hung broker: its port open, nothing
 * answered) and SIGCONT (it resumes) return once sent.
 */
import type { Service, Stack } from './stack.js';

export type BrokerSignal = 'SIGKILL' | 'SIGTERM' | 'SIGSTOP' | 'SIGCONT';

export interface SignalBrokerOptions {
  /**
   * After an exit: `supervisor` waits for the supervisor's own restart (after its backoff), `now` starts the broker
   * again at once (`stack.restartBroker`), `none` leaves it down. Default: `supervisor` on a supervised stack, else
   * `none`.
   */
  restart?: 'supervisor' | 'now' | 'none';
  /** Longest wait for the exit (ms); SIGTERM's includes the broker's drain. Default 10 000. */
  exitTimeoutMs?: number;
  /** Longest wait for the restarted broker to be ready (ms). Default 30 000. */
  restartTimeoutMs?: number;
}

export interface SignalOutcome {
  signal: BrokerSignal;
  /** How the process ended (`signal SIGKILL`, `code 0`); null for SIGSTOP and SIGCONT. */
  exited: string | null;
  /** From the signal to the exit (ms). */
  exitMs: number | null;
  /** The broker's new process, when it was restarted. */
  restarted: Service | null;
  /** From the signal to the new process being ready (ms). */
  restartMs: number | null;
}

/** Sends `signal` to broker `index` of `stack` (its child process) and waits as described above. */
export async function signalBroker(
  stack: Pick<Stack, 'brokers' | 'supervisors' | 'restartBroker'>,
  index: number,
  signal: BrokerSignal,
  options: SignalBrokerOptions = {},
): Promise<SignalOutcome> {
  const service = stack.brokers[index];
  if (!service) throw new Error(`no broker ${index}: the stack runs ${stack.brokers.length}`);
  const child = service.child;
  const sentAt = Date.now();
  if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
    child.kill(signal);
    return { signal, exited: null, exitMs: null, restarted: null, restartMs: null };
  }
  const supervisor = stack.supervisors?.brokers[index];
  const restart = options.restart ?? (supervisor ? 'supervisor' : 'none');
  if (restart === 'supervisor' && !supervisor)
    throw new Error('the stack does not supervise its brokers (supervise is off)');
  // Asked before the signal: a restart is never missed however soon it comes.
  const nextStart = restart === 'supervisor' ? supervisor!.nextStart() : undefined;
  const exit =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await within(exit, options.exitTimeoutMs ?? 10_000, `${service.name} did not exit after ${signal}`);
  const exited = child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
  const exitMs = Date.now() - sentAt;
  if (restart === 'none') return { signal, exited, exitMs, restarted: null, restartMs: null };
  const restarted = await within(
    restart === 'now' ? stack.restartBroker(index) : nextStart!,
    options.restartTimeoutMs ?? 30_000,
    `${service.name} was not restarted after ${signal}`,
  );
  return { signal, exited, exitMs, restarted, restartMs: Date.now() - sentAt };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
