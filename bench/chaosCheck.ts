/**
 * The chaos soak's invariant checker (bench/chaosDrill.ts runs the soak, this judges what it saw). Pure: it takes
 * what the soak's clients were answered and what the trading server holds at the end, and lists every violation.
 *
 * - Bank: every keyed balance operation leaves at most one history entry on its account, its comment the key. An
 *   operation answered as applied must have exactly one (else *lost*), none may have two (*doubled*), one answered as
 *   refused none (*refused but applied*); an entry whose comment is no key of the run's, or whose amount or account is
 *   not the key's, is *unexplained*. Each account's closing balance is its opening balance plus the amounts of the
 *   keys its history applied (*balance*).
 * - Outcomes: a key whose retries ended without a final answer is *unknown left*. A key the gateway answers "cannot be
 *   known" is a documented final answer (the history then tells), allowed only for an operation in flight while a fault
 *   that can lose an outcome lasted (a broker killed or stopped, the manager connections dropped, the server frozen or
 *   restarting): otherwise *unknowable without a fault*.
 * - Reads: each reading client's figures only grow (an account's balance that only deposits move, a history's
 *   length), so a figure below one the same client read before is *stale*.
 * - Streams: a stream client's balance events of an account, matched in order against the balances its history passes
 *   through, may skip none of them unless a resync notice came in between (*skipped*), may carry no balance the
 *   history does not reach from the last one (*unexplained event*), and must end on the closing balance unless a
 *   resync came after its last event (*stream short*).
 */

export type BankFinal = 'applied' | 'refused' | 'unknowable' | null;

export interface BankOp {
  key: string;
  login: number;
  /** Deposit (> 0) or withdrawal (< 0), in the account's currency. */
  amount: number;
  /** The client's last answer: success, a platform refusal, "cannot be known", or none final (null). */
  final: BankFinal;
  /** When its first attempt was sent and its last answered (epoch ms). */
  startedAt: number;
  endedAt: number;
}

/** One history entry of an account as the trading server keeps it. */
export interface HistoryEntry {
  order: number;
  login: number;
  /** The amount of a balance entry. */
  profit: number;
  comment: string;
}

export interface BankAccount {
  login: number;
  /** The balance before the run's first operation, and at the end (read live). */
  opening: number;
  closing: number;
  /** Every balance entry of the account, oldest first, from its creation (the opening deposit included). */
  history: HistoryEntry[];
}

/** One figure a reading client was answered, in the order the client read them. */
export interface ReadSeen {
  client: string;
  /** What the figure is of, e.g. `cached balance 123456`. */
  subject: string;
  value: number;
  /** When it was answered (epoch ms), named in a violation. */
  at?: number;
}

/** What a stream client saw, in order: a balance of an account, a resync notice, a status change. */
export type StreamItem =
  | {
      type: 'balance';
      login: number;
      balance: number /** When it came (epoch ms), named in a violation. */;
      at?: number;
    }
  | { type: 'resync' }
  | { type: 'status'; connected: boolean };

export interface StreamSeen {
  client: string;
  /** The stream was open before any account's first entry: every balance of every account must come through it. */
  fromStart: boolean;
  items: StreamItem[];
}

/** A fault that can make a keyed operation's outcome unknowable, while it lasted (epoch ms, with its settling time). */
export interface FaultWindow {
  kind: string;
  from: number;
  to: number;
}

export interface ChaosInput {
  accounts: BankAccount[];
  ops: BankOp[];
  reads: ReadSeen[];
  streams: StreamSeen[];
  /** Faults that may lose an outcome; an unknowable key must overlap one. */
  losingFaults: FaultWindow[];
  /** The prefix of the run's keys: a history comment starting with it is one of the run's. */
  keyPrefix: string;
}

export type ViolationKind =
  | 'lost'
  | 'doubled'
  | 'refused but applied'
  | 'unexplained entry'
  | 'balance'
  | 'unknown left'
  | 'unknowable without a fault'
  | 'stale read'
  | 'skipped'
  | 'unexplained event'
  | 'stream short';

export interface Violation {
  kind: ViolationKind;
  detail: string;
}

export interface ChaosVerdict {
  violations: Violation[];
  /** Keys the history applied, and of the unknowable ones how many it applied. */
  applied: number;
  unknowable: { keys: number; applied: number };
}

const cents = (n: number) => Math.round(n * 100);
const when = (at: number | undefined) => (at === undefined ? '' : ` (at ${new Date(at).toISOString().slice(11, 23)})`);

