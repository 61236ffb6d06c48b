/**
 * The SignalR JSON hub protocol, version 1 (ASP.NET Core): records separated by 0x1E, a handshake, then typed
 * messages. Only what the hubs use: invocations both ways, completions, server-to-client streams, cancellation,
 * pings and close.
 */
export const RS = '\u001e';

export const enum MessageType {
  Invocation = 1,
  StreamItem = 2,
  Completion = 3,
  StreamInvocation = 4,
  CancelInvocation = 5,
  Ping = 6,
  Close = 7,
}

export interface HubMessage {
  /** As received: a number the enum may not name. */
  type: MessageType;
  invocationId?: string;
  target?: string;
  arguments?: unknown[];
  item?: unknown;
  result?: unknown;
  error?: string;
}

/** One frame's records, parsed; a record that is not a JSON object is returned as null. */
export function parseRecords(text: string): Array<Record<string, unknown> | null> {
  return text
    .split(RS)
    .filter((r) => r.length > 0)
    .map((r) => {
      try {
        const v: unknown = JSON.parse(r);
        return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
      } catch {
        return null;
      }
    });
}

export const frame = (message: object) => JSON.stringify(message) + RS;
export const invocation = (target: string, ...args: unknown[]) =>
  frame({ type: MessageType.Invocation, target, arguments: args });
export const streamItem = (invocationId: string, item: unknown) =>
  frame({ type: MessageType.StreamItem, invocationId, item });
export const completion = (invocationId: string, outcome: { result?: unknown; error?: string } = {}) =>
  frame({ type: MessageType.Completion, invocationId, ...outcome });
export const PING = frame({ type: MessageType.Ping });
export const close = (error?: string, allowReconnect = false) =>
  frame({ type: MessageType.Close, ...(error ? { error } : {}), allowReconnect });
