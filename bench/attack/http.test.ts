/**
 * The attack drill's HTTP (bench/attack/http.ts): answers read back from raw bytes, whole or cut short, chunked or
 * not, and the exchanges against a server of the test's own on 127.0.0.1.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type Server as NetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  freePort,
  getJson,
  parseRawAnswer,
  postJson,
  rawAnswerComplete,
  rawExchange,
  tokenForm,
  unchunk,
} from './http.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');

describe('answers from raw bytes', () => {
  it('reads the status, the headers by lower-case name and a body of Content-Length', () => {
    const answer = parseRawAnswer(
      bytes(
        'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-A:  1 \r\n\r\n{"error":1}',
      ),
    );
    expect(answer).toStrictEqual({
      status: 400,
      headers: { 'content-type': 'application/json', 'content-length': '11', 'x-a': '1' },
      bodyBytes: 11,
      body: '{"error":1}',
    });
  });

  it('joins a chunked body from its chunks', () => {
    const answer = parseRawAnswer(
      bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nb\r\n, chunked!!\r\n0\r\n\r\n'),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('hello, chunked!!');
    expect(answer.bodyBytes).toBe(16);
  });

  it('has no status for bytes that are not an HTTP answer, and no body before the head ends', () => {
    expect(parseRawAnswer(Buffer.alloc(0))).toStrictEqual({ status: null, headers: {}, bodyBytes: 0, body: '' });
    expect(parseRawAnswer(bytes('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 21\r\n'))).toStrictEqual({
      status: 500,
      headers: { 'content-length': '21' },
      bodyBytes: 0,
      body: '',
    });
    expect(parseRawAnswer(bytes('SSH-2.0-OpenSSH\r\n\r\n')).status).toBeNull();
  });

  it('stops a chunked body at its last chunk or at a size it cannot read', () => {
    expect(unchunk(bytes('3\r\nabc\r\n0\r\n\r\n3\r\nxyz\r\n')).toString()).toBe('abc');
    expect(unchunk(bytes('2\r\nab\r\nzz\r\ncd\r\n')).toString()).toBe('ab');
    expect(unchunk(bytes('4\r\nab')).toString()).toBe('ab');
  });

  it('knows when an answer is whole', () => {
    const head = 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n';
    expect(rawAnswerComplete(bytes(`${head}ab`))).toBe(false);
    expect(rawAnswerComplete(bytes(`${head}abcd`))).toBe(true);
    expect(rawAnswerComplete(bytes('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n'))).toBe(false);
    const chunked = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n';
    expect(rawAnswerComplete(bytes(chunked))).toBe(false);
    expect(rawAnswerComplete(bytes(`${chunked}0\r\n\r\n`))).toBe(true);
  });

  it("writes the token endpoint's form", () => {
    expect(tokenForm('drill a', 's&cret')).toBe(
      'grant_type=client_credentials&client_id=drill+a&client_secret=s%26cret',
    );
  });
});

describe('exchanges on 127.0.0.1', () => {
  const servers: Array<Server | NetServer> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
  });
  const listening = async (server: Server | NetServer) => {
    servers.push(server);
    const port = await freePort();
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    return `http://127.0.0.1:${port}`;
  };

  it('reads and writes JSON with the bearer token, and gives a body that is not JSON as text', async () => {
    const seen: Array<{ method?: string; url?: string; authorization?: string; body: string }> = [];
    const base = await listening(
      createHttpServer((req, res) => {
        let body = '';
        req.on('data', (d) => {
          body += d;
        });
        req.on('end', () => {
          seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body });
          if (req.url === '/text') res.end('not json');
          else res.setHeader('content-type', 'application/json').end(JSON.stringify({ echo: body || null }));
        });
      }),
    );
    expect(await getJson(base, '/read', 'tok')).toMatchObject({ status: 200, body: { echo: null }, bytes: 13 });
    expect(await getJson(base, '/text')).toMatchObject({ status: 200, body: 'not json', bytes: 8 });
    const written = await postJson(base, '/write', 'tok', '{"a":1}');
    expect(written).toMatchObject({ status: 200, body: { echo: '{"a":1}' } });
    expect(written.headers.get('content-type')).toBe('application/json');
    expect(seen).toStrictEqual([
      { method: 'GET', url: '/read', authorization: 'Bearer tok', body: '' },
      { method: 'GET', url: '/text', authorization: undefined, body: '' },
      { method: 'POST', url: '/write', authorization: 'Bearer tok', body: '{"a":1}' },
    ]);
  });

  it('sends the bytes as given and reads the answer once it is whole, with the socket still open', async () => {
    const received: string[] = [];
    const base = await listening(
      createServer((socket) => {
        socket.once('data', (d) => {
          received.push(d.toString('latin1'));
          socket.write('HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\nTraceparent: 00-x\r\n\r\nno');
        });
        socket.on('error', () => {});
      }),
    );
    const request = 'POST /x HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}';
    const answer = await rawExchange(base, request, { timeoutMs: 10_000 });
    expect(answer).toStrictEqual({
      status: 400,
      headers: { 'content-length': '2', traceparent: '00-x' },
      bodyBytes: 2,
      body: 'no',
    });
    expect(received).toStrictEqual([request]);
  });

  it('gives what came when the other side closes, and no answer when nothing came', async () => {
    const base = await listening(
      createServer((socket) => {
        socket.once('data', () => socket.end('HTTP/1.1 500 Internal Server Error\r\n\r\n'));
        socket.on('error', () => {});
      }),
    );
    expect(await rawExchange(base, 'GET / HTTP/1.1\r\n\r\n')).toMatchObject({ status: 500, bodyBytes: 0 });
    const silent = await listening(
      createServer((socket) => {
        socket.on('error', () => {}).resume();
      }),
    );
    expect(await rawExchange(silent, 'GET / HTTP/1.1\r\n\r\n', { timeoutMs: 200 })).toStrictEqual({
      status: null,
      headers: {},
      bodyBytes: 0,
      body: '',
    });
  });
});
