/**
 * The chaos soak's checker on synthetic runs: a clean run passes, and each kind of damage the soak looks for (a lost
 * write, a doubled one, a key left unknown, a stale read, a skipped stream event, ...) is reported, naming the key,
 * the account or the client.
 */
import { describe, expect, it } from 'vitest';
import { checkChaos, type BankOp, type ChaosInput, type HistoryEntry } from './chaosCheck.js';

const P = 'ck-t-';
const op = (n: number, login: number, amount: number, final: BankOp['final'] = 'applied', at = 1000 * n): BankOp => ({
  key: `${P}${n}`,
  login,
  amount,
  final,
  startedAt: at,
  endedAt: at + 100,
});
const entry = (order: number, login: number, profit: number, key: string): HistoryEntry => ({
  order,
  login,
  profit,
  comment: key,
});

/** Two accounts, three operations each applied once, reads that only grow, a stream that saw every balance. */
function clean(): ChaosInput {
  const ops = [op(1, 100, 500), op(2, 100, -20.5), op(3, 200, 300), op(4, 200, 7.25)];
  return {
    keyPrefix: P,
    ops,
    accounts: [
      { login: 100, opening: 0, closing: 479.5, history: [entry(1, 100, 500, `${P}1`), entry(3, 100, -20.5, `${P}2`)] },
      { login: 200, opening: 0, closing: 307.25, history: [entry(2, 200, 300, `${P}3`), entry(4, 200, 7.25, `${P}4`)] },
    ],
    reads: [
      { client: 'cached', subject: 'balance 200', value: 300 },
      { client: 'cached', subject: 'balance 200', value: 300 },
      { client: 'cached', subject: 'balance 200', value: 307.25 },
      { client: 'live', subject: 'history 100', value: 1 },
      { client: 'live', subject: 'history 100', value: 2 },
    ],
    streams: [
      {
        client: 'sse',
        fromStart: true,
        items: [
          { type: 'status', connected: true },
          { type: 'balance', login: 100, balance: 500 },
          { type: 'balance', login: 200, balance: 300 },
          { type: 'balance', login: 100, balance: 479.5 },
          // A change of something else of the account: the same balance again.
          { type: 'balance', login: 100, balance: 479.5 },
          { type: 'balance', login: 200, balance: 307.25 },
        ],
      },
    ],
    losingFaults: [],
  };
}

const kinds = (input: ChaosInput) => checkChaos(input).violations.map((v) => v.kind);

describe('the chaos checker', () => {
  it('finds nothing wrong in a clean run and counts the keys applied', () => {
    expect(checkChaos(clean())).toStrictEqual({ violations: [], applied: 4, unknowable: { keys: 0, applied: 0 } });
  });

  it('reports a lost write: answered as applied, absent from the history', () => {
    const input = clean();
    input.accounts[1].history.pop();
    input.accounts[1].closing = 300;
    input.streams = [];
    expect(checkChaos(input).violations).toStrictEqual([
      { kind: 'lost', detail: `${P}4 (7.25 on 200) answered as applied, not in the history` },
    ]);
  });

  it('reports a doubled write: one key, two history entries, and a balance that counted it twice', () => {
    const input = clean();
    input.accounts[0].history.push(entry(9, 100, -20.5, `${P}2`));
    input.accounts[0].closing = 459;
    input.streams = [];
    expect(checkChaos(input).violations).toStrictEqual([
      { kind: 'doubled', detail: `${P}2 (-20.5 on 100) applied 2 times: #3, #9` },
      { kind: 'balance', detail: '100: closing 459, opening 0 + applied 479.5 = 479.5' },
    ]);
  });

  it('reports a balance the history does not explain, and an entry of the run that no key made', () => {
    const input = clean();
    input.accounts[0].closing = 480;
    input.accounts[1].history.push(entry(10, 200, 1, `${P}99`));
    input.streams = [];
    expect(checkChaos(input).violations).toStrictEqual([
      { kind: 'unexplained entry', detail: `#10 on 200: comment ${P}99 is no key of the run` },
      { kind: 'balance', detail: '100: closing 480, opening 0 + applied 479.5 = 479.5' },
    ]);
  });

  it('reports a key left unknown after its retries, and a refused one the server applied', () => {
    const input = clean();
    input.ops[0].final = null;
    input.ops[3].final = 'refused';
    expect(checkChaos(input).violations).toStrictEqual([
      { kind: 'unknown left', detail: `${P}1 (500 on 100) has no final answer after its retries (in the history: 1)` },
      { kind: 'refused but applied', detail: `${P}4 (7.25 on 200) answered as refused, in the history` },
    ]);
  });

  it('allows "cannot be known" only for an operation in flight during a fault that can lose an outcome', () => {
    const input = clean();
    input.ops[1].final = 'unknowable'; // 2000..2100, applied
    input.ops[2].final = 'unknowable'; // 3000..3100, applied
    input.losingFaults = [{ kind: 'broker-kill', from: 2050, to: 2500 }];
    expect(checkChaos(input)).toStrictEqual({
      violations: [
        {
          kind: 'unknowable without a fault',
          detail: `${P}3 (300 on 200) answered "cannot be known" with no fault that loses an outcome in flight`,
        },
      ],
      applied: 4,
      unknowable: { keys: 2, applied: 2 },
    });
  });

  it('reports a stale read: a figure below one the same client read before, not one another client read', () => {
    const input = clean();
    input.reads.push({ client: 'cached', subject: 'balance 200', value: 300 });
    input.reads.push({ client: 'other', subject: 'balance 200', value: 1 });
    expect(checkChaos(input).violations).toStrictEqual([
      { kind: 'stale read', detail: 'cached: balance 200 300 after 307.25' },
    ]);
  });

  it('reports a skipped stream event, unless a resync notice came in between', () => {
    const skipping = clean();
    // 100 went from 0 (its start) straight to 479.5: the event of 500 never came.
    skipping.streams[0].items.splice(1, 1);
    expect(checkChaos(skipping).violations).toStrictEqual([
      { kind: 'skipped', detail: 'sse: 100 went from 0 to 479.5, skipping 1 balance event(s) without a resync' },
    ]);
    const told = clean();
    told.streams[0].items.splice(
      1,
      1,
      { type: 'status', connected: false },
      { type: 'resync' },
      { type: 'status', connected: true },
    );
    expect(kinds(told)).toStrictEqual([]);
  });

  it('reports a stream that stops short of the closing balance, and an event no history explains', () => {
    const input = clean();
    input.streams[0].items.pop();
    input.streams[0].items.push({ type: 'balance', login: 100, balance: 500 });
    expect(checkChaos(input).violations).toStrictEqual([
      { kind: 'unexplained event', detail: 'sse: 100 balance 500, which its history does not reach from 479.5' },
      { kind: 'stream short', detail: 'sse: 200 last seen at 300, closing 307.25: 1 balance event(s) never came' },
    ]);
  });

  it("lets a stream opened late begin anywhere in an account's history", () => {
    const input = clean();
    input.streams[0].fromStart = false;
    input.streams[0].items.splice(1, 2);
    expect(kinds(input)).toStrictEqual([]);
  });
});
