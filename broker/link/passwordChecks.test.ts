/** The bound on failed password checks per account, on a clock the tests move. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD_CHECK_LIMIT, PasswordChecks, type AdmittedCheck } from './passwordChecks.js';

function clock(start = 1_000_000) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

const admitted = (r: ReturnType<PasswordChecks['admit']>): AdmittedCheck => {
  if (!r.ok) throw new Error(`refused, retry after ${r.retryAfterSeconds} s`);
  return r;
};

/** `n` checks of one account answered "wrong password", one after the other. */
function fail(checks: PasswordChecks, n: number, platform = 'p1', login = '7') {
  for (let i = 0; i < n; i++) admitted(checks.admit(platform, login)).settle(true);
}

describe('PasswordChecks', () => {
  it('bounds failed checks at 5 per 60 s by default', () => {
    expect(DEFAULT_PASSWORD_CHECK_LIMIT).toStrictEqual({ failures: 5, windowMs: 60_000 });
  });

  it('admits five failed checks of a login, refuses the sixth until the first leaves the window', () => {
    const c = clock();
    const checks = new PasswordChecks({ failures: 5, windowMs: 60_000 }, c.now);
    for (let i = 0; i < 5; i++) {
      admitted(checks.admit('p1', '7')).settle(true);
      c.advance(1000);
    }
    // Failures at 0, 1, 2, 3 and 4 s; now is 5 s: the first leaves the window at 60 s.
    expect(checks.admit('p1', '7')).toStrictEqual({ ok: false, retryAfterSeconds: 55 });
    c.advance(54_000);
    expect(checks.admit('p1', '7')).toStrictEqual({ ok: false, retryAfterSeconds: 1 });
    c.advance(1000);
    admitted(checks.admit('p1', '7')).settle(true);
    // The sliding window holds 1, 2, 3, 4 and 60 s: the next one may pass at 61 s.
    expect(checks.admit('p1', '7')).toStrictEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it('counts each login of each platform apart', () => {
    const checks = new PasswordChecks({ failures: 2, windowMs: 60_000 }, clock().now);
    fail(checks, 2, 'p1', '7');
    expect(checks.admit('p1', '7').ok).toBe(false);
    expect(checks.admit('p1', '8').ok).toBe(true);
    expect(checks.admit('p2', '7').ok).toBe(true);
  });

  it('does not count successes or other failures, and a success does not clear earlier failures', () => {
    const checks = new PasswordChecks({ failures: 3, windowMs: 60_000 }, clock().now);
    fail(checks, 2);
    for (let i = 0; i < 10; i++) admitted(checks.admit('p1', '7')).settle(false);
    admitted(checks.admit('p1', '7')).settle(true);
    expect(checks.admit('p1', '7')).toStrictEqual({ ok: false, retryAfterSeconds: 60 });
  });

  it('holds a place for every check in flight, so concurrent guesses cannot pass the bound before their answers', () => {
    const checks = new PasswordChecks({ failures: 3, windowMs: 60_000 }, clock().now);
    const inFlight = [
      admitted(checks.admit('p1', '7')),
      admitted(checks.admit('p1', '7')),
      admitted(checks.admit('p1', '7')),
    ];
    // Places held by checks in flight free within their deadline: a second.
    expect(checks.admit('p1', '7')).toStrictEqual({ ok: false, retryAfterSeconds: 1 });
    inFlight[0].settle(false);
    const fourth = admitted(checks.admit('p1', '7'));
    inFlight[1].settle(true);
    inFlight[2].settle(true);
    fourth.settle(true);
    expect(checks.admit('p1', '7')).toStrictEqual({ ok: false, retryAfterSeconds: 60 });
  });

  it('settles a check once, whatever its caller does', () => {
    const checks = new PasswordChecks({ failures: 2, windowMs: 60_000 }, clock().now);
    const check = admitted(checks.admit('p1', '7'));
    check.settle(true);
    check.settle(true);
    check.settle(false);
    expect(checks.admit('p1', '7').ok).toBe(true);
  });

  it('waits for the failures to make room for the checks in flight and one more', () => {
    const c = clock();
    const checks = new PasswordChecks({ failures: 4, windowMs: 60_000 }, c.now);
    fail(checks, 1);
    c.advance(10_000);
    fail(checks, 1);
    c.advance(10_000);
    admitted(checks.admit('p1', '7'));
    admitted(checks.admit('p1', '7'));
    // Failures at 0 and 10 s, two in flight: one place frees when the first failure leaves, at 60 s.
    expect(checks.admit('p1', '7')).toStrictEqual({ ok: false, retryAfterSeconds: 40 });
  });

  it('forgets an account once nothing of it is left in the window', () => {
    const c = clock();
    const checks = new PasswordChecks({ failures: 5, windowMs: 60_000 }, c.now);
    admitted(checks.admit('p1', 'ok')).settle(false);
    expect(checks.size).toBe(0);
    for (let login = 0; login < 100; login++) fail(checks, 1, 'p1', String(login));
    expect(checks.size).toBe(100);
    c.advance(60_000);
    admitted(checks.admit('p1', 'other')).settle(false);
    expect(checks.size).toBe(0);
  });

  it('admits every check when the bound is 0, and refuses a bound that is not one', () => {
    const checks = new PasswordChecks({ failures: 0, windowMs: 60_000 }, clock().now);
    fail(checks, 100);
    expect(checks.admit('p1', '7').ok).toBe(true);
    expect(checks.size).toBe(0);
    expect(() => new PasswordChecks({ failures: -1, windowMs: 60_000 })).toThrow(
      'password check failures must be a whole number from 0, got -1',
    );
    expect(() => new PasswordChecks({ failures: 1.5, windowMs: 60_000 })).toThrow(
      'password check failures must be a whole number from 0, got 1.5',
    );
    expect(() => new PasswordChecks({ failures: 5, windowMs: 0 })).toThrow(
      'password check window must be at least 1 ms, got 0',
    );
  });
});
