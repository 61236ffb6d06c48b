/**
 * Micro-benchmark of the lossless JSON (`shared/losslessJson.ts`) against the native JSON.parse / JSON.stringify it
 * wraps, on a page of 1,000 PF5 positions as a frame carries it: the common case (every id below 2^53) and the case
 * it exists for (ids beyond 2^53 − 1). Prints each figure as a ratio to the native one measured in the same run.
 * `npx tsx bench/losslessJsonBench.ts [trials]`
 */
import { parseJson, stringifyJson } from '../shared/losslessJson.js';
import { median } from './measure.js';

const rounds = Number(process.argv[2] ?? 30);

function page(big: boolean): Record<string, unknown>[] {
  const base = big ? 9007199254740993n : 1_000_000;
  return Array.from({ length: 1000 }, (_, i) => ({
    position: typeof base === 'bigint' ? base + BigInt(i) : base + i,
    externalID: '',
    login: typeof base === 'bigint' ? 9223372036854775001n : 500_000 + (i % 200),
    dealer: 0,
    symbol: 'EURUSD',
    action: i % 2 ? 'Buy' : 'Sell',
    digits: 5,
    digitsCurrency: 2,
    contractSize: 100000,
    timeCreate: '2025-01-02T03:04:05Z',
    timeUpdate: '2025-01-02T03:04:05Z',
    priceOpen: 1.08453 + i / 1e5,
    priceCurrent: 1.08453 + i / 3e5,
    priceSL: 0,
    priceTP: 1.0912,
    volume: 1000 * (1 + (i % 7)),
    volumeExt: 0,
    profit: -12.345678901234567 + i,
    storage: 0,
    rateProfit: 1,
    rateMargin: 0.92345678,
    expertID: 0,
    expertPositionID: 0,
    comment: `position ${i}`,
    activationMode: 'None',
    activationTime: '1970-01-01T00:00:00Z',
    activationPrice: 0,
    activationFlags: 'None',
    reason: 'Client',
    modificationFlags: 'None',
  }));
}

/** Milliseconds per call of `fn`, over `rounds` calls. */
function time(fn: () => unknown, n = 10): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1e6 / n;
}

/**
 * The median over `rounds` trials of (candidate / native), each trial timing both back to back, so that load from other
 * processes on the machine hits both sides of a ratio alike.
 */
function ratio(candidate: () => unknown, native: () => unknown): { ratio: number; nativeMs: number } {
  for (let i = 0; i < 10; i++) {
    candidate();
    native();
  }
  const ratios: number[] = [];
  const natives: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const n = time(native);
    ratios.push(time(candidate) / n);
    natives.push(n);
  }
  return { ratio: median(ratios), nativeMs: median(natives) };
}

const plain = page(false);
const plainFrame = { id: 7, ok: true, data: plain };
const plainText = JSON.stringify(plainFrame);
const big = page(true);
const bigFrame = { id: 7, ok: true, data: big };
const bigText = stringifyJson(bigFrame);

const rows: Array<[string, { ratio: number; nativeMs: number }]> = [
  [
    'parse, ids < 2^53 (common path)',
    ratio(
      () => parseJson(plainText),
      () => JSON.parse(plainText),
    ),
  ],
  [
    'stringify, ids < 2^53 (common path)',
    ratio(
      () => stringifyJson(plainFrame),
      () => JSON.stringify(plainFrame),
    ),
  ],
  [
    'parse, ids > 2^53 (exact parser)',
    ratio(
      () => parseJson(bigText),
      () => JSON.parse(bigText),
    ),
  ],
  [
    'stringify, ids > 2^53 (walk)',
    ratio(
      () => stringifyJson(bigFrame),
      () => JSON.stringify(plainFrame),
    ),
  ],
];
console.log(
  `1,000-position frame of ${plainText.length} bytes, ${rounds} trials of 10 calls each; median ratio to native (1.00)`,
);
for (const [what, r] of rows)
  console.log(`${what.padEnd(40)} ${r.ratio.toFixed(2)}x native (native ${r.nativeMs.toFixed(2)} ms)`);
