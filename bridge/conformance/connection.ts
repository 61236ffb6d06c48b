/**
 * One manager-protocol connection as the conformance suite drives it: requests with ids of the suite's choosing,
 * every frame kept in arrival order (its text, its value read with shared/losslessJson.ts, the time it came), answers
 * matched by id, and every wait bounded, so a server that never answers fails the waiting rule instead of hanging the
 * suite. The suite's observer sees every answer frame of every connection (for the rules about answers as a whole).
 *
 * Invariants: a request's promise settles exactly once (answer, close, or time-out); a second answer to the same id,
 * or an answer to an id never sent, is kept for the observer and settles nothing. `show` never renders a secret a
 * running suite registered (`holdSecrets`), whole or in part: it redacts the secret, raw and JSON-escaped, before it
 * cuts the text.
 */
import WebSocket from 'ws';
import { parseJson, stringifyJson } from '../../shared/losslessJson.js';
import type { ManagerEvent } from '../../shared/protocol.js';

/** A text frame received: its place on the connection, its text, its parsed value (undefined when not JSON). */
export interface Received {
  seq: number;
  at: number;
  text: string;
  value: unknown;
  isBinary: boolean;
}

/** An event with the seq of its frame. */
export type ManagerEventSeq = ManagerEvent & { seq: number };

export type Answer =
  | { kind: 'result'; id: number; value: unknown; frame: Received }
  | { kind: 'error'; id: number; code: unknown; message: unknown; error: unknown; frame: Received };

/** Every answer frame the suite receives, with the command it answered (or none, for a stray id). */
export interface ObservedAnswer {
  cmd: string | undefined;
  id: unknown;
  frame: Received;
  /** The id was answered before on this connection. */
  duplicate: boolean;
}

export class Observer {
  readonly answers: ObservedAnswer[] = [];
  /** Every connection opened with this observer, in opening order (their frames stay readable once closed). */
  readonly connections: ProbeConnection[] = [];
}

/** A wait that ran out: its message says what was awaited and for how long. */
export class TimeoutError extends Error {}

