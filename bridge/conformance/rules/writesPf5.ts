/**
 * PF5 `--writes` rules, in the order they run (each may use what the ones before it made): an account is created,
 * edited and funded, a position opened, its opening deal edited, the position closed, a pending order placed and
 * cancelled, and a group's margin call and a symbol's description changed and changed back (the server left as found). Each checks the events the protocol's
 * change-event table promises ("Change events", docs/manager-protocol.md), in order relative to a Ping. The arguments
 * are those of the commands in sim/README.md ("Commands", PF5), the contract's PF5 records.
 */
import { show } from '../connection.js';
import { RuleFailed } from '../context.js';
import { keyOf, type Row } from '../snapshot.js';
import {
  added,
  bumped,
  Change,
  changedAndRestored,
  deleted,
  needs,
  otherText,
  priced,
  updated,
  writeRule,
  type WriteStep,
} from './changes.js';
import { codeText } from './expect.js';

const DEPOSIT = 1_000_000;

interface Position {
  position: unknown;
  deal: unknown;
  symbol: string;
  volume: number;
}

/** The symbols to trade: those with a quote and full trading. */
function tradable(change: Change): Array<{ symbol: Row; bid: number }> {
  const ticks = change.cache('ticks');
  const out: Array<{ symbol: Row; bid: number }> = [];
  for (const symbol of change.cache('symbols').values()) {
    const tick = ticks.get(keyOf(symbol.symbol));
    if (typeof tick?.bid === 'number' && (symbol.tradeMode === undefined || symbol.tradeMode === 'Full'))
      out.push({ symbol, bid: tick.bid });
  }
  return out;
}

async function send(
  change: Change,
  login: unknown,
  type: string,
  price?: (bid: number, digits: unknown) => number,
): Promise<{ answer: Row; symbol: string; volume: number }> {
  const refusals: string[] = [];
  for (const { symbol, bid } of tradable(change)) {
    const volume = typeof symbol.volumeMin === 'number' && symbol.volumeMin > 0 ? symbol.volumeMin : 100;
    const args: Row = {
      login,
      symbol: symbol.symbol,
      type,
      volume,
      comment: 'conformance',
      ...(price ? { price: price(bid, symbol.digits) } : {}),
    };
    const answer = await change.attempt('DealerSend', args);
    if (answer.result !== undefined) return { answer: answer.result as Row, symbol: String(symbol.symbol), volume };
    refusals.push(
      `${String(symbol.symbol)}: ${codeText('PF5', answer.error?.code)} ${show(answer.error?.message, 60)}`,
    );
    if (refusals.length >= 5) break;
  }
  throw new RuleFailed(`no symbol took a ${type} (${refusals.join('; ') || 'no symbol with a quote'})`);
}

