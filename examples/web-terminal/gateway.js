/**
 * The gateway's public API as a browser client calls it: a token from /connect/token (client credentials) or one the
 * partner's own identity provider issued, v2 calls answered as envelopes (`{data, error, meta}`), a refusal past the
 * rate limit (HTTP 429) waited out as its `Retry-After` says, and writes sent under an `Idempotency-Key` that a retry
 * re-sends unchanged, so a write whose outcome was unknown is never applied twice.
 */

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** A fresh Idempotency-Key: 128 random bits (`crypto.randomUUID` exists only on https and localhost pages). */
const newKey = () =>
  [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');

/** An envelope's error in a dealer's words: its code (and the platform's own code), then its message. */
export function describeError(error) {
  if (!error) return '';
  const code = error.managerCode ? `${error.code} (${error.managerCode})` : error.code;
  return error.message ? `${code}: ${error.message}` : code;
}

export class Gateway {
  /** @param {string} base the gateway's origin, e.g. http://127.0.0.1:8787 */
  constructor(base) {
    this.base = base.replace(/\/+$/, '');
    this.token = null;
    /** Called with a line for the activity log whenever the client waits or retries on its own. */
    this.report = () => {};
  }

  /** Signs in with an API client's id and secret, or keeps a token issued elsewhere. */
  async signIn({ clientId, clientSecret, token }) {
    if (token) {
      this.token = token.trim();
      return;
    }
    const answer = await fetch(`${this.base}/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
        scope: 'webapi',
      }),
    });
    const body = await answer.json().catch(() => ({}));
    if (!answer.ok || !body.access_token) {
      throw new Error(`sign-in refused: ${body.error_description ?? body.error ?? `HTTP ${answer.status}`}`);
    }
    this.token = body.access_token;
  }

  /**
   * One call. Answers `{status, headers, data, error, meta}`; a v1 or registry answer (no envelope) comes as `data`,
   * its refusal as `error`. A 429 is waited out (its `Retry-After`) and sent again, up to three times.
   */
  async call(method, path, { query, body, headers = {}, signal } = {}) {
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries(query ?? {}))
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    for (let attempt = 1; ; attempt++) {
      const answer = await fetch(url, {
        method,
        signal,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await answer.text();
      let parsed = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      if (answer.status === 429 && attempt <= 3) {
        const wait = Number(answer.headers.get('retry-after') ?? '1');
        this.report(`Too many requests: the gateway asks to wait ${wait} s; sending again then.`, 'wait');
        await sleep(wait * 1000);
        continue;
      }
      const envelope =
        parsed && typeof parsed === 'object' && 'data' in parsed && 'error' in parsed && 'meta' in parsed;
      if (envelope) return { status: answer.status, headers: answer.headers, ...parsed };
      const failed = !answer.ok;
      return {
        status: answer.status,
        headers: answer.headers,
        data: failed ? null : (parsed ?? text),
        error: failed
          ? {
              code: parsed?.errorType ?? `HTTP ${answer.status}`,
              message: parsed?.errorDescription ?? parsed?.error ?? text,
            }
          : null,
        meta: {},
      };
    }
  }

  /** A read whose failure is an exception (with the envelope's code and message). */
  async read(path, query) {
    const answer = await this.call('GET', path, { query });
    if (answer.error) throw new Error(describeError(answer.error));
    return answer;
  }

  /**
   * A write under one `Idempotency-Key`, sent again with the same key while its outcome is unknown: the gateway's
   * answer carried `X-Request-Outcome: unknown` (the trading server did not answer within the time budget, or the
   * connection under the call dropped), or no answer came at all. Answers the final envelope with `replayed` (this
   * answer is the stored one of an earlier attempt) and `attempts`; `unknowable` when the gateway can never learn the
   * outcome (then look at the account before trying again, under a new key).
   */
  async write(method, path, body, { budgetSeconds = 10, attempts = 8 } = {}) {
    const key = newKey();
    for (let attempt = 1; ; attempt++) {
      let answer;
      try {
        answer = await this.call(method, path, {
          body,
          headers: { 'idempotency-key': key, 'x-request-timeout': String(budgetSeconds) },
          // The browser's own limit: the budget plus time for the answer to travel.
          signal: AbortSignal.timeout((budgetSeconds + 5) * 1000),
        });
      } catch (error) {
        if (attempt >= attempts) throw error;
        this.report(
          `No answer reached the terminal (${error.message}). Asking again with the same key: the platform applies it at most once.`,
          'unknown',
        );
        await sleep(1000);
        continue;
      }
      const unknown = answer.headers.get('x-request-outcome') === 'unknown';
      const replayed = answer.headers.get('idempotency-replayed') === 'true';
      if (unknown && !replayed && attempt < attempts) {
        const wait = Number(answer.headers.get('retry-after') ?? '1');
        this.report(
          `Outcome not known yet: the trading server has not said whether it applied this. Asking again in ${wait} s with the same key: it cannot be applied twice.`,
          'unknown',
        );
        await sleep(wait * 1000);
        continue;
      }
      return { ...answer, key, replayed, unknowable: unknown && replayed, attempts: attempt };
    }
  }
}
