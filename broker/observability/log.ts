/**
 * Structured logging for the broker: one JSON object per line with time, level and message, plus whatever context
 * the caller knows (platform, op, traceId, ms). Secrets never reach a log line because no caller passes them; the
 * platform configuration is logged by id and server only.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Record<string, unknown> & { msg: string };

export interface Logger {
  (level: LogLevel, fields: LogFields): void;
  /** Entries below this level are dropped; lets hot paths skip building them. Absent: everything is logged. */
  readonly minLevel?: LogLevel | 'off';
}

const RANK: Record<LogLevel | 'off', number> = { debug: 10, info: 20, warn: 30, error: 40, off: 100 };

/** Whether an entry at `level` would be written, so a caller can skip building it. */
export function logs(log: Logger, level: LogLevel): boolean {
  return RANK[level] >= RANK[log.minLevel ?? 'debug'];
}

/** A logger writing JSON lines to a stream, dropping entries below `minLevel`. */
export function jsonLineLogger(minLevel: LogLevel = 'info', write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const floor = RANK[minLevel] ?? RANK.info;
  const log = (level: LogLevel, fields: LogFields) => {
    if (RANK[level] < floor) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level, ...fields })}\n`);
  };
  return Object.assign(log, { minLevel });
}

/** The logger of in-process brokers that were given none: tests stay quiet. */
export const silentLogger: Logger = Object.assign(() => {}, { minLevel: 'off' as const });

export function parseLogLevel(raw: string | undefined): LogLevel {
  return raw === 'debug' || raw === 'warn' || raw === 'error' ? raw : 'info';
}
