/**
 * Webhooks across the real processes: the simulator, the broker and the edge in workerd with its queues, and a
 * receiver on 127.0.0.1 that verifies every delivery with the `standardwebhooks` package. An endpoint registered for
 * every event type hears an account created and changed, a deposit, a trade opened and closed on the simulator —
 * through a receiver outage, the first broker of a pair killed (a failover to the second) and an edge restart (a deposit made on the trading server
 * while the edge is down) — each event once after deduplication by `webhook-id`, in order per account, and the
 * deposits and the trade as the trading server's own history has them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../shared/catalog/webhooks.js';
import { connectManager, stackForFile, waitHealthy } from './support.js';
import { DEMO_PF5_SERVER } from '../../launcher/demo.js';
import { ok } from './v2/api.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';
import { until } from '../support/until.js';
import { objectCall } from '../../launcher/edge.js';

const setup = stackForFile({
  // A hot pair: the webhook source fails over to the second broker when the first is killed.
  brokers: 2,
  edgeVars: { WEBHOOK_PRIVATE_TARGETS: '1', REGISTRY_CACHE_SECONDS: '1' },
  // The edge's registry and objects survive its restart, as on a real deployment.
  persistEdge: true,
});
/**
 * How long the receiver stays down: just past a failed attempt here; `npm run drill:webhooks` holds it down 30 s, as
 * long as a receiver's deploy or restart takes.
 */
const OUTAGE_MS = Number(process.env.WEBHOOK_DRILL_OUTAGE_SECONDS ?? 0) * 1000;

let receiver: WebhookReceiver;
let hooksToken: string;
let auditToken: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  const { stack } = setup.client;
  const res = await fetch(`${stack.edgeUrl}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: stack.clientId,
      client_secret: stack.clientSecret,
      scope: 'webapi webapi.webhooks',
    }),
  });
  hooksToken = ((await res.json()) as { access_token: string }).access_token;
  const audit = await fetch(`${stack.edgeUrl}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: stack.clientId,
      client_secret: stack.clientSecret,
      scope: 'webapi webapi.audit',
    }),
  });
  auditToken = ((await audit.json()) as { access_token: string }).access_token;
});
afterAll(() => receiver?.close());

