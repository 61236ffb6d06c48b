/**
 * Structured logging for the broker: one JSON object per line with level, time and message, plus whatever context
 * the caller knows (platform, op, traceId, ms), written by pino. Callers keep one shape, `log(level, fields)`, and
 * never pass secrets; as a second line of defence pino redacts the fields that could carry one (passwords, the link
 * secret, authorization headers, tokens) wherever a caller puts them, at the top level or one or two levels down.
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

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

/** Field names whose values are replaced by `[redacted]` in every line. */
export const REDACTED_FIELDS = [
  'password',
  'newPassword',
  'passwordInvestor',
  'managerPassword',
  'secret',
  'brokerSecret',
  'BROKER_SECRET',
  'authorization',
  'Authorization',
  'token',
  'accessToken',
  'access_token',
  'clientSecret',
  'client_secret',
  'signingKey',
  'AUTH_SIGNING_KEY',
  'cookie',
];
const REDACT_PATHS = REDACTED_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);
export const REDACTED = '[redacted]';

/** A pino logger writing JSON lines to `stream`, in the broker's line format (`level` by name, ISO `time`). */
export function pinoLogger(minLevel: LogLevel | 'off', stream: DestinationStream): PinoLogger {
  return pino(
    {
      level: minLevel === 'off' ? 'silent' : minLevel,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
    },
    stream,
  );
}

/** A logger writing JSON lines (through pino) to `write`, standard output by default, dropping entries below `minLevel`. */
export function jsonLineLogger(
  minLevel: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stdout.write(l),
): Logger {
  const logger = pinoLogger(RANK[minLevel] === undefined ? 'info' : minLevel, { write });
  const log = (level: LogLevel, fields: LogFields) => {
    logger[level](fields);
  };
  return Object.assign(log, { minLevel });
}

/** The logger of in-process brokers that were given none: tests stay quiet. */
export const silentLogger: Logger = Object.assign(() => {}, { minLevel: 'off' as const });

export function parseLogLevel(raw: string | undefined): LogLevel {
  return raw === 'debug' || raw === 'warn' || raw === 'error' ? raw : 'info';
}