interface Pending {
  cmd: string;
  resolve(answer: Answer): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

const now = () => performance.now();

export class ProbeConnection {
  readonly frames: Received[] = [];
  closed = false;
  closeCode: number | null = null;
  /** The reason of the close frame ('' when none came). */
  closeReason = '';
  private nextId = 1;
  private readonly sent = new Map<number, string>();
  private readonly answered = new Set<number>();
  private readonly pending = new Map<number, Pending>();
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly ws: WebSocket,
    private readonly observer: Observer,
  ) {
    ws.on('message', (data, isBinary) => this.onFrame((data as Buffer).toString(), isBinary)); // default binaryType: a Buffer
    ws.on('close', (code, reason) => {
      this.closed = true;
      this.closeCode = code;
      this.closeReason = reason.toString();
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        this.pending.delete(id);
        p.reject(new Error(`the connection closed (code ${code}) before ${p.cmd} was answered`));
      }
      this.wake();
    });
    ws.on('error', () => {});
    observer.connections.push(this);
  }

  /** Opens a connection to `url` within `timeoutMs`; a refused upgrade names its HTTP status. */
  static open(url: string, observer: Observer, timeoutMs: number): Promise<ProbeConnection> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, {
        perMessageDeflate: false,
        handshakeTimeout: timeoutMs,
        maxPayload: 512 * 1024 * 1024,
      });
      const connection = new ProbeConnection(ws, observer);
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new TimeoutError(`no WebSocket connection to ${url} within ${timeoutMs} ms`));
      }, timeoutMs);
      ws.once('open', () => {
        clearTimeout(timer);
        resolve(connection);
      });
      ws.once('unexpected-response', (_req, res) => {
        clearTimeout(timer);
        ws.terminate();
        reject(new Error(`the upgrade to ${url} was refused with HTTP ${res.statusCode}`));
      });
      ws.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`cannot connect to ${url}: ${err.message}`));
      });
    });
  }

  /** The seq of the last frame received so far (0 before any). */
  get lastSeq(): number {
    return this.frames.length;
  }

  /** The change and resync events received after frame `afterSeq`. */
  eventsAfter(afterSeq: number, untilSeq = Infinity): ManagerEventSeq[] {
    const out: ManagerEventSeq[] = [];
    for (const frame of this.frames.slice(afterSeq, untilSeq === Infinity ? undefined : untilSeq)) {
      if (isEventFrame(frame.value)) out.push({ ...(frame.value as ManagerEvent), seq: frame.seq });
    }
    return out;
  }

  /** Sends a request and returns its id; `id` picks one, else the connection's next. */
  send(cmd: string, args?: Record<string, unknown>, id?: number): number {
    const chosen = id ?? this.nextId++;
    this.sent.set(chosen, cmd);
    this.ws.send(stringifyJson(args === undefined ? { id: chosen, cmd } : { id: chosen, cmd, args }));
    return chosen;
  }

  /** Sends a request and waits for its answer within `timeoutMs`. */
  request(cmd: string, args: Record<string, unknown> | undefined, timeoutMs: number, id?: number): Promise<Answer> {
    if (this.closed)
      return Promise.reject(new Error(`the connection is closed (code ${this.closeCode}): ${cmd} not sent`));
    return new Promise((resolve, reject) => {
      const chosen = id ?? this.nextId++;
      const timer = setTimeout(() => {
        this.pending.delete(chosen);
        reject(new TimeoutError(`${cmd} (id ${chosen}) not answered within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(chosen, { cmd, resolve, reject, timer });
      this.send(cmd, args, chosen);
    });
  }

  /** Sends raw data as it is: a text frame, or a binary one; `request` names the id and command it carries, if any,
   *  so that an answer to it is not taken for a stray. */
  sendRaw(data: string | Buffer, binary = false, request?: { id: number; cmd: string }): void {
    if (request) this.sent.set(request.id, request.cmd);
    this.ws.send(data, { binary });
  }

  /** Resolves once `predicate` holds (checked on every frame and on close); rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new TimeoutError(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  /** Waits for the connection to close; resolves with the close code. */
  async waitForClose(timeoutMs: number): Promise<number | null> {
    await this.waitFor(() => this.closed, timeoutMs, 'close of the connection');
    return this.closeCode;
  }

  /** How the connection closed, for a rule's detail: the code and the reason, if any. */
  get closeText(): string {
    return `${this.closeCode}${this.closeReason ? ` (${show(this.closeReason, 80)})` : ' (no reason)'}`;
  }

  /** Ends the connection without a close frame, as the broker does. */
  terminate(): void {
    if (!this.closed) this.ws.terminate();
  }

  private onFrame(text: string, isBinary: boolean): void {
    let value: unknown;
    try {
      value = parseJson(text);
    } catch {
      value = undefined;
    }
    const frame: Received = { seq: this.frames.length + 1, at: now(), text, value, isBinary };
    this.frames.push(frame);
    if (isAnswerFrame(value)) this.onAnswer(value as Record<string, unknown>, frame);
    this.wake();
  }

  private onAnswer(value: Record<string, unknown>, frame: Received): void {
    const id = value.id;
    const known = typeof id === 'number' ? this.sent.get(id) : undefined;
    const duplicate = typeof id === 'number' && this.answered.has(id);
    if (typeof id === 'number' && known !== undefined) this.answered.add(id);
    this.observer.answers.push({ cmd: known, id, frame, duplicate });
    if (typeof id !== 'number' || duplicate) return;
    const pending = this.pending.get(id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending.delete(id);
    // An answer with both members is read as the error, as the broker reads it.
    if ('error' in value) {
      const error = value.error as Record<string, unknown> | null;
      pending.resolve({ kind: 'error', id, code: error?.code, message: error?.message, error, frame });
    } else {
      pending.resolve({ kind: 'result', id, value: value.result, frame });
    }
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }
}

export function isAnswerFrame(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    'id' in value &&
    ('result' in value || 'error' in value)
  );
}

export function isEventFrame(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'event' in value && !('id' in value);
}

/** The secrets of the suites running in this process, each with how many runs hold it. */
const heldSecrets = new Map<string, number>();

/** The forms a secret takes in a detail: as it is, JSON-escaped once (a string shown), and twice (a frame's text shown). */
export function secretForms(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  const twice = JSON.stringify(once).slice(1, -1);
  return [...new Set([secret, once, twice])].sort((a, b) => b.length - a.length);
}

/** Registers secrets `show` must never render, until the answered release is called. Empty secrets are ignored. */
export function holdSecrets(secrets: readonly string[]): () => void {
  const held = secrets.filter((secret) => secret.length > 0);
  for (const secret of held) heldSecrets.set(secret, (heldSecrets.get(secret) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const secret of held) {
      const count = (heldSecrets.get(secret) ?? 1) - 1;
      if (count > 0) heldSecrets.set(secret, count);
      else heldSecrets.delete(secret);
    }
  };
}

/** `text` with every form of every secret (the held ones, and `extra`) replaced by `***`, longest first. */
export function redact(text: string, extra: readonly string[] = []): string {
  const forms = [...new Set([...heldSecrets.keys(), ...extra].filter((s) => s.length > 0).flatMap(secretForms))].sort(
    (a, b) => b.length - a.length,
  );
  let out = text;
  for (const form of forms) out = out.split(form).join('***');
  return out;
}

/** A short rendering of a value for a rule's detail (bigints as digits, secrets redacted, then long texts cut). */
export function show(value: unknown, max = 160): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : stringifyJson(value);
  } catch {
    text = String(value);
  }
  text = redact(text);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** An answer as a rule's detail names it. */
export function showAnswer(answer: Answer): string {
  return answer.kind === 'result' ? `result ${show(answer.value)}` : `error ${show(answer.error)}`;
}
