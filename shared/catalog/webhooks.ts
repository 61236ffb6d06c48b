/**
 * The webhook resource (docs/webhooks.md): an organization's endpoints under /api/v2/Webhooks, answered in the v2
 * envelope by the edge itself, each needing `webapi.webhooks`; and the event types an endpoint may ask for.
 */
import { z } from 'zod';
import { defineOperation } from './operation.js';
import { confirmQuery, dateTimeText, intText } from './fields.js';

/** Every event type an endpoint may ask for; PF5 names positions, orders and deals where PF4 has trades. */
export const WEBHOOK_EVENT_TYPES = [
  'account.created',
  'account.changed',
  'account.deleted',
  'balance.operation',
  'trade.opened',
  'trade.changed',
  'trade.closed',
  'position.opened',
  'position.changed',
  'position.closed',
  'order.placed',
  'order.changed',
  'order.removed',
  'deal.added',
  'margin.call',
  'margin.stopOut',
  'platform.down',
  'platform.up',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event a test delivery carries (`POST …/Test`): no endpoint asks for it, every endpoint may be sent it. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The most platforms one endpoint may name (more: name none, and it hears every platform of the organization). */
export const MAX_WEBHOOK_PLATFORMS = 64;
export const MAX_WEBHOOK_DESCRIPTION = 256;
/** How long a rotated secret stays valid by default, and at most. */
export const DEFAULT_ROTATION_GRACE_HOURS = 24;
export const MAX_ROTATION_GRACE_HOURS = 168;
/** The most attempts, or dead letters, one page answers. */
export const WEBHOOK_PAGE_MAX = 200;

/** The fields of an endpoint a caller sets. */
export const webhookFields = {
  url: z.string().min(1, 'url must not be empty').max(2048, 'url must be at most 2048 characters'),
  description: z
    .string()
    .max(MAX_WEBHOOK_DESCRIPTION, `description must be at most ${MAX_WEBHOOK_DESCRIPTION} characters`)
    .nullable(),
  eventTypes: z
    .array(
      z.enum(WEBHOOK_EVENT_TYPES, {
        error: () => `each event type must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
      }),
    )
    .min(1, 'eventTypes must name at least one event type')
    .max(WEBHOOK_EVENT_TYPES.length, `eventTypes must name at most ${WEBHOOK_EVENT_TYPES.length} event types`),
  platforms: z
    .array(z.uuid('each platform must be a uuid'))
    .min(1, 'platforms must name at least one platform (null: every platform of the organization)')
    .max(MAX_WEBHOOK_PLATFORMS, `platforms must name at most ${MAX_WEBHOOK_PLATFORMS} platforms`)
    .nullable(),
  enabled: z.boolean(),
};

const webhookParams = z.object({ webhookId: z.uuid('webhookId must be a uuid') });
/** An event's id as deliveries carry it in `webhook-id` (a test event's too). */
const eventIdSchema = z.string().regex(/^evt_[0-9a-f]{32}$/, 'eventId must be an event id (evt_ and 32 hex digits)');

const common = { generation: 'registry', family: null, tag: 'Webhooks', scope: 'webapi.webhooks' } as const;

export const webhookOperations = {
  Webhooks: defineOperation({
    ...common,
    name: 'Webhooks',
    method: 'GET',
    path: '/api/v2/Webhooks',
    summary: "List the organization's webhook endpoints (never their secrets).",
    response: 'WebhookEndpoint[]',
    timeout: 'read',
    read: 'local',
  }),
  WebhookCreate: defineOperation({
    ...common,
    name: 'WebhookCreate',
    method: 'POST',
    path: '/api/v2/Webhooks',
    summary:
      'Register an endpoint: its URL, the event types it hears, optionally the platforms (default every platform of the organization) and a description. The answer carries its signing secret, the only answer that ever will.',
    body: z.strictObject({
      url: webhookFields.url,
      description: webhookFields.description.optional(),
      eventTypes: webhookFields.eventTypes,
      platforms: webhookFields.platforms.optional(),
    }),
    response: 'WebhookEndpointWithSecret',
    timeout: 'change',
    read: 'local',
    mutating: true,
  }),
  Webhook: defineOperation({
    ...common,
    name: 'Webhook',
    method: 'GET',
    path: '/api/v2/Webhooks/{webhookId}',
    summary: 'Read one webhook endpoint of the organization (never its secret).',
    params: webhookParams,
    response: 'WebhookEndpoint',
    timeout: 'read',
    read: 'local',
  }),
  WebhookUpdate: defineOperation({
    ...common,
    name: 'WebhookUpdate',
    method: 'PATCH',
    path: '/api/v2/Webhooks/{webhookId}',
    summary:
      'Change an endpoint: any of url, description, eventTypes, platforms, and enabled (false disables it, true enables it again after any disabling).',
    params: webhookParams,
    body: z
      .strictObject({
        url: webhookFields.url.optional(),
        description: webhookFields.description.optional(),
        eventTypes: webhookFields.eventTypes.optional(),
        platforms: webhookFields.platforms.optional(),
        enabled: webhookFields.enabled.optional(),
      })
      .refine((b) => Object.keys(b).length > 0, 'the body must change at least one field'),
    response: 'WebhookEndpoint',
    timeout: 'change',
    read: 'local',
    mutating: true,
  }),
  WebhookDelete: defineOperation({
    ...common,
    name: 'WebhookDelete',
    method: 'DELETE',
    path: '/api/v2/Webhooks/{webhookId}',
    summary: 'Remove an endpoint: nothing more is delivered to it (`confirm=true`).',
    params: webhookParams,
    query: z.object(confirmQuery),
    response: 'WebhookEndpoint',
    timeout: 'change',
    read: 'local',
    mutating: true,
    destructive: true,
  }),
  WebhookRotateSecret: defineOperation({
    ...common,
    name: 'WebhookRotateSecret',
    method: 'POST',
    path: '/api/v2/Webhooks/{webhookId}/RotateSecret',
    summary: `A new signing secret, answered once; the previous one keeps signing beside it for graceHours (default ${DEFAULT_ROTATION_GRACE_HOURS}, 0 to ${MAX_ROTATION_GRACE_HOURS}).`,
    params: webhookParams,
    body: z
      .strictObject({
        graceHours: z
          .number()
          .int('graceHours must be a whole number of hours')
          .min(0, 'graceHours must be at least 0')
          .max(MAX_ROTATION_GRACE_HOURS, `graceHours must be at most ${MAX_ROTATION_GRACE_HOURS}`)
          .optional(),
      })
      .optional(),
    response: 'WebhookEndpointWithSecret',
    timeout: 'change',
    read: 'local',
    mutating: true,
  }),
  WebhookTest: defineOperation({
    ...common,
    name: 'WebhookTest',
    method: 'POST',
    path: '/api/v2/Webhooks/{webhookId}/Test',
    summary: `Send the endpoint a \`${TEST_EVENT_TYPE}\` event, delivered and retried like any other; answers its id.`,
    params: webhookParams,
    response: 'WebhookQueued',
    timeout: 'change',
    read: 'local',
    mutating: true,
  }),
  WebhookAttempts: defineOperation({
    ...common,
    name: 'WebhookAttempts',
    method: 'GET',
    path: '/api/v2/Webhooks/{webhookId}/Attempts',
    summary: `The endpoint's last delivery attempts, newest first (limit 1 to ${WEBHOOK_PAGE_MAX}, default 50), or those of one event (eventId): time, event, status, latency, error.`,
    params: webhookParams,
    query: z.object({
      limit: intText('limit', 1, WEBHOOK_PAGE_MAX).optional(),
      eventId: eventIdSchema.optional(),
    }),
    response: 'WebhookAttempt[]',
    timeout: 'read',
    read: 'local',
  }),
  WebhookDeadLetters: defineOperation({
    ...common,
    name: 'WebhookDeadLetters',
    method: 'GET',
    path: '/api/v2/Webhooks/{webhookId}/DeadLetters',
    summary: `The events the endpoint was not delivered within the retry window, newest first (limit 1 to ${WEBHOOK_PAGE_MAX}, default 50).`,
    params: webhookParams,
    query: z.object({ limit: intText('limit', 1, WEBHOOK_PAGE_MAX).optional() }),
    response: 'WebhookDeadLetter[]',
    timeout: 'read',
    read: 'local',
  }),
  WebhookRedeliver: defineOperation({
    ...common,
    name: 'WebhookRedeliver',
    method: 'POST',
    path: '/api/v2/Webhooks/{webhookId}/Redeliver',
    summary:
      'Deliver again one event the endpoint was sent (eventId), or every event it was sent in a time range (from inclusive, to exclusive), with the same webhook-id; answers how many were queued.',
    params: webhookParams,
    body: z.union(
      [
        z.strictObject({ eventId: eventIdSchema }),
        z
          .strictObject({ from: dateTimeText('from'), to: dateTimeText('to') })
          .refine((b) => Date.parse(b.to) > Date.parse(b.from), 'to must be after from'),
      ],
      { error: () => 'the body must be {eventId} or {from, to}' },
    ),
    response: 'WebhookQueued',
    timeout: 'change',
    read: 'local',
    mutating: true,
  }),
};
