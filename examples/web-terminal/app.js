/**
 * The web terminal: sign in, pick a trade platform, watch its quotes, page through its accounts, open one and follow
 * its balance, equity, margin level and open trades as the streams change them, and trade on it. Every write goes
 * through `Gateway.write` (an Idempotency-Key per action, re-sent unchanged on retry) and says in the activity log
 * what the gateway answered, in a dealer's words. PF4 has the full set; PF5's API reads accounts and positions only,
 * so its account view is read-only.
 */
import { Gateway, describeError } from './gateway.js';
import { openStream } from './streams.js';

const $ = (selector) => document.querySelector(selector);
const PAGE = 10;

/** What the terminal calls on each family: the API paths, and how a trade or position reads as a row. */
const FAMILIES = {
  PF4: {
    listAccounts: (p) => `/api/v2/PF4/${p}/UsersRequest`,
    account: (p, login) => `/api/v2/PF4/${p}/UserRecordGet/${login}`,
    margin: (p, login) => `/api/v2/PF4/${p}/MarginLevelGet/${login}`,
    trades: async (gateway, p, account) =>
      (await gateway.read(`/api/v2/PF4/${p}/TradesGetByLogin/${account.login}/${encodeURIComponent(account.group)}`))
        .data,
    row: (t) => ({
      ticket: t.order,
      symbol: t.symbol,
      type: t.cmd ?? t.tradeCommand,
      lots: t.volumeLots ?? t.volume / 100,
      openPrice: t.openPrice,
      profit: t.profit,
    }),
    trading: true,
  },
  PF5: {
    listAccounts: null,
    account: (p, login) => `/api/v2/PF5/${p}/UserGet/${login}`,
    margin: (p, login) => `/api/PF5/${p}/UserAccountGet/${login}`,
    trades: async (gateway, p, account) =>
      (
        await gateway.read(`/api/v2/PF5/${p}/PositionByGroup/${encodeURIComponent(account.group)}`, { limit: 1000 })
      ).data.filter((position) => position.login === account.login),
    row: (p) => ({
      ticket: p.position,
      symbol: p.symbol,
      type: p.action,
      lots: p.volume / 10_000,
      openPrice: p.priceOpen,
      profit: p.profit,
    }),
    trading: false,
  },
};

const state = {
  gateway: null,
  transport: 'hub',
  platform: null,
  stream: null,
  quotes: new Map(),
  /** Cursors of the pages shown so far (the first page has none). */
  cursors: [null],
  next: null,
  account: null,
  trades: new Map(),
};

const fmt = (value, digits = 2) => (typeof value === 'number' ? value.toFixed(digits) : '–');
const cell = (text, className) =>
  Object.assign(document.createElement('td'), { textContent: text ?? '', className: className ?? '' });

/** One line of the activity log; `kind` (ok, error, replayed, unknown, wait, stream) colours it and tests read it. */
function log(text, kind = 'info') {
  const item = Object.assign(document.createElement('li'), {
    textContent: `${new Date().toLocaleTimeString()}  ${text}`,
  });
  item.dataset.kind = kind;
  $('#log').prepend(item);
  while ($('#log').children.length > 50) $('#log').lastChild.remove();
}

// ---- sign-in and platforms ----

/**
 * The gateway the page signs in at: the one the server that serves it names (`<meta name="gateway">`: `npm run
 * terminal`'s GATEWAY_URL), else its own origin (the edge at /terminal/). A link's `?gateway=` naming another one is
 * only shown, never used: the secret goes elsewhere only if the user enters that gateway in the field.
 */
