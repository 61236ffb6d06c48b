/**
 * Structured logging for the broker: one JSON object per line with time, level and message, plus whatever context
 * the caller knows (platform, op, traceId, ms). Secrets never reach a log line because no caller passes them; the
 * platform configuration is logged by id and server only.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Record<string, unknown> & { msg: string };

export type Logger = (level: LogLevel, fields: LogFields) => void;

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger writing JSON lines to a stream, dropping entries below `minLevel`. */
export function jsonLineLogger(minLevel: LogLevel = 'info', write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const floor = RANK[minLevel] ?? RANK.info;
  return (level, fields) => {
    if (RANK[level] < floor) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level, ...fields })}\n`);
  };
}

/** The logger of in-process brokers that were given none: tests stay quiet. */
export const silentLogger: Logger = () => {};

export function parseLogLevel(raw: string | undefined): LogLevel {
  return raw === 'debug' || raw === 'warn' || raw === 'error' ? raw : 'info';
}
