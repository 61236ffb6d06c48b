/**
 * A platform's webhook source through the real worker in workerd against a scripted broker: it subscribes with a
 * snapshot; its first snapshot is where it starts (nothing told); each change of a record is an event of its own,
 * a record changed back to an earlier state included; after its subscription is lost, the next subscription's
 * snapshot tells what changed meanwhile — a record changed, one added, one removed — each once.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SUBSCRIBE_OP } from '../../shared/frames.js';
import type { StreamEvent } from '../../shared/streams.js';
import { ORG_A, PF4_A, type TestEdge } from '../support/edge.js';
import { edgeWithFakeBroker, type FakeBroker } from './gatewayFakeBroker.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.js';
import { until } from '../support/until.js';

const setup = edgeWithFakeBroker({ WEBHOOK_PRIVATE_TARGETS: '1', REGISTRY_CACHE_SECONDS: '0' });
let edge: TestEdge;
let broker: FakeBroker;
let receiver: WebhookReceiver;
let token: string;
/** The accounts the scripted broker's next snapshot holds. */
let accounts: Array<Record<string, unknown>> = [];

const account = (login: number, name: string) => ({ login, group: 'demo', name, balance: 0, credit: 0 });
const users = (kind: string, record: Record<string, unknown>): StreamEvent => ({
  topic: 'users',
  data: { kind, ...record },
});

beforeAll(async () => {
  ({ edge, broker } = setup);
  receiver = await startWebhookReceiver();
  await edge.seedClient('source-hooks', 'unused', ORG_A, 'webapi webapi.webhooks');
  token = await edge.token({ client_id: 'source-hooks', scope: 'webapi webapi.webhooks' });
  return () => receiver.close();
});

const accountEvents = () =>
  receiver.unique().map((e: any) => [e.type, e.data.login, e.data.name] as [string, number, string]);

describe('a webhook source', () => {
  it('starts from its first snapshot, tells each change once, and closes a gap against the next snapshot', async () => {
    // Scripted here: the harness clears the broker's script before each test.
    broker.script.set(SUBSCRIBE_OP, {
      reply: () => {
        setTimeout(() => {
          broker.push({ sub: 1, events: [{ topic: 'status', data: { connected: true } }] });
          broker.push({ sub: 1, snapshot: { events: accounts.map((a) => users('Added', a)), last: true } });
        }, 0);
        return { ok: true, data: { sub: 1 } };
      },
    });
    broker.script.set('PF4.TradesUserHistory', { reply: { ok: true, data: [] } });
    accounts = [account(7, 'A'), account(9, 'Z')];
    const res = await fetch(new URL('/api/v2/Webhooks', edge.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: receiver.url,
        eventTypes: ['account.created', 'account.changed', 'account.deleted'],
        platforms: [PF4_A],
      }),
    });
    const created = (await res.json()) as { data: { secret: string } };
    receiver.secret = created.data.secret;
    await until(
      () => broker.framesFor(SUBSCRIBE_OP).some((f) => (f.args as { snapshot?: boolean }).snapshot === true),
      'the subscription with a snapshot',
    );
    expect(broker.framesFor(SUBSCRIBE_OP).at(-1)!.args).toMatchObject({
      topics: ['trades', 'users', 'margin'],
      snapshot: true,
    });

    // B, back to A, B again: three changes, three events, each its own id.
    broker.push({ sub: 1, events: [users('Updated', account(7, 'B'))] });
    broker.push({ sub: 1, events: [users('Updated', account(7, 'A'))] });
    broker.push({ sub: 1, events: [users('Updated', account(7, 'B'))] });
    await until(() => accountEvents().length === 3, 'three changes of account 7');
    expect(accountEvents()).toEqual([
      ['account.changed', 7, 'B'],
      ['account.changed', 7, 'A'],
      ['account.changed', 7, 'B'],
    ]);

    // The subscription is lost; meanwhile 7 changed, 8 was opened and 9 removed.
    accounts = [account(7, 'C'), account(8, 'New')];
    broker.dropLinks();
    await until(() => accountEvents().length === 6, 'the changes found in the next snapshot', 20_000);
    // Three accounts' events: each account's come in order, the accounts' among each other in any.
    expect(
      accountEvents()
        .slice(3)
        .sort((a, b) => a[1] - b[1]),
    ).toEqual([
      ['account.changed', 7, 'C'],
      ['account.created', 8, 'New'],
      ['account.deleted', 9, 'Z'],
    ]);
    expect(new Set(receiver.unique().map((e: any) => e.id)).size).toBe(6);
    // Every delivery verified; each event delivered once.
    expect(receiver.received.every((r) => r.verified !== null)).toBe(true);
    expect(receiver.received).toHaveLength(6);
  });
});