const params = new URLSearchParams(location.search);
const originOf = (url) => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};
const ownGateway = document.querySelector('meta[name="gateway"]')?.content || location.origin;
const linkGateway = params.get('gateway');
$('#sign-in').gateway.value = ownGateway;
if (linkGateway !== null && originOf(linkGateway) !== originOf(ownGateway)) {
  $('#gateway-note').textContent =
    `This link names another gateway, ${linkGateway}. The terminal signs in at ${ownGateway}; ` +
    'it sends your secret elsewhere only if you enter that gateway above yourself.';
  $('#gateway-note').hidden = false;
}
$('#sign-in').clientId.value = params.get('clientId') ?? '';
// A connection the page's Content-Security-Policy refused (a gateway other than the one it is served for) says so.
document.addEventListener('securitypolicyviolation', (event) => {
  if (event.effectiveDirective === 'connect-src')
    log(`Not sent to ${event.blockedURI}: this page may connect only to ${ownGateway}.`, 'error');
});

$('#sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  const gateway = new Gateway(form.gateway.value);
  gateway.report = log;
  try {
    await gateway.signIn({
      clientId: form.clientId.value,
      clientSecret: form.clientSecret.value,
      token: form.token.value,
    });
    const platforms = (await gateway.read('/api/TradePlatforms')).data;
    state.gateway = gateway;
    state.transport = form.transport.value;
    form.clientSecret.value = '';
    form.hidden = true;
    $('#terminal').hidden = false;
    $('#who').textContent = `${form.clientId.value || 'token'} @ ${gateway.base}`;
    $('#platform').replaceChildren(...platforms.map((p) => new Option(`${p.type} · ${p.name ?? p.id}`, p.id)));
    $('#platform').onchange = () => selectPlatform(platforms.find((p) => p.id === $('#platform').value));
    selectPlatform(platforms[0]);
  } catch (error) {
    log(error.message, 'error');
    alert(error.message);
  }
});

function selectPlatform(platform) {
  state.stream?.close();
  state.platform = platform;
  state.quotes.clear();
  $('#quotes').replaceChildren();
  $('#order').symbol.replaceChildren();
  closeAccount();
  state.stream = openStream(state.gateway, platform, state.transport, {
    state: showStreamState,
    tick: showTick,
    trade: applyTrade,
    position: applyTrade,
    user: (u) => {
      if (u.login === state.account?.login && typeof u.balance === 'number') showBalance(u.balance);
    },
    margin: applyMargin,
    resync: (message) => {
      $('#resynced').textContent = `resynced ${new Date().toLocaleTimeString()}`;
      log(`Stream resynced (${message}): the account is read again.`, 'stream');
      if (state.account) openAccount(state.account.login);
    },
  });
  const family = FAMILIES[platform.type];
  $('#first-page').hidden = $('#next-page').hidden = !family.listAccounts;
  state.cursors = [null];
  if (family.listAccounts) loadPage(null);
  else $('#account-rows').replaceChildren();
}

const STATE_WORDS = {
  connecting: 'connecting',
  live: 'live',
  'platform-down': 'platform disconnected',
  reconnecting: 'reconnecting',
  off: 'off',
};
function showStreamState(name, detail) {
  const badge = $('#stream-state');
  if (badge.dataset.state !== name) log(`Stream ${STATE_WORDS[name]}${detail ? ` (${detail})` : ''}.`, 'stream');
  badge.dataset.state = name;
  document.body.dataset.stream = name;
  badge.className = `state ${name}`;
  badge.textContent = `stream: ${STATE_WORDS[name]}${detail && name === 'live' ? ` · ${detail}` : ''}`;
}

// ---- quotes ----

