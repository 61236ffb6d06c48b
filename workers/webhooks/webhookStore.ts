/**
 * An organization's webhook endpoints in the registry (migration 0008): registered, listed, changed, disabled and
 * removed by the organization's clients (the API, `webapi.webhooks`) and by the operator (`npm run registry`), and
 * read with their secrets by the delivery side only. Every change is bounded and checked whole before anything is
 * written: a bad field names itself and the rule; an id of another organization is answered as an unknown one.
 */
import { RegistryError, type RegistryDatabase } from '../registry/registryStore.js';
import { newWebhookSecret } from './signature.js';
import {
  DEFAULT_ROTATION_GRACE_HOURS,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../shared/catalog/webhooks.js';

/** The most endpoints one organization may register. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

/** An endpoint as its organization reads it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  organizationId: string;
  url: string;
  description: string | null;
  eventTypes: WebhookEventType[];
  /** The platforms it hears; null: every platform of the organization. */
  platforms: string[] | null;
  enabled: boolean;
  /** Why it is disabled: `disabled by a caller`, `410 Gone from the receiver`, `failing since …`. */
  disabledReason: string | null;
  /** Until when the secret before the last rotation still signs deliveries; null when none does. */
  previousSecretValidUntil: string | null;
  created: string;
  updated: string;
}

/** An endpoint with the secrets that sign its deliveries (current first): the delivery side's view. */
export interface SigningEndpoint extends WebhookEndpoint {
  secrets: string[];
}

export interface NewWebhookEndpoint {
  url: string;
  description?: string | null;
  eventTypes: WebhookEventType[];
  platforms?: string[] | null;
}

export type WebhookEndpointChange = Partial<NewWebhookEndpoint & { enabled: boolean }>;

interface EndpointRow {
  id: string;
  organization_id: string;
  url: string;
  description: string | null;
  event_types: string;
  platforms: string | null;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  created: string;
  updated: string;
}

const COLUMNS =
  'id, organization_id, url, description, event_types, platforms, disabled_reason, secret, previous_secret, previous_secret_until, created, updated';

function endpointOf(row: EndpointRow, now = Date.now()): SigningEndpoint {
  const previousValid =
    row.previous_secret !== null && row.previous_secret_until !== null && Date.parse(row.previous_secret_until) > now;
  return {
    id: row.id,
    organizationId: row.organization_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types.split(' ').filter(Boolean) as WebhookEventType[],
    platforms: row.platforms === null ? null : row.platforms.split(' ').filter(Boolean),
    enabled: row.disabled_reason === null,
    disabledReason: row.disabled_reason,
    previousSecretValidUntil: previousValid ? row.previous_secret_until : null,
    created: row.created,
    updated: row.updated,
    secrets: previousValid ? [row.secret, row.previous_secret as string] : [row.secret],
  };
}

/** The endpoint without its secrets: what any answer carries. */
export function publicEndpoint(endpoint: SigningEndpoint): WebhookEndpoint {
  const { secrets: _secrets, ...rest } = endpoint;
  return rest;
}

/** Event types in the catalog's order, each once. */
const orderedTypes = (types: readonly WebhookEventType[]) => WEBHOOK_EVENT_TYPES.filter((t) => types.includes(t));

export class WebhookStore {
  constructor(private readonly db: RegistryDatabase) {}

