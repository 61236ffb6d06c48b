/**
 * PF4 `--writes` rules, in the order they run (each may use what the ones before it made): an account is created,
 * renamed and funded, a market trade opened, modified and closed, a pending order placed and deleted, a group's margin
 * call and a symbol group's description changed and changed back, the symbols refreshed, a news topic and a mail sent,
 * and (after the reconnect rule, which sees these changes in a fresh snapshot) the account deleted. Each checks the
 * events the protocol's change-event table promises for it ("Change events", docs/manager-protocol.md), in order
 * relative to a Ping. The arguments are those of the commands in sim/README.md
 * ("Commands", PF4), the contract's PF4 records.
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
  put,
  updated,
  writeRule,
  type Expected,
  type WriteStep,
} from './changes.js';
import { codeText } from './expect.js';
import { valueText } from '../../../shared/valueText.js';

const NAME = 'Conformance Probe';
const DEPOSIT = 1_000_000;
const CLOSED = (record: Row) => /^(Closed|Deleted)/.test(valueText(record.tradeRecordState ?? ''));

interface Opened {
  order: number;
  symbol: string;
  digits: unknown;
  ask: number;
  volume: number;
  /** The trade as the open answered it. */
  record: Row;
}

/** A trade closed or deleted: its final record (a delete, or an update in a closed state). */
const tradeGone = (order: number): Expected => ({
  kind: 'trades',
  ops: ['delete', 'update'],
  key: order,
  accept: CLOSED,
  check: (r) =>
    CLOSED(r)
      ? undefined
      : `trades ${order}: the final record's tradeRecordState is ${show(r.tradeRecordState)}, not closed`,
});

/** Opens a trade of `command` on the first symbol that takes one; `price` from the symbol's ask. */
async function openOn(
  change: Change,
  login: number,
  command: string,
  price?: (ask: number, digits: unknown) => number,
): Promise<Opened> {
  const group = change.cache('groups').get(keyOf(needs<string>(change, 'pf4.group', 'writes.pf4.user-add')));
  const ticks = change.cache('ticks');
  const refusals: string[] = [];
  for (const symbol of change.cache('symbols').values()) {
    const tick = ticks.get(keyOf(symbol.symbol));
    if (!tick || typeof tick.ask !== 'number') continue;
    const security = (group?.secGroups as Row[] | undefined)?.[Number(symbol.type)];
    const volume = typeof security?.lotMin === 'number' && security.lotMin > 0 ? security.lotMin : 100;
    const args: Row = {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: login,
      tradeCommand: command,
      symbol: symbol.symbol,
      volume,
      comment: 'conformance',
      ...(price ? { price: price(tick.ask, symbol.digits) } : {}),
    };
    const answer = await change.attempt('TradeTransaction', args);
    if (answer.result !== undefined) {
      const trade = answer.result as Row;
      return {
        order: trade.order as number,
        symbol: String(symbol.symbol),
        digits: symbol.digits,
        ask: tick.ask,
        volume,
        record: trade,
      };
    }
    refusals.push(
      `${String(symbol.symbol)}: ${codeText('PF4', answer.error?.code)} ${show(answer.error?.message, 60)}`,
    );
    if (refusals.length >= 5) break;
  }
  throw new RuleFailed(`no symbol took a ${command} (${refusals.join('; ') || 'no symbol with a quote'})`);
}