function showTick(tick) {
  let quote = state.quotes.get(tick.symbol);
  if (!quote) {
    const row = document.createElement('tr');
    row.dataset.symbol = tick.symbol;
    row.append(cell(tick.symbol), cell('', 'bid'), cell('', 'ask'), cell('', 'time'));
    const rows = [...$('#quotes').children];
    $('#quotes').insertBefore(row, rows.find((r) => r.dataset.symbol > tick.symbol) ?? null);
    quote = { row, bid: tick.bid };
    state.quotes.set(tick.symbol, quote);
    $('#order').symbol.append(new Option(tick.symbol));
  }
  const direction = tick.bid > quote.bid ? 'up' : tick.bid < quote.bid ? 'down' : (quote.row.dataset.direction ?? '');
  quote.bid = tick.bid;
  quote.row.dataset.direction = direction;
  quote.row.querySelector('.bid').textContent = String(tick.bid);
  quote.row.querySelector('.ask').textContent = String(tick.ask);
  quote.row.querySelector('.time').textContent = tick.lastTime
    ? new Date(isNaN(tick.lastTime) ? tick.lastTime : Number(tick.lastTime) * 1000).toLocaleTimeString()
    : '';
}

// ---- accounts ----

async function loadPage(cursor) {
  const family = FAMILIES[state.platform.type];
  try {
    const answer = await state.gateway.read(family.listAccounts(state.platform.id), { limit: PAGE, cursor });
    showAccounts(answer.data);
    state.next = answer.meta.paging?.hasMore ? answer.meta.paging.nextCursor : null;
    $('#next-page').disabled = !state.next;
  } catch (error) {
    log(`Accounts: ${error.message}`, 'error');
  }
}

function showAccounts(accounts) {
  $('#account-rows').replaceChildren(
    ...accounts.map((a) => {
      const row = document.createElement('tr');
      row.dataset.login = a.login;
      row.append(cell(String(a.login)), cell(a.name), cell(a.group), cell(fmt(a.balance)));
      row.onclick = () => openAccount(a.login);
      return row;
    }),
  );
}

$('#next-page').onclick = () => {
  state.cursors.push(state.next);
  loadPage(state.next);
};
$('#first-page').onclick = () => {
  state.cursors = [null];
  loadPage(null);
};
$('#search').addEventListener('submit', async (event) => {
  event.preventDefault();
  const login = Number(event.target.login.value);
  try {
    const account = (await state.gateway.read(FAMILIES[state.platform.type].account(state.platform.id, login))).data;
    showAccounts([account]);
    $('#next-page').disabled = true;
    openAccount(login);
  } catch (error) {
    log(`Account ${login}: ${error.message}`, 'error');
  }
});

// ---- one account ----

function closeAccount() {
  state.account = null;
  state.trades.clear();
  $('#account').hidden = true;
}

async function openAccount(login) {
  const { id, type } = state.platform;
  const family = FAMILIES[type];
  try {
    const account = (await state.gateway.read(family.account(id, login))).data;
    state.account = account;
    $('#account').hidden = false;
    $('#account-login').textContent = String(login);
    $('#account-name').textContent = `${account.name ?? ''} · ${account.group}`;
    $('#balance').textContent = fmt(account.balance);
    $('#order').hidden = $('#balance-op').hidden = $('#budget-field').hidden = !family.trading;
    $('#trading-note').hidden = family.trading;
    // An account without open trades has no margin row: its equity is its balance.
    const margin = await state.gateway.call('GET', family.margin(id, login));
    applyMargin(margin.error ? { login, equity: account.balance, margin: 0 } : { login, ...margin.data });
    const trades = await family.trades(state.gateway, id, account);
    state.trades.clear();
    $('#trades').replaceChildren();
    for (const t of trades) upsertTrade(family.row(t));
  } catch (error) {
    log(`Account ${login}: ${error.message}`, 'error');
  }
}

/** A new balance; with no open trade (no margin row, so no margin event) equity is the balance. */
function showBalance(balance) {
  state.account.balance = balance;
  $('#balance').textContent = fmt(balance);
  if (state.trades.size === 0) applyMargin({ login: state.account.login, equity: balance, margin: 0 });
}

