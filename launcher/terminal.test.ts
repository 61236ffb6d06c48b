import { afterEach, describe, expect, it } from 'vitest';
import { gatewayOrigin, serveTerminal, terminalPolicy, type TerminalServer } from './terminal.js';

const FILES = ['/', '/index.html', '/app.js', '/gateway.js', '/streams.js', '/style.css', '/vendor/signalr.min.js'];

let terminal: TerminalServer | undefined;
afterEach(async () => {
  await terminal?.close();
  terminal = undefined;
});

describe('serveTerminal', () => {
  it('serves every file with a policy that lets the page connect to its gateway alone', async () => {
    terminal = await serveTerminal({ gateway: 'http://127.0.0.1:8787/' });
    for (const file of FILES) {
      const res = await fetch(`${terminal.url}${file}`);
      await res.arrayBuffer();
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-security-policy'), file).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
          "connect-src http://127.0.0.1:8787 ws://127.0.0.1:8787; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(res.headers.get('referrer-policy'), file).toBe('no-referrer');
    }
    const missing = await fetch(`${terminal.url}/other.html`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toContain(
      'connect-src http://127.0.0.1:8787 ws://127.0.0.1:8787;',
    );
  });

  it('tells the page its gateway, and connects an https gateway over https and wss', async () => {
    terminal = await serveTerminal({ gateway: 'https://Gateway.Example.com:443' });
    const res = await fetch(`${terminal.url}/`);
    const html = await res.text();
    expect(html).toContain(
      '<head>\n  <meta name="gateway" content="https://gateway.example.com">\n  <meta charset="utf-8">',
    );
    expect(html.match(/<meta name="gateway"/g)).toHaveLength(1);
    expect(res.headers.get('content-security-policy')).toContain(
      '; connect-src https://gateway.example.com wss://gateway.example.com; ',
    );
  });

  it('refuses a gateway that is not an http(s) origin, naming the setting', async () => {
    await expect(serveTerminal({ gateway: 'javascript:alert(1)' })).rejects.toThrow(
      'gateway must be an http:// or https:// URL (got "javascript:alert(1)")',
    );
    expect(() => gatewayOrigin('127.0.0.1:8787')).toThrow('GATEWAY_URL must be an http:// or https:// URL');
    expect(() => gatewayOrigin('not a url')).toThrow(
      'GATEWAY_URL must be an http:// or https:// URL such as http://127.0.0.1:8787 (got "not a url")',
    );
    expect(() => gatewayOrigin('http://127.0.0.1:8787/api')).toThrow(
      "GATEWAY_URL must be the gateway's origin alone, with no credentials, path, query or fragment",
    );
    expect(() => gatewayOrigin('http://user:pw@127.0.0.1:8787')).toThrow(
      "GATEWAY_URL must be the gateway's origin alone",
    );
    expect(() => gatewayOrigin('http://a;b:8787')).toThrow(
      `GATEWAY_URL's host must be a name or an IP address (got "a;b")`,
    );
    expect(gatewayOrigin('http://[::1]:8787')).toBe('http://[::1]:8787');
    expect(terminalPolicy('http://[::1]:8787')).toContain('; connect-src http://[::1]:8787 ws://[::1]:8787; ');
  });
});