  /** The organization's endpoints, oldest first. */
  async list(organizationId: string): Promise<WebhookEndpoint[]> {
    const { results } = await this.db
      .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE organization_id = ? ORDER BY created, id`)
      .bind(organizationId)
      .all<EndpointRow>();
    return results.map((row) => publicEndpoint(endpointOf(row)));
  }

  /** One endpoint of the organization, with its secrets; null when unknown or another organization's. */
  async find(organizationId: string, id: string): Promise<SigningEndpoint | null> {
    const row = await this.db
      .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ? AND organization_id = ?`)
      .bind(id, organizationId)
      .first<EndpointRow>();
    return row ? endpointOf(row) : null;
  }

  /** One endpoint by id alone (the delivery side, which has the id from its own message). */
  async findAny(id: string): Promise<SigningEndpoint | null> {
    const row = await this.db
      .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ?`)
      .bind(id)
      .first<EndpointRow>();
    return row ? endpointOf(row) : null;
  }

  /** The enabled endpoints that hear `platform` of the organization, with their secrets. */
  async forPlatform(organizationId: string, platform: string): Promise<SigningEndpoint[]> {
    const { results } = await this.db
      .prepare(
        `SELECT ${COLUMNS} FROM webhook_endpoints WHERE organization_id = ? AND disabled_reason IS NULL ORDER BY created, id`,
      )
      .bind(organizationId)
      .all<EndpointRow>();
    return results.map((row) => endpointOf(row)).filter((e) => e.platforms === null || e.platforms.includes(platform));
  }

  /** The platforms (of any organization) that some enabled endpoint hears: where a webhook source must run. */
  async heardPlatforms(): Promise<Array<{ id: string; type: string; organizationId: string }>> {
    const { results } = await this.db
      .prepare(
        `SELECT DISTINCT p.id AS id, p.type AS type, p.organization_id AS organizationId
         FROM trade_platforms p JOIN webhook_endpoints w ON w.organization_id = p.organization_id
         WHERE w.disabled_reason IS NULL AND (w.platforms IS NULL OR (' ' || w.platforms || ' ') LIKE ('% ' || p.id || ' %'))
         ORDER BY p.id`,
      )
      .all<{ id: string; type: string; organizationId: string }>();
    return results;
  }

  /**
   * Registers an endpoint and answers it with its secret: the only answer that ever carries it. The platforms named
   * must be the organization's; `urlProblem` is the caller's check of the URL (where webhooks may be sent).
   */
  async add(
    organizationId: string,
    input: NewWebhookEndpoint,
    urlProblem: (url: string) => Promise<string | null>,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.checkFields(organizationId, input, urlProblem);
    const count = await this.db
      .prepare('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE organization_id = ?')
      .bind(organizationId)
      .first<{ n: number }>();
    if ((count?.n ?? 0) >= MAX_WEBHOOK_ENDPOINTS) {
      throw new RegistryError(
        'conflict',
        `the organization has ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints, the most it may have: remove one first`,
      );
    }
    const now = new Date().toISOString();
    const row: EndpointRow = {
      id: crypto.randomUUID(),
      organization_id: organizationId,
      url: input.url,
      description: input.description ?? null,
      event_types: orderedTypes(input.eventTypes).join(' '),
      platforms: input.platforms ? [...new Set(input.platforms.map((p) => p.toLowerCase()))].join(' ') : null,
      disabled_reason: null,
      secret: newWebhookSecret(),
      previous_secret: null,
      previous_secret_until: null,
      created: now,
      updated: now,
    };
    await this.db
      .prepare(`INSERT INTO webhook_endpoints (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .bind(...(Object.values(row) as unknown[]))
      .run();
    return { endpoint: publicEndpoint(endpointOf(row)), secret: row.secret };
  }

  /** Changes the fields given; `enabled: false` disables it (by a caller), `enabled: true` enables it again. */
  async change(
    organizationId: string,
    id: string,
    change: WebhookEndpointChange,
    urlProblem: (url: string) => Promise<string | null>,
  ): Promise<WebhookEndpoint> {
    const current = await this.find(organizationId, id);
    if (!current) throw new RegistryError('not_found', `webhook endpoint ${id} not found`);
    await this.checkFields(organizationId, change, urlProblem);
    const sets: string[] = [];
    const values: unknown[] = [];
    const set = (column: string, value: unknown) => {
      sets.push(`${column} = ?`);
      values.push(value);
    };
    if (change.url !== undefined) set('url', change.url);
    if (change.description !== undefined) set('description', change.description);
    if (change.eventTypes !== undefined) set('event_types', orderedTypes(change.eventTypes).join(' '));
    if (change.platforms !== undefined) {
      set('platforms', change.platforms ? [...new Set(change.platforms.map((p) => p.toLowerCase()))].join(' ') : null);
    }
    if (change.enabled !== undefined && change.enabled !== current.enabled) {
      set('disabled_reason', change.enabled ? null : 'disabled by a caller');
    }
    set('updated', new Date().toISOString());
    await this.db
      .prepare(`UPDATE webhook_endpoints SET ${sets.join(', ')} WHERE id = ? AND organization_id = ?`)
      .bind(...values, id, organizationId)
      .run();
    return publicEndpoint((await this.find(organizationId, id)) as SigningEndpoint);
  }

  /**
   * A new secret for the endpoint, answered once; the one it replaces keeps signing (beside the new one) for
   * `graceHours`, so a receiver can switch without missing a delivery.
   */
  async rotate(
    organizationId: string,
    id: string,
    graceHours = DEFAULT_ROTATION_GRACE_HOURS,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const current = await this.find(organizationId, id);
    if (!current) throw new RegistryError('not_found', `webhook endpoint ${id} not found`);
    const secret = newWebhookSecret();
    const now = Date.now();
    const until = graceHours > 0 ? new Date(now + graceHours * 3_600_000).toISOString() : null;
    await this.db
      .prepare(
        'UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ?, secret = ?, updated = ? WHERE id = ? AND organization_id = ?',
      )
      .bind(until, secret, new Date(now).toISOString(), id, organizationId)
      .run();
    return { endpoint: publicEndpoint((await this.find(organizationId, id)) as SigningEndpoint), secret };
  }

  /** Disables an endpoint for a reason of the delivery side (a 410 Gone, failing for too long). */
  async disable(id: string, reason: string): Promise<void> {
    await this.db
      .prepare('UPDATE webhook_endpoints SET disabled_reason = ?, updated = ? WHERE id = ? AND disabled_reason IS NULL')
      .bind(reason, new Date().toISOString(), id)
      .run();
  }

  async remove(organizationId: string, id: string): Promise<WebhookEndpoint> {
    const current = await this.find(organizationId, id);
    if (!current) throw new RegistryError('not_found', `webhook endpoint ${id} not found`);
    await this.db
      .prepare('DELETE FROM webhook_endpoints WHERE id = ? AND organization_id = ?')
      .bind(id, organizationId)
      .run();
    return publicEndpoint(current);
  }

  private async checkFields(
    organizationId: string,
    fields: WebhookEndpointChange,
    urlProblem: (url: string) => Promise<string | null>,
  ): Promise<void> {
    if (fields.url !== undefined) {
      const problem = await urlProblem(fields.url);
      if (problem) throw new RegistryError('invalid', problem);
    }
    if (fields.platforms) {
      const wanted = [...new Set(fields.platforms.map((p) => p.toLowerCase()))];
      const { results } = await this.db
        .prepare(
          `SELECT id FROM trade_platforms WHERE organization_id = ? AND id IN (${wanted.map(() => '?').join(', ')})`,
        )
        .bind(organizationId, ...wanted)
        .all<{ id: string }>();
      const known = new Set(results.map((r) => r.id.toLowerCase()));
      const unknown = wanted.find((p) => !known.has(p));
      if (unknown) throw new RegistryError('not_found', `trade platform ${unknown} not found`);
    }
  }
}