function applyMargin(m) {
  if (m.login !== state.account?.login) return;
  if (typeof m.balance === 'number') $('#balance').textContent = fmt(m.balance);
  $('#equity').textContent = fmt(m.equity);
  $('#margin').textContent = fmt(m.margin);
  const level = m.level ?? m.marginLevel;
  $('#margin-level').textContent = typeof level === 'number' && m.margin ? `${fmt(level)} %` : '–';
  if (m.type)
    log(
      `Account ${m.login}: ${m.type === 'StopOut' ? 'stop-out' : 'margin call'} level ${m.direction === 'Enter' ? 'reached' : 'left'}.`,
      'stream',
    );
}

/** A trade (PF4) or position (PF5) change from the stream: added or updated rows are shown, deleted ones removed. */
function applyTrade(change) {
  if (change.login !== state.account?.login) return;
  const row = FAMILIES[state.platform.type].row(change);
  if (change.kind === 'Deleted' || change.closeTime) {
    state.trades.get(row.ticket)?.remove();
    state.trades.delete(row.ticket);
    // The account's last trade gone: its margin row goes too, without an event.
    if (state.trades.size === 0) showBalance(state.account.balance);
  } else {
    upsertTrade(row);
  }
}

function upsertTrade(t) {
  const row = document.createElement('tr');
  row.dataset.ticket = t.ticket;
  const close = Object.assign(document.createElement('button'), { textContent: 'Close', type: 'button' });
  close.onclick = () => send(`close #${t.ticket}`, { tradeTransactionType: 'BrOrderClose', order: t.ticket });
  const actions = cell('');
  if (FAMILIES[state.platform.type].trading) actions.append(close);
  row.append(
    cell(String(t.ticket)),
    cell(t.symbol),
    cell(t.type),
    cell(fmt(t.lots)),
    cell(String(t.openPrice ?? '')),
    cell(fmt(t.profit), 'profit'),
    actions,
  );
  const old = state.trades.get(t.ticket);
  if (old) old.replaceWith(row);
  else $('#trades').append(row);
  state.trades.set(t.ticket, row);
}

// ---- writes ----

$('#order').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const volume = Math.round(Number(form.volume.value) * 100);
  send(`${form.cmd.value} ${form.volume.value} ${form.symbol.value}`, {
    tradeTransactionType: 'BrOrderOpen',
    tradeCommand: form.cmd.value,
    orderBy: state.account.login,
    symbol: form.symbol.value,
    volume,
  });
});
$('#balance-op').addEventListener('submit', (event) => {
  event.preventDefault();
  const amount = Number(event.target.amount.value);
  send(`${amount >= 0 ? 'deposit' : 'withdraw'} ${Math.abs(amount)}`, {
    tradeTransactionType: 'BrBalance',
    tradeCommand: 'Balance',
    orderBy: state.account.login,
    price: amount,
  });
});

/** Sends a trade transaction under its own Idempotency-Key and logs what came of it. */
async function send(what, body) {
  const budgetSeconds = Number($('#budget').value) || 10;
  log(`Sending: ${what}.`);
  try {
    const answer = await state.gateway.write('POST', `/api/v2/PF4/${state.platform.id}/TradeTransaction`, body, {
      budgetSeconds,
    });
    const tries = answer.attempts > 1 ? ` after ${answer.attempts} attempts with one key` : '';
    if (answer.unknowable) {
      log(
        `${what}: the outcome can never be known (${describeError(answer.error)}). Check the account before trying again.`,
        'unknown',
      );
    } else if (answer.error) {
      log(`${what}: refused: ${describeError(answer.error)}${tries}.`, 'error');
    } else if (answer.replayed) {
      log(
        `${what}: done${tries}. The platform had already applied it once; this is that answer again (Idempotency-Replayed), not a second ${what}.`,
        'replayed',
      );
    } else {
      log(`${what}: done${answer.data?.order ? `, ticket #${answer.data.order}` : ''}.`, 'ok');
    }
  } catch (error) {
    log(
      `${what}: no answer (${error.message}). Its outcome is unknown: check the account before trying again.`,
      'unknown',
    );
  }
}
