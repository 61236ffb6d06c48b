/**
 * Attack 2: wrong secrets for a client. 30 from one address, then its right secret from another address and on the
 * local socket; and FAILURE_LIMIT − 1 from one address, a pause, as many again, in one rate-limit window.
 */
import { newClient, tokenFrom, tokenOnSocket } from './clients.js';
import { progress, type Drill } from './drill.js';
import { countLabels, type Finding } from './figures.js';
import { counter, windowEnd, windowWithRoom } from './rateLimits.js';
import { FAILURE_LIMIT, TOKEN_LIMIT, WINDOW_MS } from './settings.js';
import { sleep } from './waiting.js';

export async function attackWrongSecrets(drill: Drill): Promise<void> {
  const { stack } = drill;
  progress('2: 30 wrong secrets, then the right one');
  await windowWithRoom(10_000);
  const holder = await newClient(stack, 'holder');
  const attacker = '203.0.113.7';
  const wrong: string[] = [];
  for (let i = 0; i < 30; i++)
    wrong.push(String((await tokenFrom(stack, attacker, holder.clientId, `guess-${i}`)).status));
  const attackerRight = await tokenFrom(stack, attacker, holder.clientId, holder.secret);
  const elsewhere = await tokenFrom(stack, '198.51.100.9', holder.clientId, holder.secret);
  const local = await tokenOnSocket(stack, holder.clientId, holder.secret);
  const budget = await counter(stack, `token:${holder.clientId}`, TOKEN_LIMIT);
  drill.found({
    id: '2',
    title: '30 wrong secrets from 203.0.113.7, then the right secret',
    figures:
      `wrong secrets answered ${countLabels(wrong)}; the right secret from 198.51.100.9 ${elsewhere.status}` +
      `${elsewhere.status === 200 ? ' (token issued)' : ` ${JSON.stringify(elsewhere.body)}`}, on the local socket ${local.status}, ` +
      `from the attacker's own address ${attackerRight.status} ${(attackerRight.body.error as string | undefined) ?? ''}; the holder's token budget ` +
      `${budget.left} of ${TOKEN_LIMIT} left (3 tokens issued to it so far)`,
    held:
      wrong.every((s) => s === '401') &&
      elsewhere.status === 200 &&
      local.status === 200 &&
      budget.left === TOKEN_LIMIT - 3,
  });
}

/**
 * The failure budget of one address across a pause: FAILURE_LIMIT − 1 wrong secrets (the budget not yet spent, so the
 * edge has learned no refusal), PAUSE_MS with no request from it, the same again, all in one rate-limit window. The
 * caller makes sure the window has room for it.
 */
export const PAUSE_MS = 12_000;

export async function attackPacedFailures(drill: Drill): Promise<Finding> {
  const { stack } = drill;
  const holder = await newClient(stack, 'paced');
  const address = '203.0.113.8';
  const burst = async () => {
    const statuses: string[] = [];
    for (let i = 0; i < FAILURE_LIMIT - 1; i++)
      statuses.push(String((await tokenFrom(stack, address, holder.clientId, `guess-${i}`)).status));
    return statuses;
  };
  const windowEnds = windowEnd(Date.now(), WINDOW_MS);
  const first = await burst();
  await sleep(PAUSE_MS);
  const second = await burst();
  const sameWindow = Date.now() < windowEnds;
  const admitted = [...first, ...second].filter((s) => s === '401').length;
  return {
    id: '2b',
    title: `${FAILURE_LIMIT - 1} wrong secrets from 203.0.113.8, ${PAUSE_MS / 1000} s without a request, ${FAILURE_LIMIT - 1} more (bound: ${FAILURE_LIMIT} failures per address per window)`,
    figures:
      `first ${countLabels(first)}, then ${countLabels(second)}: ${admitted} failures answered 401 from one address ` +
      `${sameWindow ? 'within one window' : '(the window turned meanwhile: not comparable)'}`,
    held: sameWindow && admitted <= FAILURE_LIMIT,
  };
}
