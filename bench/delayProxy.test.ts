/**
 * The regions bench's delay proxy (bench/delayProxy.ts): bytes cross it in order and unchanged, each way held for at
 * least the delay, a stop drops open connections and refuses new ones, and it listens again on the same port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { freePort, startDelayProxy } from './delayProxy.js';

let echo: Server;
let echoPort: number;
beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
  echoPort = (echo.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** Sends `chunks` one by one through a new connection to `port` and resolves with what came back once it is all back. */
function roundTrip(port: number, chunks: string[]): Promise<{ text: string; ms: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const want = chunks.join('');
    let text = '';
    const started = performance.now();
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
    });
    socket.on('data', (d) => {
      text += d.toString();
      if (text.length >= want.length) resolve({ text, ms: performance.now() - started, socket });
    });
    socket.on('error', reject);
  });
}

describe('startDelayProxy', () => {
  it('passes bytes both ways in order, unchanged, each way held for the delay', async () => {
    const proxy = await startDelayProxy(`127.0.0.1:${echoPort}`, 40);
    try {
      const chunks = Array.from({ length: 50 }, (_, i) => `chunk ${i};`);
      const { text, ms, socket } = await roundTrip(proxy.port, chunks);
      socket.destroy();
      expect(text).toBe(chunks.join(''));
      expect(ms).toBeGreaterThanOrEqual(80);
      expect(proxy.connections).toBe(1);
      expect(proxy.url).toBe(`http://127.0.0.1:${proxy.port}`);
    } finally {
      await proxy.close();
    }
  });

  it('drops open connections on stop, refuses new ones, and listens again on the same port', async () => {
    const port = await freePort();
    const proxy = await startDelayProxy(`http://127.0.0.1:${echoPort}`, 0, port);
    try {
      expect(proxy.port).toBe(port);
      const { socket } = await roundTrip(port, ['hello']);
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await proxy.stop();
      await closed;
      await expect(roundTrip(port, ['again'])).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      await proxy.listen();
      const back = await roundTrip(port, ['back']);
      back.socket.destroy();
      expect(back.text).toBe('back');
      expect(proxy.connections).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});
