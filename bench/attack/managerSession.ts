/**
 * Attacks on the manager session: 9, UserPasswordCheck with a read-only client, and 6 wrong checks of one login; 10,
 * a read-only client flooding the manager session (a login repeated 18,542 times, bursts of 32 batch reads, 800
 * mails of 65,536 characters and unpaged MailsRequest) while another client writes under Idempotency-Keys.
 */
import { randomUUID } from 'node:crypto';
import type { Stack } from '../../launcher/stack.js';
import { brokerMetric } from '../../test/support/brokerMetric.js';
import { newClient } from './clients.js';
import { progress, type Drill } from './drill.js';
import { countLabels } from './figures.js';
import { getJson, postJson } from './http.js';

export async function attackPasswordChecks(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress('9: UserPasswordCheck with a read-only client, and 6 wrong checks of one login');
  const reader = await newClient(stack, 'reader', 'webapi');
  const writer = await newClient(stack, 'checker', 'webapi webapi.write');
  const users = await getJson(edgeUrl, `/api/v2/PF4/${stack.platforms.pf4}/UsersRequest?limit=3`, writer.token);
  const login = users.body.data[2].login as number;
  const check = async (token: string, password: string) => {
    const res = await fetch(`${edgeUrl}/api/v2/PF4/${stack.platforms.pf4}/UserPasswordCheck/${login}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(password),
    });
    const body = (await res.json()) as {
      data: unknown;
      error: { code: string; managerCode: string | number | null; message: string } | null;
    };
    return {
      status: res.status,
      body,
      retryAfter: res.headers.get('retry-after'),
      challenge: res.headers.get('www-authenticate'),
    };
  };
  const errorsBefore = await serverCommandErrors(stack);
  const readOnly = await check(reader.token, 'Guess123x');
  const guesses = [];
  for (let i = 1; i <= 6; i++) guesses.push(await check(writer.token, `Wrong${i}guess`));
  const rightAfter = await check(writer.token, `demo-${login}`);
  const errorsAfter = await serverCommandErrors(stack);
  const label = (r: Awaited<ReturnType<typeof check>>) =>
    r.body.error ? `${r.body.error.code}/${r.body.error.managerCode}` : `data ${String(r.body.data)}`;
  const sixth = guesses[5];
  drill.found({
    id: '9',
    title: `UserPasswordCheck (login ${login})`,
    figures:
      `read-only client: ${readOnly.status} ${label(readOnly)} (${readOnly.challenge?.match(/error="[^"]+"/)?.[0] ?? 'no challenge'}, ${readOnly.challenge?.match(/scope="[^"]+"/)?.[0] ?? ''}); ` +
      `write client, 6 wrong checks: ${guesses.map(label).join(', ')}; the 6th with Retry-After ${sixth.retryAfter}; then the right password: ${label(rightAfter)}; ` +
      `failed commands on the trading server ${typeof errorsBefore === 'number' && typeof errorsAfter === 'number' ? `+${errorsAfter - errorsBefore}` : 'not readable'}`,
    held:
      readOnly.body.error?.code === 'Forbidden' &&
      (readOnly.challenge ?? '').includes('insufficient_scope') &&
      guesses.slice(0, 5).every((g) => g.body.error?.managerCode === 'InvalidData') &&
      sixth.body.error?.managerCode === 'TooFrequent' &&
      Number(sixth.retryAfter) >= 1 &&
      rightAfter.body.error?.managerCode === 'TooFrequent',
  });
}

/** The sum of the broker's samples of metric `name` whose labels include `labels`; 0 when the broker does not answer. */
async function brokerSample(stack: Stack, name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await brokerMetric(stack.brokerUrl, name, labels)) ?? 0;
}

/**
 * 10: a read-only client takes the manager session. One login repeated 18,542 times in UserRecordsRequest; three
 * bursts of 32 batch reads of every account at once; then, once another client has sent 300 mails of 65,536
 * characters and 500 of 65,536 wide ones, four unpaged MailsRequest at once and the mails read in pages. Meanwhile
 * another client writes under Idempotency-Keys without a pause: none of its writes may fail or end unknown, the
 * manager session must never drop or log in again, no edge link may be opened anew, and the flood is refused
 * "too frequent" with Retry-After (or, for what cannot be answered, Validation) instead.
 */
export async function attackManagerSession(drill: Drill): Promise<void> {
  const { stack, edgeUrl } = drill;
  progress('10: a read-only client floods the manager session while another client writes under keys');
  const reader = await newClient(stack, 'flood', 'webapi');
  const writer = await newClient(stack, 'writer', 'webapi webapi.write');
  const v2 = `/api/v2/PF4/${stack.platforms.pf4}`;
  const accounts = (await getJson(edgeUrl, `${v2}/UsersRequest?limit=1000`, writer.token)).body.data as Array<{
    login: number;
    group: string;
  }>;
  const logins = accounts.map((a) => a.login);
  const platform = { platform: stack.platforms.pf4 };
  const before = {
    reconnects: await brokerSample(stack, 'broker_manager_reconnects_total', platform),
    links: await brokerSample(stack, 'broker_edge_links_opened_total'),
  };
  let rssPeak = 0;
  // Sampled beside the writer, not by it: the writes are what the finding judges.
  const rssSampler = setInterval(() => {
    void brokerSample(stack, 'process_resident_memory_bytes').then((rss) => {
      rssPeak = Math.max(rssPeak, rss);
    });
  }, 250);
  const writes = { ok: 0, failed: 0, unknown: 0, errors: new Map<string, number>() };
  let writing = true;
  const writer$ = (async () => {
    for (let i = 0; writing; i++) {
      const res = await fetch(`${edgeUrl}${v2}/UserRecordNew`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${writer.token}`,
          'content-type': 'application/json',
          'idempotency-key': `drill-${randomUUID()}`,
        },
        body: JSON.stringify({ group: accounts[0].group, name: `Drill ${i}` }),
      });
      const body = (await res.json()) as { error: { code: string; message: string } | null };
      if (res.headers.get('x-request-outcome') === 'unknown') writes.unknown++;
      if (body.error) {
        writes.failed++;
        writes.errors.set(body.error.message, (writes.errors.get(body.error.message) ?? 0) + 1);
      } else writes.ok++;
    }
  })();

  const repeated = await getJson(
    edgeUrl,
    `${v2}/UserRecordsRequest?logins=${Array(18_542).fill(logins[0]).join(',')}`,
    reader.token,
  );
  const bursts = {
    answered: 0,
    refused: 0,
    retryAfter: new Set<string>(),
    other: new Map<string, number>(),
    answerBytes: 0,
  };
  for (let burst = 0; burst < 3; burst++) {
    const answers = await Promise.all(
      Array.from({ length: 32 }, () =>
        getJson(edgeUrl, `${v2}/UserRecordsRequest?logins=${logins.join(',')}`, reader.token),
      ),
    );
    for (const a of answers) {
      if (!a.body.error) {
        bursts.answered++;
        bursts.answerBytes = Math.max(bursts.answerBytes, a.bytes);
      } else if (a.body.error.managerCode === 'TooFrequent') {
        bursts.refused++;
        bursts.retryAfter.add(a.headers.get('retry-after') ?? 'none');
      } else bursts.other.set(a.body.error.message, (bursts.other.get(a.body.error.message) ?? 0) + 1);
    }
  }

  progress('10: 800 mails of 65,536 characters (500 of them wide)');
  const mail = async (i: number) =>
    postJson(
      edgeUrl,
      `${v2}/MailSend`,
      writer.token,
      JSON.stringify({
        subject: `drill ${i}`,
        body: (i < 300 ? 'm' : '\u4e00').repeat(65_536),
        logins: [logins[0]],
      }),
    );
  let mailsFailed = 0;
  for (let i = 0; i < 800; i += 4) {
    const sent = await Promise.all([0, 1, 2, 3].map((k) => mail(i + k)));
    mailsFailed += sent.filter((m) => m.body?.error).length;
  }
  const unpaged = await Promise.all(
    Array.from({ length: 4 }, () => getJson(edgeUrl, `${v2}/MailsRequest`, reader.token)),
  );
  let pages = 0;
  let paged = 0;
  let cursor: string | null = null;
  do {
    const page = await getJson(
      edgeUrl,
      `${v2}/MailsRequest?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      reader.token,
    );
    if (page.body.error) break;
    pages++;
    paged += page.body.data.length;
    cursor = page.body.meta.paging.hasMore ? page.body.meta.paging.nextCursor : null;
  } while (cursor);
  writing = false;
  await writer$;
  clearInterval(rssSampler);
  const after = {
    reconnects: await brokerSample(stack, 'broker_manager_reconnects_total', platform),
    links: await brokerSample(stack, 'broker_edge_links_opened_total'),
  };
  const unpagedCodes = countLabels(unpaged.map((u) => u.body.error?.code ?? 'ok'));
  drill.found({
    id: '10',
    title:
      "a read-only client floods the manager session (bound: the other client's keyed writes all succeed, none unknown; no session drop, no new link)",
    figures:
      `a login repeated 18,542 times: ${repeated.status} ${repeated.body?.error?.code ?? 'ok'} (${String(repeated.body?.error?.message ?? '').slice(0, 60)}); ` +
      `3 bursts of 32 reads of ${logins.length} accounts: ${bursts.answered} answered (at most ${bursts.answerBytes} bytes), ${bursts.refused} refused TooFrequent with Retry-After ${[...bursts.retryAfter].join('/')}` +
      `${bursts.other.size ? `, other: ${JSON.stringify(Object.fromEntries(bursts.other))}` : ''}; ` +
      `800 mails sent (${mailsFailed} failed), 4 unpaged MailsRequest at once: ${unpagedCodes}; paged: ${paged} mails in ${pages} pages; ` +
      `the other client's keyed writes meanwhile: ${writes.ok} ok, ${writes.failed} failed, ${writes.unknown} unknown${writes.errors.size ? ` ${JSON.stringify(Object.fromEntries(writes.errors))}` : ''}; ` +
      `manager reconnects +${after.reconnects - before.reconnects}, edge links opened +${after.links - before.links}; broker RSS peak ${Math.round(rssPeak / 1e6)} MB`,
    held:
      repeated.body?.error?.code === 'Validation' &&
      bursts.refused > 0 &&
      [...bursts.retryAfter].every((r) => Number(r) >= 1) &&
      bursts.other.size === 0 &&
      writes.ok > 0 &&
      writes.failed === 0 &&
      writes.unknown === 0 &&
      after.reconnects === before.reconnects &&
      after.links === before.links &&
      mailsFailed === 0 &&
      unpaged.every((u) => u.body.error?.code === 'Validation' || !u.body.error) &&
      paged >= 800,
  });
}

async function serverCommandErrors(stack: Stack): Promise<number | null> {
  const state = (await stack.control('demo-pf4', 'state').catch(() => null)) as {
    commandErrors?: number;
    counters?: { commandErrors?: number };
  } | null;
  return state?.commandErrors ?? state?.counters?.commandErrors ?? null;
}
