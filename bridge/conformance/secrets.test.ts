/**
 * The suite never shows the password, nor the wrong one it sends: `show` redacts a held secret, raw and JSON-escaped,
 * before it cuts a long text (so no part of it is left at the cut); and a whole run against a server that repeats the
 * password it was sent at the end of a long refusal (on 127.0.0.1, port 0) reports every rule with no piece of either
 * password in any detail. The wrong password is random, as long as the real one about, and holds nothing of it.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { holdSecrets, redact, show } from './connection.js';
import { wrongPassword } from './context.js';
import { rulesFor, runConformance } from './suite.js';

/** A password with a quote and a backslash: JSON-escaped, it is no longer the text it was. */
const PASSWORD = 'Qz"7\\Vx"9\\Kw#Jq';
const escaped = (text: string) => JSON.stringify(text).slice(1, -1);

/** Every piece of `secret` (raw and JSON-escaped) of `size` characters or more. */
function pieces(secret: string, size: number): string[] {
  const out = new Set<string>();
  for (const form of [secret, escaped(secret), escaped(escaped(secret))]) {
    for (let i = 0; i + size <= form.length; i++) out.add(form.slice(i, i + size));
  }
  return [...out];
}

describe('show with a secret held', () => {
  it('redacts it raw and JSON-escaped before cutting, so no part of it is left at the cut', () => {
    const release = holdSecrets([PASSWORD]);
    try {
      // 12 + 142 characters before the secret: the cut at 160 falls inside its escaped form.
      const value = { message: `${'x'.repeat(142)}${PASSWORD}` };
      const text = show(value);
      expect(text).toBe(`{"message":"${'x'.repeat(142)}***"}`);
      for (const piece of pieces(PASSWORD, 4)) expect(text).not.toContain(piece);
      expect(show(value, 157)).toBe(`{"message":"${'x'.repeat(142)}***…`);
      expect(show(`the frame said ${JSON.stringify({ password: PASSWORD })}`)).toBe(
        '"the frame said {\\"password\\":\\"***\\"}"',
      );
      expect(redact(`raw ${PASSWORD} and ${escaped(PASSWORD)}`)).toBe('raw *** and ***');
    } finally {
      release();
    }
    expect(show(PASSWORD)).toBe(JSON.stringify(PASSWORD));
  });
});

describe('the wrong password', () => {
  it('is random letters and digits about as long as the real one, never made from it', () => {
    const drawn = [wrongPassword(PASSWORD.length, PASSWORD), wrongPassword(PASSWORD.length, PASSWORD)];
    expect(drawn[0]).not.toBe(drawn[1]);
    for (const wrong of drawn) {
      expect(wrong).toMatch(/^[A-Za-z0-9]{15}$/);
      for (const piece of pieces(PASSWORD, 3)) expect(wrong).not.toContain(piece);
    }
    expect(wrongPassword(3, 'abc')).toMatch(/^[A-Za-z0-9]{12}$/);
    expect(wrongPassword(500, 'x'.repeat(500))).toMatch(/^[A-Za-z0-9]{64}$/);
  });
});

describe('a run against a server that repeats the password it is sent', () => {
  let wss: WebSocketServer;
  let port: number;
  const received: string[] = [];

  beforeAll(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    port = (wss.address() as AddressInfo).port;
    wss.on('connection', (ws) => {
      ws.on('message', (data) => {
        let frame: { id?: unknown; cmd?: unknown; args?: { password?: unknown } };
        try {
          frame = JSON.parse((data as Buffer).toString());
        } catch {
          ws.close(1007, 'not JSON');
          return;
        }
        if (typeof frame.id !== 'number') return;
        const password = typeof frame.args?.password === 'string' ? frame.args.password : '';
        if (password) received.push(password);
        // A long refusal with the password sent at its end, where a detail's cut would fall.
        ws.send(
          JSON.stringify({ id: frame.id, error: { code: 3, message: `${'refused '.repeat(13)}you sent ${password}` } }),
        );
      });
    });
  });

  afterAll(async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });

  it('shows no piece of the password or of the wrong one in any detail', async () => {
    const report = await runConformance({
      server: `ws://127.0.0.1:${port}/demo`,
      login: 1000,
      password: PASSWORD,
      family: 'PF4',
      timeouts: { answerMs: 2000, pingMs: 1000, snapshotMs: 2000 },
    });
    expect(report.results.map((r) => r.id)).toEqual(rulesFor('PF4').map((r) => r.id));
    expect(report.failed).toBeGreaterThan(0);
    const wrong = received.filter((p) => p !== PASSWORD);
    expect(received).toContain(PASSWORD);
    expect(new Set(wrong).size).toBe(1);
    expect(wrong[0]).toMatch(/^[A-Za-z0-9]{15}$/);
    const details = report.results.map((r) => r.detail).join('\n');
    expect(details).toContain('you sent ***');
    for (const piece of [...pieces(PASSWORD, 4), ...pieces(wrong[0], 6)]) expect(details).not.toContain(piece);
  });
});