export function checkChaos(input: ChaosInput): ChaosVerdict {
  const violations: Violation[] = [];
  const add = (kind: ViolationKind, detail: string) => violations.push({ kind, detail });
  const byKey = new Map(input.ops.map((op) => [op.key, op]));

  // The history's entries of the run's keys, by key.
  const entriesOf = new Map<string, HistoryEntry[]>();
  for (const account of input.accounts) {
    for (const entry of account.history) {
      if (!entry.comment.startsWith(input.keyPrefix)) continue;
      const op = byKey.get(entry.comment);
      if (!op) {
        add('unexplained entry', `#${entry.order} on ${entry.login}: comment ${entry.comment} is no key of the run`);
        continue;
      }
      if (op.login !== entry.login || cents(op.amount) !== cents(entry.profit)) {
        add(
          'unexplained entry',
          `#${entry.order} on ${entry.login} of ${entry.profit}: key ${op.key} was ${op.amount} on ${op.login}`,
        );
      }
      entriesOf.set(entry.comment, [...(entriesOf.get(entry.comment) ?? []), entry]);
    }
  }

  let applied = 0;
  const unknowable = { keys: 0, applied: 0 };
  for (const op of input.ops) {
    const n = entriesOf.get(op.key)?.length ?? 0;
    if (n > 0) applied++;
    if (n > 1)
      add(
        'doubled',
        `${op.key} (${op.amount} on ${op.login}) applied ${n} times: #${entriesOf
          .get(op.key)!
          .map((e) => e.order)
          .join(', #')}`,
      );
    if (op.final === 'applied' && n === 0)
      add('lost', `${op.key} (${op.amount} on ${op.login}) answered as applied, not in the history`);
    if (op.final === 'refused' && n > 0)
      add('refused but applied', `${op.key} (${op.amount} on ${op.login}) answered as refused, in the history`);
    if (op.final === null)
      add(
        'unknown left',
        `${op.key} (${op.amount} on ${op.login}) has no final answer after its retries (in the history: ${n})`,
      );
    if (op.final === 'unknowable') {
      unknowable.keys++;
      if (n > 0) unknowable.applied++;
      const during = input.losingFaults.find((f) => op.startedAt <= f.to && op.endedAt >= f.from);
      if (!during)
        add(
          'unknowable without a fault',
          `${op.key} (${op.amount} on ${op.login}) answered "cannot be known" with no fault that loses an outcome in flight`,
        );
    }
  }

  for (const account of input.accounts) {
    const sum = input.ops
      .filter((op) => op.login === account.login && (entriesOf.get(op.key)?.length ?? 0) > 0)
      .reduce((s, op) => s + cents(op.amount), 0);
    if (cents(account.opening) + sum !== cents(account.closing)) {
      add(
        'balance',
        `${account.login}: closing ${account.closing}, opening ${account.opening} + applied ${sum / 100} = ${(cents(account.opening) + sum) / 100}`,
      );
    }
  }

  const highest = new Map<string, number>();
  for (const read of input.reads) {
    const id = `${read.client}\u0000${read.subject}`;
    const before = highest.get(id);
    if (before !== undefined && read.value < before)
      add('stale read', `${read.client}: ${read.subject} ${read.value} after ${before}${when(read.at)}`);
    if (before === undefined || read.value > before) highest.set(id, read.value);
  }

  const prefixes = new Map(
    input.accounts.map((a) => {
      const balances = [0];
      for (const e of a.history) balances.push(balances.at(-1)! + cents(e.profit));
      return [a.login, balances] as const;
    }),
  );
  for (const stream of input.streams) checkStream(stream, prefixes, add);

  return { violations, applied, unknowable };
}

/** One stream client's balance events against the balances each account's history passes through (in cents). */
function checkStream(
  stream: StreamSeen,
  prefixes: ReadonlyMap<number, number[]>,
  add: (kind: ViolationKind, detail: string) => void,
): void {
  /** Per account: the history index of the last event matched, and whether a resync came since. */
  const at = new Map<number, { index: number; resynced: boolean }>();
  if (stream.fromStart) for (const login of prefixes.keys()) at.set(login, { index: 0, resynced: false });
  for (const item of stream.items) {
    if (item.type === 'resync') {
      for (const state of at.values()) state.resynced = true;
      continue;
    }
    if (item.type !== 'balance') continue;
    const balances = prefixes.get(item.login);
    if (!balances) continue;
    const state = at.get(item.login);
    const from = state?.index ?? 0;
    const index = balances.indexOf(cents(item.balance), from);
    if (index < 0) {
      add(
        'unexplained event',
        `${stream.client}: ${item.login} balance ${item.balance}, which its history does not reach from ${balances[from] / 100}${when(item.at)}`,
      );
      continue;
    }
    // Without `fromStart`, the first event of an account may come at any point of its history: the stream began then.
    if (state && index > state.index + 1 && !state.resynced) {
      add(
        'skipped',
        `${stream.client}: ${item.login} went from ${balances[state.index] / 100} to ${item.balance}, skipping ${index - state.index - 1} balance event(s) without a resync${when(item.at)}`,
      );
    }
    at.set(item.login, { index, resynced: false });
  }
  for (const [login, state] of at) {
    const balances = prefixes.get(login)!;
    if (state.index < balances.length - 1 && !state.resynced) {
      add(
        'stream short',
        `${stream.client}: ${login} last seen at ${balances[state.index] / 100}, closing ${balances.at(-1)! / 100}: ${balances.length - 1 - state.index} balance event(s) never came`,
      );
    }
  }
}