const steps: WriteStep[] = [
  {
    id: 'writes.pf5.user-add',
    name: "UserAdd creates an account: a users add with the answer's record",
    family: 'PF5',
    // The account is created in a group of the snapshot.
    commands: ['UserAdd'],
    events: ['users', 'groups'],
    async run(change) {
      const groups = [...change.cache('groups').values()];
      const group = (groups.find((g) => g.marginMode === 'RetailHedged') ?? groups[0])?.group;
      if (typeof group !== 'string') throw new RuleFailed('no group in the snapshot to create an account in');
      const user = await change.call<Row>('UserAdd', {
        record: { group, leverage: 100, firstName: 'Conformance', lastName: 'Probe' },
      });
      change.ctx.state.set('pf5.login', user.login);
      change.ctx.state.set('pf5.group', group);
      return `${await change.expectEvents([added('users', user.login, user)])} (login ${String(user.login)})`;
    },
  },
  {
    id: 'writes.pf5.user-update',
    name: "UserRecord patches it: a users update with the answer's record",
    family: 'PF5',
    commands: ['UserRecord'],
    events: ['users'],
    async run(change) {
      const login = needs<unknown>(change, 'pf5.login', 'writes.pf5.user-add');
      const user = await change.call<Row>('UserRecord', { login, patch: { comment: 'conformance' } });
      if (user.comment !== 'conformance')
        throw new RuleFailed(`UserRecord answered comment ${show(user.comment)}, expected "conformance"`);
      return change.expectEvents([updated('users', login, user)]);
    },
  },
  {
    id: 'writes.pf5.deposit',
    name: "DealerBalance funds it: a deals add with the answer's deal, a users update with the balance",
    family: 'PF5',
    commands: ['DealerBalance'],
    events: ['deals', 'users'],
    async run(change) {
      const login = needs<unknown>(change, 'pf5.login', 'writes.pf5.user-add');
      const before = Number(change.cache('users').get(keyOf(login))?.balance ?? 0);
      const deal = await change.call<Row>('DealerBalance', {
        login,
        type: 'Balance',
        amount: DEPOSIT,
        comment: 'conformance',
      });
      const balance = before + DEPOSIT;
      return change.expectEvents([
        added('deals', deal.deal, deal),
        {
          ...updated('users', login),
          check: (r) =>
            r.balance === balance
              ? undefined
              : `users ${String(login)}: balance ${show(r.balance)}, expected ${balance}`,
        },
      ]);
    },
  },
  {
    id: 'writes.pf5.position-open',
    name: 'a market Buy opens a position: a positions add and a deals add',
    family: 'PF5',
    commands: ['DealerSend'],
    events: ['positions', 'deals'],
    async run(change) {
      const login = needs<unknown>(change, 'pf5.login', 'writes.pf5.user-add');
      const { answer, symbol, volume } = await send(change, login, 'Buy');
      change.ctx.state.set('pf5.position', {
        position: answer.position,
        deal: answer.deal,
        symbol,
        volume,
      } satisfies Position);
      return `${await change.expectEvents([added('positions', answer.position), added('deals', answer.deal)])} (${symbol} #${String(answer.position)})`;
    },
  },
  {
    id: 'writes.pf5.deal-update',
    name: "DealUpdate edits the opening deal: a deals update with the answer's deal",
    family: 'PF5',
    commands: ['DealUpdate'],
    events: ['deals'],
    async run(change) {
      const { deal } = needs<Position>(change, 'pf5.position', 'writes.pf5.position-open');
      const record = await change.call<Row>('DealUpdate', { record: { deal, comment: 'conformance edit' } });
      return change.expectEvents([
        {
          ...updated('deals', deal, record),
          check: (r) =>
            r.comment === 'conformance edit' ? undefined : `deals ${String(deal)}: comment ${show(r.comment)}`,
        },
      ]);
    },
  },
  {
    id: 'writes.pf5.position-close',
    name: 'a Sell against the position closes it: a positions delete and a deals add',
    family: 'PF5',
    commands: ['DealerSend'],
    events: ['positions', 'deals'],
    async run(change) {
      const login = needs<unknown>(change, 'pf5.login', 'writes.pf5.user-add');
      const opened = needs<Position>(change, 'pf5.position', 'writes.pf5.position-open');
      const answer = await change.call<Row>('DealerSend', {
        login,
        symbol: opened.symbol,
        type: 'Sell',
        volume: opened.volume,
        position: opened.position,
      });
      return change.expectEvents([deleted('positions', opened.position), added('deals', answer.deal)]);
    },
  },
  {
    id: 'writes.pf5.order-place',
    name: 'a BuyLimit below the market: an orders add',
    family: 'PF5',
    commands: ['DealerSend'],
    events: ['orders'],
    async run(change) {
      const login = needs<unknown>(change, 'pf5.login', 'writes.pf5.user-add');
      const { answer } = await send(change, login, 'BuyLimit', (bid, digits) => priced(bid * 0.9, digits));
      change.ctx.state.set('pf5.order', answer.order);
      return change.expectEvents([added('orders', answer.order)]);
    },
  },
  {
    id: 'writes.pf5.order-cancel',
    name: 'DealerCancel cancels it: an orders delete',
    family: 'PF5',
    commands: ['DealerCancel'],
    events: ['orders'],
    async run(change) {
      const order = needs<unknown>(change, 'pf5.order', 'writes.pf5.order-place');
      await change.call('DealerCancel', { order });
      return change.expectEvents([deleted('orders', order)]);
    },
  },
  {
    id: 'writes.pf5.group-update',
    name: 'GroupRecord moves the margin call a point and back: a groups update with each value',
    family: 'PF5',
    commands: ['GroupRecord'],
    events: ['groups'],
    answers: 12,
    async run(change) {
      const name = needs<string>(change, 'pf5.group', 'writes.pf5.user-add');
      const from = change.cache('groups').get(keyOf(name))?.marginCall;
      if (typeof from !== 'number')
        throw new RuleFailed(`groups ${name}: marginCall is ${show(from)} in the cache, not a number to change`);
      return changedAndRestored(change, {
        kind: 'groups',
        key: name,
        field: 'marginCall',
        from,
        to: bumped(from),
        set: (marginCall) => change.call<Row>('GroupRecord', { group: name, patch: { marginCall } }),
      });
    },
  },
  {
    id: 'writes.pf5.symbol-update',
    name: "SymbolRecord changes a symbol's description and back: a symbols update with each",
    family: 'PF5',
    commands: ['SymbolRecord'],
    events: ['symbols'],
    answers: 12,
    async run(change) {
      const symbol = [...change.cache('symbols').values()][0];
      if (!symbol) throw new RuleFailed('no symbol in the snapshot');
      return changedAndRestored(change, {
        kind: 'symbols',
        key: symbol.symbol,
        field: 'description',
        from: symbol.description,
        to: otherText(symbol.description),
        // A merge patch: null removes a description the symbol did not have.
        set: (description) =>
          change.call<Row>('SymbolRecord', { symbol: symbol.symbol, patch: { description: description ?? null } }),
      });
    },
  },
];

export const pf5WriteRules = steps.map(writeRule);