const steps: WriteStep[] = [
  {
    id: 'writes.pf4.user-add',
    name: "UserRecordNew creates an account: a users add with the answer's record",
    family: 'PF4',
    // The account is created in a group of the snapshot.
    commands: ['UserRecordNew'],
    events: ['users', 'groups'],
    async run(change) {
      const group = [...change.cache('groups').values()][0]?.group;
      if (typeof group !== 'string') throw new RuleFailed('no group in the snapshot to create an account in');
      const user = await change.call<Row>('UserRecordNew', { record: { group, name: NAME, leverage: 100 } });
      change.ctx.state.set('pf4.login', user.login);
      change.ctx.state.set('pf4.group', group);
      return `${await change.expectEvents([added('users', user.login, user)])} (login ${String(user.login)})`;
    },
  },
  {
    id: 'writes.pf4.user-update',
    name: "UserRecordUpdate renames it: a users update with the answer's record",
    family: 'PF4',
    commands: ['UserRecordUpdate'],
    events: ['users'],
    async run(change) {
      const login = needs<number>(change, 'pf4.login', 'writes.pf4.user-add');
      const user = await change.call<Row>('UserRecordUpdate', { login, record: { name: `${NAME} Renamed` } });
      if (user.name !== `${NAME} Renamed`)
        throw new RuleFailed(`UserRecordUpdate answered name ${show(user.name)}, expected "${NAME} Renamed"`);
      return change.expectEvents([updated('users', login, user)]);
    },
  },
  {
    id: 'writes.pf4.deposit',
    name: 'a balance transaction funds it: a users update with the new balance',
    family: 'PF4',
    commands: ['TradeTransaction'],
    events: ['users'],
    async run(change) {
      const login = needs<number>(change, 'pf4.login', 'writes.pf4.user-add');
      const before = Number(change.cache('users').get(keyOf(login))?.balance ?? 0);
      await change.call('TradeTransaction', {
        tradeTransactionType: 'BrBalance',
        tradeCommand: 'Balance',
        orderBy: login,
        price: DEPOSIT,
        comment: 'conformance',
      });
      const balance = before + DEPOSIT;
      return change.expectEvents([
        {
          ...updated('users', login),
          check: (r) =>
            r.balance === balance ? undefined : `users ${login}: balance ${show(r.balance)}, expected ${balance}`,
        },
      ]);
    },
  },
  {
    id: 'writes.pf4.trade-open',
    name: "a market trade opens: a trades add with the answer's record, a margin update",
    family: 'PF4',
    commands: ['TradeTransaction'],
    events: ['trades', 'margin'],
    async run(change) {
      const login = needs<number>(change, 'pf4.login', 'writes.pf4.user-add');
      const opened = await openOn(change, login, 'Buy');
      change.ctx.state.set('pf4.trade', opened);
      return `${await change.expectEvents([added('trades', opened.order, opened.record), put('margin', login)])} (${opened.symbol} #${opened.order})`;
    },
  },
  {
    id: 'writes.pf4.trade-modify',
    name: "the trade is modified: a trades update with the answer's record",
    family: 'PF4',
    commands: ['TradeTransaction'],
    events: ['trades'],
    async run(change) {
      const opened = needs<Opened>(change, 'pf4.trade', 'writes.pf4.trade-open');
      const tp = priced(opened.ask * 1.5, opened.digits);
      const trade = await change.call<Row>('TradeTransaction', {
        tradeTransactionType: 'BrOrderModify',
        order: opened.order,
        tp,
      });
      return change.expectEvents([
        {
          ...updated('trades', opened.order, trade),
          check: (r) => (r.tp === tp ? undefined : `trades ${opened.order}: tp ${show(r.tp)}, expected ${tp}`),
        },
      ]);
    },
  },
  {
    id: 'writes.pf4.trade-close',
    name: 'the trade is closed: its final record, a margin delete, a users update',
    family: 'PF4',
    commands: ['TradeTransaction'],
    events: ['trades', 'margin', 'users'],
    async run(change) {
      const opened = needs<Opened>(change, 'pf4.trade', 'writes.pf4.trade-open');
      const login = needs<number>(change, 'pf4.login', 'writes.pf4.user-add');
      await change.call('TradeTransaction', {
        tradeTransactionType: 'BrOrderClose',
        order: opened.order,
        volume: opened.volume,
      });
      return change.expectEvents([tradeGone(opened.order), deleted('margin', login), updated('users', login)]);
    },
  },
  {
    id: 'writes.pf4.pending-order',
    name: 'a pending order is placed and deleted: trades add then its final record, margin put then delete',
    family: 'PF4',
    commands: ['TradeTransaction'],
    events: ['trades', 'margin'],
    answers: 12,
    async run(change) {
      const login = needs<number>(change, 'pf4.login', 'writes.pf4.user-add');
      const pending = await openOn(change, login, 'BuyLimit', (ask, digits) => priced(ask * 0.9, digits));
      const placed = await change.expectEvents([added('trades', pending.order), put('margin', login)]);
      await change.call('TradeTransaction', { tradeTransactionType: 'BrOrderDelete', order: pending.order });
      return `${placed}; ${await change.expectEvents([tradeGone(pending.order), deleted('margin', login)])}`;
    },
  },
  {
    id: 'writes.pf4.group-update',
    name: 'GroupRecordUpdate moves the margin call a point and back: a groups update with each value',
    family: 'PF4',
    commands: ['GroupRecordUpdate'],
    events: ['groups'],
    answers: 12,
    async run(change) {
      const name = needs<string>(change, 'pf4.group', 'writes.pf4.user-add');
      const from = change.cache('groups').get(keyOf(name))?.marginCall;
      if (typeof from !== 'number')
        throw new RuleFailed(`groups ${name}: marginCall is ${show(from)} in the cache, not a number to change`);
      return changedAndRestored(change, {
        kind: 'groups',
        key: name,
        field: 'marginCall',
        from,
        to: bumped(from),
        set: (marginCall) => change.call<Row>('GroupRecordUpdate', { group: name, record: { marginCall } }),
      });
    },
  },
  {
    id: 'writes.pf4.symbols-refresh',
    name: 'SymbolsRefresh: a symbols update for every active symbol',
    family: 'PF4',
    commands: ['SymbolsRefresh'],
    events: ['symbols'],
    async run(change) {
      const symbols = [...change.cache('symbols').values()].map((s) => s.symbol);
      await change.call('SymbolsRefresh', {});
      await change.expectEvents(symbols.map((symbol) => updated('symbols', symbol)));
      return `a symbols update for each of ${symbols.length} symbols`;
    },
  },
  {
    id: 'writes.pf4.symbol-group-update',
    name: "CfgUpdateSymbolGroup changes a slot's description and back: a symbolGroups update with each",
    family: 'PF4',
    commands: ['CfgUpdateSymbolGroup'],
    events: ['symbolGroups'],
    answers: 12,
    async run(change) {
      const slot = [...change.cache('symbolGroups').values()][0];
      if (!slot) throw new RuleFailed('no symbol group in the snapshot');
      return changedAndRestored(change, {
        kind: 'symbolGroups',
        key: slot.pos,
        field: 'description',
        from: slot.description,
        to: otherText(slot.description),
        async set(value) {
          // The slot is written whole: its name is sent as it is.
          const description = value ?? null;
          const answer = await change.call<unknown>('CfgUpdateSymbolGroup', {
            pos: slot.pos,
            record: { name: slot.name, description },
          });
          return typeof answer === 'object' && answer !== null && !Array.isArray(answer)
            ? { pos: slot.pos, ...(answer as Row) }
            : { pos: slot.pos, name: slot.name, description };
        },
      });
    },
  },
  {
    id: 'writes.pf4.news-send',
    name: 'NewsSend: a news add of the topic',
    family: 'PF4',
    commands: ['NewsSend'],
    events: ['news'],
    async run(change) {
      const topic = `${NAME} ${Date.now()}`;
      await change.call('NewsSend', {
        record: { topic, category: 'Conformance', body: 'A topic sent by the conformance suite.' },
      });
      return change.expectEvents([{ kind: 'news', ops: ['add'], accept: (r) => r.topic === topic }]);
    },
  },
  {
    id: 'writes.pf4.mail-send',
    name: 'MailSend to the account: a mail add',
    family: 'PF4',
    commands: ['MailSend'],
    events: ['mail'],
    async run(change) {
      const login = needs<number>(change, 'pf4.login', 'writes.pf4.user-add');
      const subject = `${NAME} ${Date.now()}`;
      await change.call('MailSend', {
        record: { logins: [login], subject, body: 'A mail sent by the conformance suite.' },
      });
      return change.expectEvents([{ kind: 'mail', ops: ['add'], accept: (r) => r.subject === subject }]);
    },
  },
];

/** Run after the reconnect rule, so that the account is still there when a fresh snapshot is compared. */
const cleanup: WriteStep[] = [
  {
    id: 'writes.pf4.user-delete',
    name: 'UsersGroupOp Delete removes the account: a users delete',
    family: 'PF4',
    commands: ['UsersGroupOp'],
    events: ['users'],
    async run(change) {
      const login = needs<number>(change, 'pf4.login', 'writes.pf4.user-add');
      await change.call('UsersGroupOp', { record: { command: 'Delete', logins: [login] } });
      return change.expectEvents([deleted('users', login)]);
    },
  },
];

export const pf4WriteRules = steps.map(writeRule);
export const pf4CleanupRules = cleanup.map(writeRule);