async function hooks(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${setup.client.stack.edgeUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${hooksToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const envelope = (await res.json()) as { data: any; error: unknown };
  expect(envelope.error).toBeNull();
  return envelope.data;
}

/** The deduplicated events of one account, as the receiver kept them, by type and the record's key. */
const ofLogin = (login: number) =>
  receiver
    .unique()
    .filter((e: any) => e.data?.login === login)
    .map((e: any) => e as { id: string; type: string; data: Record<string, any> });

describe('webhooks from the trading server', () => {
  it(
    'deliver every change of an account once, in order, through a receiver outage, a broker failover and an edge restart',
    async () => {
      const c = setup.client;
      const endpoint = await hooks('POST', '/api/v2/Webhooks', {
        url: receiver.url,
        eventTypes: [...WEBHOOK_EVENT_TYPES],
        platforms: [c.stack.platforms.pf4],
      });
      receiver.secret = endpoint.secret;

      const login = (
        await ok<{ login: number }>(c, 'v2.PF4.UserRecordNew', {
          body: { login: 0, group: 'demo\\forex', name: 'Webhook Partner' },
        })
      ).login;
      await until(() => ofLogin(login).some((e) => e.type === 'account.created'), 'account.created');

      // The receiver is down: deliveries fail and are tried again.
      await receiver.stop();
      const stoppedAt = Date.now();
      await ok(c, 'v2.PF4.TradeTransaction', {
        body: {
          tradeTransactionType: 'BrBalance',
          tradeCommand: 'Balance',
          orderBy: login,
          price: 50_000,
          comment: 'Deposit',
        },
      });
      const opened = await ok<{ order: number }>(c, 'v2.PF4.TradeTransaction', {
        body: {
          tradeTransactionType: 'BrOrderOpen',
          tradeCommand: 'Buy',
          orderBy: login,
          symbol: 'EURUSD',
          volume: 10,
        },
      });
      await until(
        async () =>
          (await hooks('GET', `/api/v2/Webhooks/${endpoint.id}/Attempts?limit=200`)).some(
            (a: any) => a.outcome === 'retrying',
          ),
        'a failed attempt while the receiver is down',
        20_000,
      );
      // The outage itself, not a wait for a condition: the receiver stays down this long.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt))));
      await receiver.start();
      const restartedAt = Date.now();

      // The first broker is killed: the source's subscription, and the calls, fail over to the second.
      const sourceBroker = async () =>
        (
          await objectCall<{ broker: string | null }>(
            c.stack.edge.miniflare,
            'WEBHOOK_SOURCES',
            c.stack.platforms.pf4,
            'stats',
          )
        ).broker;
      const [first, second] = c.stack.brokers.map((b) => `http://127.0.0.1:${b.port}`);
      expect(await sourceBroker()).toBe(first);
      await c.stack.stopBroker(0, 'SIGKILL');
      await ok(c, 'v2.PF4.TradeTransaction', {
        body: { tradeTransactionType: 'BrOrderClose', order: opened.order, volume: 10 },
      });
      await ok(c, 'v2.PF4.UserRecord', { params: { login }, body: { comment: 'changed after the restart' } });

      await until(
        () =>
          ofLogin(login).some((e) => e.type === 'trade.closed') &&
          ofLogin(login).some((e) => e.type === 'account.changed' && e.data.comment === 'changed after the restart'),
        'the events after the failover',
        60_000 + 2 * OUTAGE_MS,
      );
      expect(await sourceBroker()).toBe(second);
      await c.stack.restartBroker(0);
      await waitHealthy(c);
      // The edge restarts, and the account gets a deposit on the trading server while it is down.
      await until(
        async () =>
          (await hooks('GET', `/api/v2/Webhooks/${endpoint.id}/Attempts?limit=200`)).every(
            (a: any) =>
              a.outcome === 'delivered' || receiver.received.some((r) => r.id === a.eventId && r.status < 300),
          ),
        'every delivery made before the edge restart',
        30_000,
      );
      await c.stack.restartEdge(async () => {
        const manager = await connectManager(c.stack);
        try {
          await manager.ok('TradeTransaction', {
            tradeTransactionType: 'BrBalance',
            tradeCommand: 'Balance',
            orderBy: login,
            price: 1_234,
            comment: 'while the edge was down',
          });
        } finally {
          manager.close();
        }
      });
      await waitHealthy(c);
      await until(
        () => ofLogin(login).filter((e) => e.type === 'balance.operation').length === 2,
        'the deposit made while the edge was down',
        60_000,
      );

      const events = ofLogin(login);
      if (OUTAGE_MS > 0) {
        // The drill's figures (docs/testing.md, "Webhooks drill").
        const attempts: any[] = (
          await Promise.all(
            events.map((e) => hooks('GET', `/api/v2/Webhooks/${endpoint.id}/Attempts?eventId=${e.id}&limit=200`)),
          )
        ).flat();
        console.log(
          JSON.stringify({
            drill: 'webhooks',
            outageSeconds: OUTAGE_MS / 1000,
            accountEvents: events.length,
            platformDeliveries: receiver.received.length,
            accountAttempts: attempts.length,
            accountFailedAttempts: attempts.filter((a) => a.outcome === 'retrying').length,
            mostAttemptsOfAnEvent: Math.max(...attempts.map((a) => a.attempt)),
            // From the receiver's return to the delivery of the last event made during the outage (the trade opened).
            caughtUpAfterOutageMs:
              receiver.received.find((r) => r.status < 300 && (r.verified as any)?.type === 'trade.opened')!.at -
              restartedAt,
          }),
        );
      }
      // Every delivery verified, each webhook-id once among the verified ones kept.
      expect(receiver.received.every((r) => r.verified !== null)).toBe(true);
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
      const types = events.map((e) => e.type);
      const at = (type: string) => types.indexOf(type);
      // In order for the account: created, then the deposit and the trade opened, then the trade closed.
      expect(at('account.created')).toBe(0);
      expect(at('balance.operation')).toBeGreaterThan(0);
      expect(at('trade.opened')).toBeGreaterThan(0);
      expect(at('trade.closed')).toBeGreaterThan(at('trade.opened'));
      // The deposit and the trade as the server's history holds them.
      const history = await ok<any[]>(c, 'v2.PF4.TradesUserHistory', { params: { login } });
      const deposit = history.find((h) => h.tradeCommand === 'Balance');
      const deposits = history.filter((h) => h.tradeCommand === 'Balance');
      expect(
        events.filter((e) => e.type === 'balance.operation').map((e) => [e.data.ticket, e.data.amount, e.data.comment]),
      ).toEqual(deposits.map((d) => [d.order, d.profit, d.comment]));
      expect(events.find((e) => e.type === 'balance.operation')!.data).toMatchObject({
        ticket: deposit.order,
        login,
        type: 'Balance',
        amount: 50_000,
      });
      const closedTrade = history.find((h) => h.order === opened.order);
      expect(closedTrade).toBeDefined();
      expect(events.find((e) => e.type === 'trade.opened')!.data).toMatchObject({
        order: opened.order,
        login,
        symbol: 'EURUSD',
      });
      expect(events.filter((e) => e.type === 'trade.closed').map((e) => e.data.order)).toEqual([opened.order]);
      // Every write of the test is in the audit trail (the edge's restart kept it), without the endpoint's secret.
      const trail = async (query: string) =>
        fetch(`${c.stack.edgeUrl}/api/AuditEvents${query}`, { headers: { authorization: `Bearer ${auditToken}` } });
      const rows = ((await (await trail('?limit=1000')).json()) as { events: any[] }).events;
      const writes = rows.filter((r) => r.outcome === 'applied').map((r) => r.operation);
      expect(writes).toEqual(
        expect.arrayContaining([
          'registry.Registry.WebhookCreate',
          'v2.PF4.UserRecordNew',
          'v2.PF4.TradeTransaction',
          'v2.PF4.UserRecord',
        ]),
      );
      expect(rows.filter((r) => r.operation === 'v2.PF4.TradeTransaction' && r.outcome === 'applied')).toHaveLength(3);
      const csv = await (await trail('/Export')).text();
      expect(JSON.stringify(rows)).not.toContain(endpoint.secret);
      expect(csv).not.toContain(endpoint.secret);
      for (const row of rows) expect(csv).toContain(row.traceId);
      // The last event of the account: its balance after the deposit made while the edge was down.
      expect(events.at(-1)!.type).toBe('balance.operation');
      const account = await ok<{ balance: number }>(c, 'v2.PF4.UserRecordRequest', { params: { login } });
      expect(events.filter((e) => e.type === 'account.changed').at(-1)!.data.balance).toBe(account.balance);
    },
    120_000 + 3 * OUTAGE_MS,
  );

  it('name PF5 positions and deals by their own names, and a PF5 deposit a balance operation', async () => {
    const c = setup.client;
    const endpoint = await hooks('POST', '/api/v2/Webhooks', {
      url: receiver.url,
      eventTypes: ['position.opened', 'deal.added', 'balance.operation'],
      platforms: [c.stack.platforms.pf5],
    });
    receiver.secret = endpoint.secret;
    const manager = await connectManager(c.stack, DEMO_PF5_SERVER);
    try {
      const [account] = (await manager.ok<{ items: Array<{ login: number }> }>('UsersRequest', { limit: 1 })).items;
      const deposit = await manager.ok<{ deal: number }>('DealerBalance', {
        login: account.login,
        type: 'Balance',
        amount: 2_500,
        comment: 'PF5 deposit',
      });
      const sent = await manager.ok<{ position: number }>('DealerSend', {
        login: account.login,
        symbol: 'EURUSD',
        type: 'Buy',
        volume: 10_000,
      });
      await until(
        () =>
          ofLogin(account.login).some((e) => e.type === 'position.opened') &&
          ofLogin(account.login).some((e) => e.type === 'deal.added'),
        'the PF5 position and its deal',
        30_000,
      );
      const events = ofLogin(account.login).filter((e) => e.data.login === account.login);
      expect(events.find((e) => e.type === 'balance.operation')!.data).toEqual({
        ticket: deposit.deal,
        login: account.login,
        type: 'Balance',
        amount: 2_500,
        comment: 'PF5 deposit',
        time: expect.any(String),
      });
      expect(events.find((e) => e.type === 'position.opened')!.data).toMatchObject({
        position: sent.position,
        login: account.login,
        symbol: 'EURUSD',
      });
      // Only the types asked for: no account.changed, although the deposit changed the account.
      expect(new Set(events.map((e) => e.type))).toEqual(
        new Set(['balance.operation', 'position.opened', 'deal.added']),
      );
      expect(events.findIndex((e) => e.type === 'balance.operation')).toBeLessThan(
        events.findIndex((e) => e.type === 'position.opened'),
      );
    } finally {
      manager.close();
    }
  }, 60_000);
});
