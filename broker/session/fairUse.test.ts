import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_FAIR_USE,
  FairUse,
  FairUseRefusal,
  FIRST_ESTIMATE_BYTES,
  type FairUseLimits,
  type FairUsePlace,
} from './fairUse.js';
import { DeadlineError } from './managerErrors.js';

afterEach(() => {
  vi.useRealTimers();
});

const limits = (over: Partial<FairUseLimits> = {}): FairUseLimits => ({
  ...DEFAULT_FAIR_USE,
  calls: 4,
  bytes: 1024 * 1024,
  ...over,
});

/** Takes a place and records when it was granted (or how it failed) in `log`. */
function take(gate: FairUse, caller: string, log: string[], sendBy = Date.now() + 10_000, cmd = 'UserRecordsRequest') {
  const places: FairUsePlace[] = [];
  let taken: FairUsePlace | Promise<FairUsePlace>;
  try {
    taken = gate.acquire(caller, cmd, sendBy);
  } catch (error) {
    log.push(`${caller}:refused:${(error as FairUseRefusal).retryAfterSeconds}`);
    return { places, settled: Promise.resolve() };
  }
  if (!(taken instanceof Promise)) {
    log.push(`${caller}:now`);
    places.push(taken);
    return { places, settled: Promise.resolve() };
  }
  const settled = taken.then(
    (place) => {
      log.push(`${caller}:later`);
      places.push(place);
    },
    (error: Error) => {
      log.push(`${caller}:${error instanceof DeadlineError ? 'deadline' : error.message}`);
    },
  );
  return { places, settled };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('FairUse: one caller alone', () => {
  it('has the whole session: `calls` places at once, the rest wait in order and are never refused', async () => {
    const gate = new FairUse(limits());
    const log: string[] = [];
    const taken = Array.from({ length: 7 }, () => take(gate, 'a', log));
    expect(log).toStrictEqual(['a:now', 'a:now', 'a:now', 'a:now']);
    expect(gate.stats).toMatchObject({ onWire: 4, waiting: 3, refused: 0 });
    taken[0].places[0].release(100);
    await flush();
    expect(log.slice(4)).toStrictEqual(['a:later']);
    taken[1].places[0].release(100);
    taken[2].places[0].release(100);
    await flush();
    expect(log.slice(4)).toStrictEqual(['a:later', 'a:later', 'a:later']);
    expect(gate.stats).toMatchObject({ onWire: 4, waiting: 0 });
  });

  it('bounds what one caller may have waiting, even alone', () => {
    const gate = new FairUse(limits({ calls: 1, queuedPerCaller: 2 }));
    const log: string[] = [];
    for (let i = 0; i < 4; i++) take(gate, 'a', log);
    expect(log).toStrictEqual(['a:now', 'a:refused:1']);
    expect(gate.stats).toMatchObject({ onWire: 1, waiting: 2, refused: 1 });
  });
});

describe('FairUse: callers sharing a session', () => {
  it('gives the next freed place to the caller with the fewest on the wire, ahead of a flood queued before it', async () => {
    const gate = new FairUse(limits());
    const log: string[] = [];
    const flood = Array.from({ length: 6 }, () => take(gate, 'flood', log));
    expect(gate.stats).toMatchObject({ onWire: 4, waiting: 2 });
    const quiet = take(gate, 'quiet', log);
    expect(log.at(-1)).toBe('flood:now');
    flood[0].places[0].release(10);
    await flush();
    expect(log.slice(4)).toStrictEqual(['quiet:later']);
    quiet.places[0].release(10);
    await flush();
    expect(log.slice(5)).toStrictEqual(['flood:later']);
  });

  it('refuses a caller at its share while another is active, with the seconds to wait; the other is never refused', async () => {
    vi.useFakeTimers({ now: 0 });
    const gate = new FairUse(limits({ retryAfterSeconds: 2 }));
    const log: string[] = [];
    for (let i = 0; i < 4; i++) take(gate, 'flood', log);
    const quiet = take(gate, 'quiet', log);
    // Two callers active: a share is 2 places; the flood holds 4 and would have to wait, so it is refused.
    take(gate, 'flood', log);
    take(gate, 'flood', log);
    expect(log.slice(4)).toStrictEqual(['flood:refused:2', 'flood:refused:2']);
    let error: unknown;
    try {
      // Refused at once (a throw); a place or a promise of one would leave `error` unset and fail below.
      void gate.acquire('flood', 'UserRecordsRequest', 10_000);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FairUseRefusal);
    expect((error as Error).message).toBe(
      "the trade platform's manager session is shared by 2 callers and this one already has 4 of its 4 commands on the wire; retry after 2 s",
    );
    // The quiet caller waits for the next freed place, then may queue more within its share.
    expect(quiet.places).toHaveLength(0);
    const more = take(gate, 'quiet', log);
    expect(log.filter((l) => l.startsWith('quiet'))).toStrictEqual([]);
    expect(gate.stats).toMatchObject({ onWire: 4, waiting: 2, refused: 3 });
    await vi.advanceTimersByTimeAsync(0);
    expect(quiet.places.length + more.places.length).toBe(0);
  });

  it("lets a caller that went quiet for `activeMs` stop counting against the others' shares", () => {
    let now = 0;
    const gate = new FairUse(limits({ activeMs: 1000 }), () => now);
    const log: string[] = [];
    const once = take(gate, 'b', log, 60_000);
    once.places[0].release(10);
    for (let i = 0; i < 4; i++) take(gate, 'a', log, 60_000);
    now = 500;
    take(gate, 'a', log, 60_000);
    expect(log.at(-1)).toBe('a:refused:1');
    now = 1500;
    take(gate, 'a', log, 60_000);
    expect(log.at(-1)).not.toBe('a:refused:1');
  });
});

describe('FairUse: deadlines and bytes', () => {
  it('fails a command still waiting at its deadline as not sent, and gives its turn away', async () => {
    vi.useFakeTimers({ now: 0 });
    const gate = new FairUse(limits({ calls: 1 }));
    const log: string[] = [];
    const first = take(gate, 'a', log, 5_000);
    const late = take(gate, 'a', log, 1_000);
    const next = take(gate, 'a', log, 5_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(log).toStrictEqual(['a:now', 'a:deadline']);
    await late.settled;
    first.places[0].release(1);
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toStrictEqual(['a:now', 'a:deadline', 'a:later']);
    expect(next.places).toHaveLength(1);
  });

  it('charges a command what its answers took, so large answers go fewer at a time; one alone always goes', () => {
    const gate = new FairUse(limits({ calls: 8, bytes: 1000 }));
    expect(gate.estimate('MailsRequest')).toBe(1000);
    const big = new FairUse(limits({ calls: 8, bytes: 4 * 1024 * 1024 }));
    expect(big.estimate('MailsRequest')).toBe(FIRST_ESTIMATE_BYTES);
    const log: string[] = [];
    const first = take(big, 'a', log, Date.now() + 10_000, 'MailsRequest');
    first.places[0].release(3 * 1024 * 1024);
    expect(big.estimate('MailsRequest', 'a')).toBe(3 * 1024 * 1024);
    // Charged to the caller whose answers they were: another caller's same command is not.
    expect(big.estimate('MailsRequest', 'b')).toBe(FIRST_ESTIMATE_BYTES);
    // 3 MiB each against 4 MiB: one at a time, though there are 8 places.
    take(big, 'a', log, Date.now() + 10_000, 'MailsRequest');
    take(big, 'a', log, Date.now() + 10_000, 'MailsRequest');
    expect(log).toStrictEqual(['a:now', 'a:now']);
    expect(big.stats).toMatchObject({ onWire: 1, waiting: 1, bytesOnWire: 3 * 1024 * 1024 });
    // Another command's small answers still fit beside it.
    expect(big.estimate('ServerTime', 'a')).toBe(FIRST_ESTIMATE_BYTES);
    // Smaller answers lower the charge slowly, a larger one raises it at once.
    const falls = new FairUse(limits());
    falls.acquire('a', 'X', Date.now() + 1000) as FairUsePlace;
    (falls.acquire('a', 'X', Date.now() + 1000) as FairUsePlace).release(100_000);
    (falls.acquire('a', 'X', Date.now() + 1000) as FairUsePlace).release(0);
    expect(falls.estimate('X', 'a')).toBe(90_000);
  });

  it('hands the place on when the command at the head of a queue gives up, to a smaller one behind it', async () => {
    vi.useFakeTimers({ now: 0 });
    const gate = new FairUse(limits({ calls: 8, bytes: 150_000 }));
    const log: string[] = [];
    // Learnt: a's Big answers take 90,000 bytes (two do not fit in 150,000), its Small ones less (58,983 after one of 10).
    (gate.acquire('a', 'Big', 60_000) as FairUsePlace).release(90_000);
    (gate.acquire('a', 'Small', 60_000) as FairUsePlace).release(10);
    expect(gate.estimate('Small', 'a')).toBe(58_983.4);
    const held = take(gate, 'a', log, 60_000, 'Big');
    const head = take(gate, 'a', log, 1_000, 'Big');
    const small = take(gate, 'a', log, 60_000, 'Small');
    expect(log).toStrictEqual(['a:now']);
    await vi.advanceTimersByTimeAsync(1_000);
    await head.settled;
    await small.settled;
    expect(log).toStrictEqual(['a:now', 'a:deadline', 'a:later']);
    expect(small.places).toHaveLength(1);
    held.places[0].release(90_000);
  });

  it('fails every waiting command when the session closes', async () => {
    const gate = new FairUse(limits({ calls: 1 }));
    const log: string[] = [];
    take(gate, 'a', log);
    const waiting = take(gate, 'b', log);
    gate.close(new Error('closed'));
    await waiting.settled;
    expect(log).toStrictEqual(['a:now', 'b:closed']);
    expect(gate.stats.waiting).toBe(0);
  });
});
