/**
 * The edge worker's queue handler: the consumer of the webhook deliveries queue and of its dead-letter queue
 * (wrangler.toml). A delivery message goes to its endpoint's object (`WebhookDeliveries`), which makes the attempt or
 * says why it waits: a failed attempt is retried by the queue after the delay it answers, a wait is sent again with
 * its delay (so waiting spends none of the queue's retries). A message the queue gave up on arrives on the
 * dead-letter queue, and its endpoint queues it again or keeps it as a dead letter.
 */
import type { Env } from '../env.js';
import type { QueuedDelivery } from './webhookDeliveries.js';

/** The dead-letter queue's name (wrangler.toml; `-staging` and `-production` in those environments). */
export const DEAD_LETTERS_QUEUE = 'webhook-dead-letters';

/** A message whose endpoint's object could not be reached is tried again after this. */
const UNREACHED_RETRY_SECONDS = 5;

export async function webhookQueue(batch: MessageBatch<QueuedDelivery>, env: Env): Promise<void> {
  const deadLetters = batch.queue.startsWith(DEAD_LETTERS_QUEUE);
  await Promise.all(
    batch.messages.map(async (message) => {
      const { endpoint, seq } = message.body;
      const stub = env.WEBHOOKS.get(env.WEBHOOKS.idFromName(endpoint));
      try {
        if (deadLetters) {
          await stub.deadLetter(seq, `the queue gave up after ${message.attempts} attempts`);
          message.ack();
          return;
        }
        const step = await stub.deliver(seq);
        if (step.ack) message.ack();
        else if (step.attempted) message.retry({ delaySeconds: step.retryDelaySeconds });
        else {
          // A wait is no failed attempt: sent again with its delay, it costs none of the message's retries.
          await env.WEBHOOK_DELIVERIES.send(message.body, { delaySeconds: step.retryDelaySeconds });
          message.ack();
        }
      } catch (error) {
        console.error(JSON.stringify({ msg: 'webhook delivery failed', endpoint, seq, error: String(error) }));
        message.retry({ delaySeconds: UNREACHED_RETRY_SECONDS });
      }
    }),
  );
}
