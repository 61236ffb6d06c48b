/**
 * A tap on the socket between the kit's manager session and the manager, for the broken servers whose break is on
 * the wire, where the kit would not let a driver be wrong (answers with the wrong id or version, frames reordered,
 * wrong close codes, frames the kit would close on). `TappedServer` is a BridgedServer whose sessions talk through a
 * `TappedSocket`: the kit sees what the tap lets through from the manager, and the manager sees what the tap makes
 * of each frame the kit writes.
 *
 * Invariants: a tap without hooks changes nothing (every frame passes as it is, in order, and close codes are the
 * kit's); each connection gets a tap of its own (`WireTap` state is per connection); the tap's `wire` writes to the
 * manager directly, beside the kit.
 */
import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import { BridgedServer, type BridgeDriver, type BridgedServerOptions, type ManagerSession } from '../../kit/index.js';
import { parseJson } from '../../../shared/losslessJson.js';
import type { Corkable } from '../../../shared/writeBatch.js';

/** What a tap may do on its own: write to the manager, close, as the kit's socket would. */
export interface Wire {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** A frame from the manager as the tap sees it. */
export interface Incoming {
  text: string;
  isBinary: boolean;
  /** The frame parsed (losslessly), undefined when it is not JSON. */
  value: unknown;
}

export interface WireTap {
  /** A frame from the manager: undefined passes it to the kit as it is, a frame passes that instead, null keeps it
   *  from the kit (the tap answered it, or drops it). */
  fromManager?: (frame: Incoming, wire: Wire) => { text: string; isBinary: boolean } | null | undefined;
  /** A frame the kit writes: the frames the manager gets instead (none, it, others, more). */
  toManager?: (text: string, wire: Wire) => string[];
  /** The close code the manager sees when the kit closes with `code`. */
  closeCode?: (code: number) => number;
}

/** The socket the kit's session is given: the real one, through the tap. */
class TappedSocket extends EventEmitter {
  private readonly wire: Wire;

  constructor(
    private readonly real: WebSocket,
    private readonly tap: WireTap,
  ) {
    super();
    this.wire = { send: (text) => real.send(text), close: (code, reason) => real.close(code, reason) };
    real.on('message', (data, isBinary) => {
      const text = (data as Buffer).toString(); // the default binaryType: one Buffer a message
      let value: unknown;
      try {
        value = isBinary ? undefined : parseJson(text);
      } catch {
        value = undefined;
      }
      const out = tap.fromManager?.({ text, isBinary, value }, this.wire);
      if (out === null) return;
      if (out === undefined) this.emit('message', data, isBinary);
      else this.emit('message', Buffer.from(out.text), out.isBinary);
    });
    real.on('close', (code, reason) => this.emit('close', code, reason));
    real.on('error', (error) => this.emit('error', error));
  }

  get bufferedAmount(): number {
    return this.real.bufferedAmount;
  }

  get readyState(): number {
    return this.real.readyState;
  }

  get OPEN(): number {
    return this.real.OPEN;
  }

  send(text: string): void {
    const frames = this.tap.toManager ? this.tap.toManager(text, this.wire) : [text];
    for (const frame of frames) this.real.send(frame);
  }

  close(code: number, reason: string): void {
    this.real.close(this.tap.closeCode?.(code) ?? code, reason);
  }

  terminate(): void {
    this.real.terminate();
  }
}

/** A bridged server whose every connection goes through a tap of its own, from `newTap`. */
export class TappedServer<S = undefined> extends BridgedServer<S> {
  constructor(
    driver: BridgeDriver<S>,
    private readonly newTap: () => WireTap,
    options: BridgedServerOptions = {},
  ) {
    super(driver, options);
  }

  override accept(ws: WebSocket, peer: string, socket?: Corkable): ManagerSession<S> {
    return super.accept(new TappedSocket(ws, this.newTap()) as unknown as WebSocket, peer, socket);
  }
}

/** A frame's value as an object, or undefined. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A frame the kit wrote, parsed (the kit writes JSON only). */
export function parsed(text: string): Record<string, unknown> {
  return objectOf(parseJson(text)) ?? {};
}

/**
 * What a connection's requests and answers were, for taps that act on answers to some commands: the command of each
 * request id seen from the manager, and whether the connection has logged in (a login answered with a result).
 */
export class RequestLog {
  private readonly commands = new Map<unknown, string>();
  loginResult: Record<string, unknown> | undefined;

  /** Notes a frame from the manager. */
  saw(frame: Incoming): void {
    const value = objectOf(frame.value);
    if (value && typeof value.cmd === 'string') this.commands.set(value.id, value.cmd);
  }

  /** Notes a frame the kit wrote; answers the command it answers, if it is an answer. */
  answered(frame: Record<string, unknown>): string | undefined {
    if (!('id' in frame) || !('result' in frame || 'error' in frame)) return undefined;
    const cmd = this.commands.get(frame.id);
    if (cmd === 'login' && 'result' in frame && this.loginResult === undefined)
      this.loginResult = objectOf(frame.result);
    return cmd;
  }

  get loggedIn(): boolean {
    return this.loginResult !== undefined;
  }
}
