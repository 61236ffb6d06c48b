/**
 * Fair use of a platform's manager session, across the real processes: a read-only API client floods one platform
 * with large live reads (UserRecordsRequest of every account of the demo world, 64 at a time) and with mails of
 * 64 Ki wide characters, while another client of the organization goes on with live reads and keyed writes. The
 * other client's calls all succeed (no failure, no unknown outcome), the manager session is never dropped nor
 * logged in again, and the flood is refused "too frequent" with Retry-After where it passes its share; a list of one
 * login repeated past the bound is refused before anything is sent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { hashSecret } from '../../shared/secrets.js';
import { LIST_VALUES_MAX } from '../../shared/catalog/fields.js';
import { DEMO_ORG_ID } from '../../launcher/demo.js';
import { brokerMetric, stackForFile, type Client, type Envelope } from './support.js';

let c: Client;
const setup = stackForFile();
beforeAll(() => {
  c = setup.client;
});

/** A read-only API client of the demo organization: its bearer token. */
async function readOnlyClient(): Promise<string> {
  const id = `flood-${randomUUID().slice(0, 8)}`;
  const secret = 'flood-secret';
  const h = await hashSecret(secret);
  const db = await c.stack.edge.db();
  await db
    .prepare(
      'INSERT INTO api_clients (client_id, organization_id, name, secret_hash, secret_salt, iterations, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .bind(id, DEMO_ORG_ID, 'Flood', h.hash, h.salt, h.iterations, new Date().toISOString())
    .run();
  const res = await fetch(`${c.stack.edgeUrl}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

interface Seen {
  status: number;
  retryAfter: string | null;
  outcome: string | null;
  body: Envelope;
}

async function get(token: string, path: string, headers: Record<string, string> = {}): Promise<Seen> {
  const res = await fetch(`${c.stack.edgeUrl}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    outcome: res.headers.get('x-request-outcome'),
    body: (await res.json()) as Envelope,
  };
}

describe('fair use of the manager session', () => {
  it("keeps another client's reads and keyed writes whole while a read-only client floods the platform", async () => {
    const flood = await readOnlyClient();
    const page = await c.get<Envelope<Array<{ login: number; group: string }>>>(
      `${c.v2pf4}/UsersRequest?limit=${LIST_VALUES_MAX}`,
    );
    const logins = page.body.data!.map((u) => u.login);
    const group = page.body.data![0].group;
    // The demo world's accounts, all of them (fewer than the bound).
    expect(logins.length).toBeGreaterThan(100);
    const sessionUp = async () =>
      brokerMetric(c.stack.brokerUrl, 'broker_session_up', { platform: c.stack.platforms.pf4 });
    const reconnects = async () =>
      brokerMetric(c.stack.brokerUrl, 'broker_manager_reconnects_total', { platform: c.stack.platforms.pf4 });
    const reconnectsBefore = await reconnects();

    // A login repeated past the bound: refused at the edge, naming the field and the bound.
    const repeated = await get(
      flood,
      `${c.v2pf4}/UserRecordsRequest?logins=${Array(LIST_VALUES_MAX + 1)
        .fill(logins[0])
        .join(',')}`,
    );
    expect(repeated.body.error).toStrictEqual({
      code: 'Validation',
      managerCode: null,
      message: `logins: logins must list at most ${LIST_VALUES_MAX} values`,
    });

    // Mails with the largest bodies, sent by the other client (the flood holds no write scope).
    for (let i = 0; i < 6; i++) {
      const sent = await c.post<Envelope>(`${c.v2pf4}/MailSend`, {
        subject: `flood ${i}`,
        body: '\u4e00'.repeat(65_536),
        logins: [logins[0]],
      });
      expect(sent.body.error).toBeNull();
    }

    const all = `${c.v2pf4}/UserRecordsRequest?logins=${logins.join(',')}`;
    const floodSeen: Seen[] = [];
    let flooding = true;
    const wave = async () => {
      while (flooding) {
        const answers = await Promise.all(
          Array.from({ length: 32 }, (_, i) => get(flood, i % 8 === 0 ? `${c.v2pf4}/MailsRequest` : all)),
        );
        floodSeen.push(...answers);
      }
    };
    const floods = [wave(), wave()];

    const mine: Seen[] = [];
    const created: number[] = [];
    const started = Date.now();
    for (let i = 0; Date.now() - started < 6000 || i < 20; i++) {
      mine.push(await get(c.token, `${c.v2pf4}/UserRecordsRequest?logins=${logins[i % logins.length]}`));
      const res = await fetch(`${c.stack.edgeUrl}${c.v2pf4}/UserRecordNew`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${c.token}`,
          'content-type': 'application/json',
          'idempotency-key': `fair-${randomUUID()}`,
        },
        body: JSON.stringify({ group, name: `Fair ${i}` }),
      });
      const write: Seen = {
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        outcome: res.headers.get('x-request-outcome'),
        body: (await res.json()) as Envelope,
      };
      mine.push(write);
      if (write.body.data) created.push((write.body.data as { login: number }).login);
    }
    flooding = false;
    await Promise.all(floods);

    // Every call of the other client succeeded, none with an unknown outcome.
    expect(mine.filter((s) => s.body.error !== null || s.outcome !== null).map((s) => s.body.error)).toStrictEqual([]);
    expect(created.length).toBe(mine.length / 2);
    // The flood was answered or refused "too frequent" with Retry-After; nothing else.
    const refused = floodSeen.filter((s) => s.body.error !== null);
    expect(refused.length).toBeGreaterThan(0);
    for (const s of refused) {
      expect(s.body.error).toMatchObject({ code: 'PF4Error', managerCode: 'TooFrequent' });
      expect(s.retryAfter).toBe('1');
    }
    const answered = floodSeen.filter((s) => s.body.error === null);
    expect(answered.length).toBeGreaterThan(0);
    for (const s of answered.filter(
      (a) => Array.isArray(a.body.data) && (a.body.data as unknown[]).length === logins.length,
    )) {
      expect((s.body.data as Array<{ login: number }>).map((u) => u.login).sort((a, b) => a - b)).toStrictEqual(
        [...logins].sort((a, b) => a - b),
      );
    }
    // The manager session stayed up throughout: never dropped, never logged in again.
    expect(await sessionUp()).toBe(1);
    expect(await reconnects()).toBe(reconnectsBefore);
  }, 120_000);
});
