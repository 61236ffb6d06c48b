/**
 * Registry administration: `npm run registry -- <command>`. Works on the same local D1 registry `npm start` uses
 * (`$DATA_DIR/edge/d1`, through Miniflare like the edge) and, for platforms with a manager connection, on the broker's
 * platform file. Run `npm run registry -- help` for the commands. `main` is exported for tests, which run it in-process
 * with their own registry.
 */
import '../shared/requireNode.js';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { tightenTree, writePrivateFile } from '../launcher/privateData.js';
import { clientIdSchema, isUuid } from '../workers/registry/ids.js';
import {
  adminPlatform,
  clientNetworks,
  clientScopes,
  TRADE_PLATFORM_TYPES,
  type TradePlatformType,
} from '../workers/registry/records.js';
import { RegistryError, RegistryStore } from '../workers/registry/registryStore.js';
import type { Family } from '../shared/protocol.js';
import { parseBrokerUrls } from '../shared/brokerUrls.js';
import { isJurisdiction, isRegion, JURISDICTIONS, REGIONS, type Jurisdiction, type Region } from '../shared/regions.js';
import { isEntryModule } from '../shared/entryModule.js';
import { WebhookStore } from '../workers/webhooks/webhookStore.js';
import { OperatorAudit, LIST_MAX } from '../workers/audit/operatorAudit.js';
import { redactedArgs } from '../workers/audit/auditRecord.js';
import { dnsOverHttps, targetProblem } from '../workers/webhooks/webhookTargets.js';
import { MAX_WEBHOOK_DESCRIPTION, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../shared/catalog/webhooks.js';

const HELP = `Registry administration (local D1 registry of npm start, under $DATA_DIR, default .data)

  npm run registry -- <command> [--json]

  org add --name NAME [--id UUID] [--jurisdiction eu|fedramp|fedramp-high|us]
                                         --jurisdiction pins every object of its platforms to that jurisdiction
                                         (docs/regions.md)
  org jurisdiction ORG_ID JURISDICTION | org jurisdiction ORG_ID --none
                                         refused while the organization has platforms
  org list
  org remove ORG_ID                      refused while the organization has platforms or clients
  platform add --org ORG_ID --type PF4|PF5|PFOther --name NAME [--id UUID] [--broker-url URL[,URL...]]
               [--home-region REGION]
               [--server ws://HOST:PORT/SERVER --manager-login LOGIN --manager-password-env VAR]
                                         --broker-url names the brokers that serve it, first preferred (repeat the
                                         flag or separate with commas; without it: the edge's BROKER_URL list).
                                         --home-region names its home region (see platform home; without it: the
                                         edge's HOME_REGION), inside its organization's jurisdiction if it has one
                                         --server and the manager options also write the broker's platform file
                                         ($BROKER_PLATFORMS_FILE, default $DATA_DIR/broker-platforms.json) with
                                         "passwordEnv": VAR: the broker reads the password from its environment
                                         variable VAR, and it is never written to the file or given as an argument
                                         (VAR must be set here too, except with --remote)
  platform brokers PLATFORM_ID URL[,URL...] | platform brokers PLATFORM_ID --default
                                         replaces the brokers that serve it, in order (--default: the edge's
                                         BROKER_URL list); edges follow within REGISTRY_CACHE_SECONDS
  platform home PLATFORM_ID REGION | platform home PLATFORM_ID --default
                                         sets its home region, where its live reads and writes are served from
                                         (--default: the edge's HOME_REGION; docs/regions.md). REGION is one of
                                         wnam, enam, sam, weur, eeur, apac, oc, afr, me
  platform list [--org ORG_ID]
  platform remove PLATFORM_ID            also removes it from the broker's platform file
  client add --org ORG_ID [--name NAME] [--id CLIENT_ID] [--scopes SCOPES] [--networks NETWORKS]
                                         prints the client secret once; only its hash is stored
  client scopes CLIENT_ID SCOPES         replaces the scopes the client may hold; its issued tokens lose a
                                         removed scope within REGISTRY_CACHE_SECONDS
  client networks CLIENT_ID NETWORKS | client networks CLIENT_ID --any
                                         replaces the networks its token requests, calls and streams must come
                                         from (--any: any source); issued tokens and open streams are held to the
                                         new list within REGISTRY_CACHE_SECONDS
  client list [--org ORG_ID]
  client disable CLIENT_ID | client enable CLIENT_ID
  client remove CLIENT_ID
  webhook add --org ORG_ID --url URL --events TYPES [--platforms PLATFORM_IDS] [--description TEXT]
                                         registers a webhook endpoint of the organization (docs/webhooks.md);
                                         prints its signing secret once. Without --platforms it hears every
                                         platform of the organization. A local registry takes http and private
                                         addresses (a local receiver); --remote holds the URL to a deployed edge's
                                         rules (https, a public host)
  webhook list [--org ORG_ID]
  webhook disable WEBHOOK_ID | webhook enable WEBHOOK_ID
  webhook remove WEBHOOK_ID
  audit list [--org ORG_ID] [--limit N]  the changes made with these commands, newest first (at most 1000):
                                         each is written before it is made and completed after, and the edge
                                         copies it into its organization's audit trail (docs/audit.md)
  help

  SCOPES are space- or comma-separated: webapi (read; always held), webapi.write (changes),
  webapi.admin (destructive and administrative operations), webapi.audit (the organization's audit trail),
  webapi.webhooks (the organization's webhook endpoints).

  TYPES are space- or comma-separated event types (account.created, trade.closed, ...: docs/webhooks.md), or
  all for every type.
  A client added without --scopes holds webapi only.

  NETWORKS are space- or comma-separated IPv4 and IPv6 networks in CIDR notation, or single addresses
  (203.0.113.0/24, 2001:db8::/32, 198.51.100.7), at most 64. A client added without --networks may be used
  from any source. The source is the address Cloudflare's front names (CF-Connecting-IP): on the local edge
  no request has one, so a client with networks is refused there (docs/api.md, "Allowed networks").

  --json prints machine-readable output.

  --remote [--env staging|production]   act on the deployed D1 registry of that environment instead, through
                                         wrangler (d1 execute --remote; wrangler login or CLOUDFLARE_API_TOKEN). The
                                         broker's platform file is still the local one ($BROKER_PLATFORMS_FILE):
                                         copy it to the broker host.
`;

/** Bad usage: exit code 2, like other command-line tools. */
class UsageError extends Error {}

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Runs `run` on the registry the commands act on; tests hand their own. */
export type RegistryRunner = <T>(run: (store: RegistryStore) => Promise<T>) => Promise<T>;

// Set by each `main` from its environment.
let dataDir = '';
let platformsFile = '';
let openRegistry: RegistryRunner | undefined;
let passwords: NodeJS.ProcessEnv = {};

/**
 * Only the D1 binding is needed here, so Miniflare runs a stub worker rather than the edge bundle: administration
 * keeps working while the edge code is mid-change, and starts without an esbuild pass. Same options, same database.
 */
const STUB_WORKER = `import { DurableObject } from 'cloudflare:workers';
export class PlatformLink extends DurableObject {}
export class IdempotencyLedger extends DurableObject {}
export class ClientRateLimiter extends DurableObject {}
export class PlatformStream extends DurableObject {}
export class AuditTrail extends DurableObject {}
export class WebhookDeliveries extends DurableObject {}
export class WebhookSource extends DurableObject {}
export default { fetch: () => new Response(null, { status: 404 }) };`;

/** Which registry the commands act on: the local one (default), or a deployed one through wrangler (`--remote`). */
let target: { remote: false } | { remote: true; env?: string } = { remote: false };

/** Takes `--remote` and `--env NAME` from anywhere in the arguments; the rest are the command's. */
function takeTargetFlags(argv: string[]): string[] {
  const rest: string[] = [];
  let remote = false;
  let env: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--remote') remote = true;
    else if (arg === '--env') env = argv[++i];
    else if (arg.startsWith('--env=')) env = arg.slice('--env='.length);
    else rest.push(arg);
  }
  if (env !== undefined && !/^[a-z][a-z0-9-]*$/.test(env))
    throw new UsageError('--env must name an environment of wrangler.toml (staging, production)');
  if (env !== undefined && !remote)
    throw new UsageError('--env goes with --remote: the local registry has no environments');
  target = remote ? { remote: true, env } : { remote: false };
  return rest;
}

async function withRegistry<T>(run: (store: RegistryStore) => Promise<T>): Promise<T> {
  if (openRegistry) return openRegistry(run);
  if (target.remote) {
    const { wranglerD1 } = await import('../launcher/wranglerD1.js');
    return run(new RegistryStore(wranglerD1(target)));
  }
  // Loaded on demand: Miniflare takes most of a second to import, which usage errors and help need not pay.
  const { migrateRegistry, miniflareOptions, registryDb, startMiniflare } = await import('../launcher/edge.js');
  // The same folder launcher/stack.ts hands the edge, so this is the registry npm start serves.
  const { miniflare } = await startMiniflare(miniflareOptions(STUB_WORKER, { dataDir: join(dataDir, 'edge') }));
  try {
    const db = registryDb(miniflare);
    await migrateRegistry(db);
    return await run(new RegistryStore(db));
  } finally {
    await miniflare.dispose();
    tightenTree(join(dataDir, 'edge'));
  }
}

// ---- the audit rows of changes (workers/audit/operatorAudit.ts) ----

/** What a change belongs to: its organization (when it names one) and platform. */
interface Subject {
  organizationId: string | null;
  platform?: string | null;
}

/** The command being run, for its audit row. Set by `main`. */
let command: { noun: string; verb: string; values: Values; positionals: string[] } | undefined;
/** Where a warning goes (the command's error output). Set by `main`. */
let warn: (line: string) => void = () => {};

function operatorName(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No user entry for this process's uid (a container): the row says so.
  }
  return `${user}@${hostname()}`;
}

/** The subject as the row keeps it: the organization only if it exists, with its jurisdiction. */
async function known(store: RegistryStore, subject: Subject) {
  const org = subject.organizationId === null ? null : await store.findAdminOrganization(subject.organizationId);
  return {
    organizationId: org?.id ?? null,
    jurisdiction: org?.jurisdiction ?? null,
    platform: subject.platform ?? null,
  };
}

/**
 * Makes a change of the registry with its audit row: written (outcome unknown) before `run` changes anything, in the
 * same registry, and completed after it (applied, or refused with the code the API answers). `subject` names what the
 * change belongs to before it is made; `learned`, what only the change tells (the organization `org add` created).
 */
async function changeRegistry<T>(
  subject: (store: RegistryStore) => Promise<Subject> | Subject,
  run: (store: RegistryStore) => Promise<T>,
  learned?: (result: T) => Subject,
): Promise<T> {
  if (!command) throw new Error('changeRegistry runs inside main');
  const { noun, verb, values, positionals } = command;
  return withRegistry(async (store) => {
    const audit = new OperatorAudit(store.db);
    const before = await known(store, await subject(store));
    const { json: _json, ...flags } = values;
    const uid = await audit.begin({
      operator: operatorName(),
      operation: `cli.${noun}.${verb}`,
      ...before,
      traceId: randomUUID(),
      args: redactedArgs({}, { flags, arguments: positionals }),
    });
    // The change is what counts: a row that cannot be completed stays `unknown`, with a warning, and the command's
    // own answer (a secret shown once, the broker's platform file) is still given.
    const completed = (done: Promise<void>) =>
      done.catch((error: unknown) =>
        warn(`warning: the audit row of this change is left unknown: it could not be completed (${String(error)})`),
      );
    let result: T;
    try {
      result = await run(store);
    } catch (error) {
      if (error instanceof RegistryError)
        await completed(audit.complete(uid, 'refused', error.kind === 'not_found' ? 'NotFound' : 'Validation'));
      throw error;
    }
    const after = learned ? await known(store, learned(result)).catch(() => null) : null;
    await completed(
      audit.complete(
        uid,
        'applied',
        null,
        after?.organizationId ? { ...after, organizationId: after.organizationId } : undefined,
      ),
    );
    return result;
  });
}

/** The organization of a platform, a client or a webhook endpoint named by id; null when there is none. */
const platformSubject = async (store: RegistryStore, id: string): Promise<Subject> => ({
  organizationId: (await store.findAnyPlatform(id))?.platform.organizationId ?? null,
  platform: id,
});
const clientSubject = async (store: RegistryStore, id: string): Promise<Subject> => ({
  organizationId: (await store.findClient(id))?.organizationId ?? null,
});
const webhookSubject = async (store: RegistryStore, id: string): Promise<Subject> => ({
  organizationId: (await new WebhookStore(store.db).findAny(id))?.organizationId ?? null,
});

async function audit(verb: string, values: Values, positionals: string[], io: Io, json: boolean) {
  if (verb !== 'list') throw new UsageError(`unknown command: audit ${verb}`);
  if (positionals.length > 0) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const organizationId = values.org === undefined ? undefined : uuid(String(values.org), '--org');
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX)
      throw new UsageError(`--limit must be a whole number from 1 to ${LIST_MAX}`);
  }
  const rows = await withRegistry((s) => new OperatorAudit(s.db).list({ organizationId, limit }));
  if (json) return io.out(JSON.stringify(rows));
  table(io, [
    ['AT', 'OPERATION', 'OUTCOME', 'ORGANIZATION', 'PLATFORM', 'OPERATOR', 'IN TRAIL'],
    ...rows.map((r) => [
      r.at,
      r.operation,
      r.code ? `${r.outcome} ${r.code}` : r.outcome,
      r.organizationId ?? '-',
      r.platform ?? '-',
      r.operator,
      r.forwardedAt === null ? (r.organizationId === null ? '-' : 'waiting') : 'yes',
    ]),
  ]);
}

// ---- argument rules ----

function required(values: Record<string, unknown>, flag: string): string {
  const value = values[flag];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${flag} is required`);
  return value.trim();
}

function name(value: string, flag = 'name'): string {
  if (value.length > 200) throw new UsageError(`--${flag} must be at most 200 characters`);
  return value;
}

function uuid(value: string, what: string): string {
  if (!isUuid(value)) throw new UsageError(`${what} must be a uuid (for example ${crypto.randomUUID()})`);
  return value.toLowerCase();
}

function url(value: string, flag: string, schemes: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new UsageError(`--${flag} must be a URL`);
  }
  if (!schemes.includes(parsed.protocol))
    throw new UsageError(`--${flag} must be a ${schemes.map((s) => s.replace(':', '')).join(' or ')} URL`);
  return value;
}

/** `--broker-url` values (the flag repeated, each possibly a comma list) as one ordered list. */
function brokerUrlsArg(values: readonly string[], what: string): string[] {
  const parsed = parseBrokerUrls(values.join(','));
  if (!parsed.ok) throw new UsageError(`${what} ${parsed.problem}`);
  return parsed.value;
}

function scopesArg(value: string, what: string): string[] {
  const parsed = clientScopes(value);
  if (!parsed.ok) throw new UsageError(`${what}: ${parsed.message}`);
  return parsed.scopes;
}

function networksArg(value: string, what: string): string[] {
  const parsed = clientNetworks(value);
  if (!parsed.ok) throw new UsageError(`${what}: ${parsed.message}`);
  return parsed.networks;
}

const networksText = (networks: readonly string[]) => (networks.length ? networks.join(' ') : 'any source');

function onePositional(positionals: string[], what: string, check: (v: string) => string): string {
  if (positionals.length !== 1) throw new UsageError(`expected exactly one ${what}`);
  return check(positionals[0]);
}

// ---- the broker's platform file (format owned by the broker, broker/platforms/platformsFile.ts) ----

/** An entry as this CLI writes it: the password's variable, never the password. Other entries are kept as they are. */
interface BrokerPlatform {
  id: string;
  family: Family;
  server: string;
  login: number;
  passwordEnv?: string;
  password?: string;
}

function readBrokerPlatforms(): BrokerPlatform[] {
  if (!existsSync(platformsFile)) return [];
  let parsed: { platforms?: BrokerPlatform[] };
  try {
    parsed = JSON.parse(readFileSync(platformsFile, 'utf8')) as { platforms?: BrokerPlatform[] };
  } catch {
    throw new RegistryError('invalid', `${platformsFile} is not valid JSON; fix or remove it first`);
  }
  return Array.isArray(parsed.platforms) ? parsed.platforms : [];
}

/** Written whole and renamed into place: the broker re-reads the file on change and must never see half of it. */
function writeBrokerPlatforms(platforms: BrokerPlatform[]) {
  mkdirSync(dirname(platformsFile), { recursive: true, mode: 0o700 });
  writePrivateFile(platformsFile, JSON.stringify({ platforms }, null, 2));
}

interface ManagerConnection {
  server: string;
  login: number;
  passwordEnv: string;
}

function managerConnection(values: Record<string, unknown>, type: TradePlatformType): ManagerConnection | null {
  const given = ['server', 'manager-login', 'manager-password-env'].filter((f) => values[f] !== undefined);
  if (given.length === 0) return null;
  if (given.length < 3) throw new UsageError('--server, --manager-login and --manager-password-env go together');
  if (type === 'PFOther')
    throw new UsageError('--server needs --type PF4 or PF5: the broker serves those families only');
  const server = url(required(values, 'server'), 'server', ['ws:', 'wss:']);
  const loginText = required(values, 'manager-login');
  const login = Number(loginText);
  if (!/^\d+$/.test(loginText) || !Number.isSafeInteger(login) || login <= 0)
    throw new UsageError('--manager-login must be a positive integer');
  const passwordEnv = required(values, 'manager-password-env');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(passwordEnv))
    throw new UsageError('--manager-password-env must name an environment variable');
  // Locally the broker npm start runs reads the same environment, so a misspelt or unset name is caught here. With
  // --remote the broker is on another host, and its password need not be on this one.
  if (!target.remote && !passwords[passwordEnv]) {
    throw new UsageError(
      `--manager-password-env: environment variable ${passwordEnv} is not set or empty (the broker reads the password from it)`,
    );
  }
  return { server, login, passwordEnv };
}

// ---- commands ----

type Values = Record<string, string | boolean | string[] | undefined>;

function table(io: Io, rows: string[][]) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows)
    io.out(
      r
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
}

async function org(verb: string, values: Values, positionals: string[], io: Io, json: boolean) {
  if (verb === 'add') {
    const input = {
      name: name(required(values, 'name')),
      id: values.id === undefined ? undefined : uuid(String(values.id), '--id'),
      jurisdiction:
        values.jurisdiction === undefined ? undefined : jurisdictionArg(String(values.jurisdiction), '--jurisdiction'),
    };
    const added = await changeRegistry(
      () => ({ organizationId: null }),
      (s) => s.addOrganization(input),
      (org) => ({ organizationId: org.id }),
    );
    io.out(
      json
        ? JSON.stringify(added)
        : `organization ${added.id} added: ${added.name}${added.jurisdiction ? `, pinned to ${added.jurisdiction}` : ''}`,
    );
  } else if (verb === 'jurisdiction') {
    const none = values.none === true;
    if (positionals.length === 0) throw new UsageError('expected an organization id and its jurisdiction (or --none)');
    const id = uuid(positionals[0], 'ORG_ID');
    if (none && positionals.length > 1) throw new UsageError('--none goes without a jurisdiction');
    if (!none && positionals.length !== 2)
      throw new UsageError('expected one jurisdiction after the organization id (or --none)');
    const jurisdiction = none ? null : jurisdictionArg(positionals[1], 'JURISDICTION');
    const changed = await changeRegistry(
      () => ({ organizationId: id }),
      (s) => s.setOrganizationJurisdiction(id, jurisdiction),
      // Its trail is now the new jurisdiction's: the row goes there, where the organization's trail is read.
      (org) => ({ organizationId: org.id }),
    );
    if (json) return io.out(JSON.stringify(changed));
    io.out(
      `organization ${changed.id} ${changed.jurisdiction ? `pinned to ${changed.jurisdiction}` : 'pinned to no jurisdiction'}`,
    );
  } else if (verb === 'list') {
    const orgs = await withRegistry((s) => s.allOrganizations());
    if (json) return io.out(JSON.stringify(orgs));
    table(io, [
      ['ID', 'NAME', 'JURISDICTION', 'CREATED'],
      ...orgs.map((o) => [o.id, o.name ?? '', o.jurisdiction ?? '-', o.created]),
    ]);
  } else if (verb === 'remove') {
    const id = onePositional(positionals, 'organization id', (v) => uuid(v, 'ORG_ID'));
    const removed = await changeRegistry(
      () => ({ organizationId: id }),
      (s) => s.removeOrganization(id),
    );
    io.out(json ? JSON.stringify(removed) : `organization ${removed.id} removed`);
  } else {
    throw new UsageError(`unknown command: org ${verb}`);
  }
}

async function platform(verb: string, values: Values, positionals: string[], io: Io, json: boolean) {
  if (verb === 'add') {
    const organizationId = uuid(required(values, 'org'), '--org');
    const typeText = required(values, 'type');
    if (!(TRADE_PLATFORM_TYPES as readonly string[]).includes(typeText))
      throw new UsageError(`--type must be one of ${TRADE_PLATFORM_TYPES.join(', ')}`);
    const type = typeText as TradePlatformType;
    const input = {
      organizationId,
      type,
      name: name(required(values, 'name')),
      id: values.id === undefined ? undefined : uuid(String(values.id), '--id'),
      brokerUrls:
        values['broker-url'] === undefined
          ? undefined
          : brokerUrlsArg(values['broker-url'] as string[], '--broker-url'),
      homeRegion:
        values['home-region'] === undefined ? undefined : regionArg(String(values['home-region']), '--home-region'),
    };
    const connection = managerConnection(values, type);
    const existing = connection ? readBrokerPlatforms() : [];
    const entry = await changeRegistry(
      () => ({ organizationId, platform: input.id ?? null }),
      (s) => s.addPlatform(input),
      (added) => ({ organizationId: added.platform.organizationId, platform: added.platform.id }),
    );
    const added = entry.platform;
    if (connection) {
      const served: BrokerPlatform = {
        id: added.id,
        family: type as Family,
        server: connection.server,
        login: connection.login,
        passwordEnv: connection.passwordEnv,
      };
      writeBrokerPlatforms([...existing.filter((p) => p.id !== added.id), served]);
    }
    if (json)
      return io.out(
        JSON.stringify({ ...adminPlatform(entry), brokerPlatformsFile: connection ? platformsFile : null }),
      );
    io.out(
      `platform ${added.id} added: ${added.type} "${added.name}" in organization ${added.organizationId}, served by ${brokersText(entry.brokerUrls)}, home ${homeText(entry.homeRegion)}`,
    );
    if (connection) {
      io.out(
        `broker: manager connection (server ${connection.server}, login ${connection.login}, password from $${connection.passwordEnv} in the broker's environment) written to ${platformsFile}`,
      );
    } else if (type !== 'PFOther') {
      io.out(
        `note: the broker serves this platform only once its platform file (${platformsFile}) holds the manager connection:`,
      );
      io.out(
        `      {"id": "${added.id}", "family": "${type}", "server": "ws://...", "login": ..., "passwordEnv": "VARIABLE_HOLDING_THE_PASSWORD"}`,
      );
    }
  } else if (verb === 'list') {
    const orgId = values.org === undefined ? undefined : uuid(String(values.org), '--org');
    const entries = await withRegistry((s) => s.allPlatforms(orgId));
    const inBroker = new Set(readBrokerPlatforms().map((p) => p.id));
    if (json)
      return io.out(
        JSON.stringify(entries.map((e) => ({ ...adminPlatform(e), inBrokerFile: inBroker.has(e.platform.id) }))),
      );
    table(io, [
      ['ID', 'TYPE', 'NAME', 'ORGANIZATION', 'BROKERS', 'HOME', 'IN BROKER FILE'],
      ...entries.map((e) => [
        e.platform.id,
        e.platform.type,
        e.platform.name ?? '',
        e.platform.organizationId,
        brokersText(e.brokerUrls),
        homeText(e.homeRegion),
        inBroker.has(e.platform.id) ? 'yes' : 'no',
      ]),
    ]);
  } else if (verb === 'brokers') {
    const toDefault = values.default === true;
    if (positionals.length === 0) throw new UsageError('expected a platform id and its broker URLs (or --default)');
    const id = uuid(positionals[0], 'PLATFORM_ID');
    if (toDefault && positionals.length > 1) throw new UsageError('--default goes without broker URLs');
    if (!toDefault && positionals.length < 2)
      throw new UsageError('expected the broker URLs after the platform id (or --default)');
    const urls = toDefault ? null : brokerUrlsArg(positionals.slice(1), 'URL');
    const changed = await changeRegistry(
      (s) => platformSubject(s, id),
      (s) => s.setPlatformBrokers(id, urls),
    );
    if (json) return io.out(JSON.stringify(adminPlatform(changed)));
    io.out(`platform ${changed.platform.id} served by ${brokersText(changed.brokerUrls)}`);
  } else if (verb === 'home') {
    const toDefault = values.default === true;
    if (positionals.length === 0) throw new UsageError('expected a platform id and its home region (or --default)');
    const id = uuid(positionals[0], 'PLATFORM_ID');
    if (toDefault && positionals.length > 1) throw new UsageError('--default goes without a region');
    if (!toDefault && positionals.length !== 2)
      throw new UsageError('expected one region after the platform id (or --default)');
    const region = toDefault ? null : regionArg(positionals[1], 'REGION');
    const changed = await changeRegistry(
      (s) => platformSubject(s, id),
      (s) => s.setPlatformHomeRegion(id, region),
    );
    if (json) return io.out(JSON.stringify(adminPlatform(changed)));
    io.out(`platform ${changed.platform.id} at home in ${homeText(changed.homeRegion)}`);
  } else if (verb === 'remove') {
    const id = onePositional(positionals, 'platform id', (v) => uuid(v, 'PLATFORM_ID'));
    const existing = readBrokerPlatforms();
    const removed = await changeRegistry(
      (s) => platformSubject(s, id),
      (s) => s.removePlatform(id),
    );
    const fromBroker = existing.some((p) => p.id === removed.platform.id);
    if (fromBroker) writeBrokerPlatforms(existing.filter((p) => p.id !== removed.platform.id));
    if (json) return io.out(JSON.stringify({ ...removed.platform, removedFromBrokerFile: fromBroker }));
    io.out(`platform ${removed.platform.id} removed${fromBroker ? ` (and from ${platformsFile})` : ''}`);
  } else {
    throw new UsageError(`unknown command: platform ${verb}`);
  }
}

/** A platform's brokers as the listing shows them: in order, or the edge's default list. */
function brokersText(urls: readonly string[] | null): string {
  return urls === null ? '(default)' : urls.join(',');
}

function homeText(region: Region | null): string {
  return region ?? 'default (HOME_REGION)';
}

function regionArg(value: string, what: string): Region {
  if (!isRegion(value)) throw new UsageError(`${what} must be one of ${REGIONS.join(', ')}`);
  return value;
}

function jurisdictionArg(value: string, what: string): Jurisdiction {
  if (!isJurisdiction(value)) throw new UsageError(`${what} must be one of ${JURISDICTIONS.join(', ')}`);
  return value;
}

async function client(verb: string, values: Values, positionals: string[], io: Io, json: boolean) {
  const clientIdArg = (v: string) => {
    const parsed = clientIdSchema.safeParse(v);
    if (!parsed.success) throw new UsageError(`CLIENT_ID: ${parsed.error.issues[0]?.message}`);
    return v;
  };
  if (verb === 'add') {
    const input = {
      organizationId: uuid(required(values, 'org'), '--org'),
      name: values.name === undefined ? null : name(required(values, 'name')),
      clientId:
        values.id === undefined
          ? undefined
          : (() => {
              const parsed = clientIdSchema.safeParse(values.id);
              if (!parsed.success) throw new UsageError(`--id: ${parsed.error.issues[0]?.message}`);
              return parsed.data;
            })(),
      scopes: values.scopes === undefined ? undefined : scopesArg(String(values.scopes), '--scopes'),
      allowedNetworks: values.networks === undefined ? undefined : networksArg(String(values.networks), '--networks'),
    };
    const { client: added, secret } = await changeRegistry(
      () => ({ organizationId: input.organizationId }),
      (s) => s.addClient(input),
    );
    const warning =
      'warning: the client secret is shown only this once. It is not stored (only a hash is) and cannot be recovered; keep it safe.';
    if (json) {
      io.out(JSON.stringify({ ...added, clientSecret: secret }));
      io.err(warning);
      return;
    }
    io.out(`client added to organization ${added.organizationId}`);
    io.out(`  client_id      ${added.clientId}`);
    io.out(`  client_secret  ${secret}`);
    io.out(`  scopes         ${added.scopes.join(' ')}`);
    io.out(`  networks       ${networksText(added.allowedNetworks)}`);
    io.out(warning);
  } else if (verb === 'list') {
    const orgId = values.org === undefined ? undefined : uuid(String(values.org), '--org');
    const clients = await withRegistry((s) => s.listClients(orgId));
    if (json) return io.out(JSON.stringify(clients));
    table(io, [
      ['CLIENT ID', 'NAME', 'ORGANIZATION', 'STATE', 'SCOPES', 'NETWORKS', 'CREATED'],
      ...clients.map((c) => [
        c.clientId,
        c.name ?? '',
        c.organizationId,
        c.disabled ? 'disabled' : 'enabled',
        c.scopes.join(' '),
        networksText(c.allowedNetworks),
        c.created,
      ]),
    ]);
  } else if (verb === 'scopes') {
    if (positionals.length < 2) throw new UsageError('expected a client id and the scopes it may hold');
    const id = clientIdArg(positionals[0]);
    const scopes = scopesArg(positionals.slice(1).join(' '), 'SCOPES');
    const result = await changeRegistry(
      (s) => clientSubject(s, id),
      (s) => s.setClientScopes(id, scopes),
    );
    io.out(json ? JSON.stringify(result) : `client ${result.clientId} may hold ${result.scopes.join(' ')}`);
  } else if (verb === 'networks') {
    const any = values.any === true;
    if (positionals.length < (any ? 1 : 2) || (any && positionals.length > 1))
      throw new UsageError('expected a client id and the networks it may be used from, or a client id and --any');
    const id = clientIdArg(positionals[0]);
    const networks = any ? [] : networksArg(positionals.slice(1).join(' '), 'NETWORKS');
    const result = await changeRegistry(
      (s) => clientSubject(s, id),
      (s) => s.setClientNetworks(id, networks),
    );
    io.out(
      json
        ? JSON.stringify(result)
        : `client ${result.clientId} may be used from ${networksText(result.allowedNetworks)}`,
    );
  } else if (verb === 'remove' || verb === 'disable' || verb === 'enable') {
    const id = onePositional(positionals, 'client id', clientIdArg);
    const result = await changeRegistry(
      (s) => clientSubject(s, id),
      (s) => (verb === 'remove' ? s.removeClient(id) : s.setClientDisabled(id, verb === 'disable')),
    );
    io.out(json ? JSON.stringify(result) : `client ${result.clientId} ${verb === 'remove' ? 'removed' : `${verb}d`}`);
  } else {
    throw new UsageError(`unknown command: client ${verb}`);
  }
}

async function webhook(verb: string, values: Values, positionals: string[], io: Io, json: boolean) {
  const rules = { allowPrivate: !target.remote, resolve: dnsOverHttps };
  const urlProblem = (url: string) => targetProblem(url, rules);
  /** The endpoint `id` wherever its organization: what the operator's commands act on. */
  const found = async (store: WebhookStore, id: string) => {
    const endpoint = await store.findAny(id);
    if (!endpoint) throw new RegistryError('not_found', `webhook endpoint ${id} not found`);
    return endpoint;
  };
  if (verb === 'add') {
    const organizationId = uuid(required(values, 'org'), '--org');
    const typesText = required(values, 'events');
    const asked = typesText.trim() === 'all' ? [...WEBHOOK_EVENT_TYPES] : typesText.split(/[\s,]+/).filter(Boolean);
    const unknown = asked.find((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
    if (unknown !== undefined || asked.length === 0)
      throw new UsageError(
        `--events: ${unknown ?? '(none)'} is not an event type: they are ${WEBHOOK_EVENT_TYPES.join(', ')}`,
      );
    const platforms =
      values.platforms === undefined
        ? null
        : String(values.platforms)
            .split(/[\s,]+/)
            .filter(Boolean)
            .map((p) => uuid(p, '--platforms'));
    const description = values.description === undefined ? null : String(values.description);
    if (description !== null && description.length > MAX_WEBHOOK_DESCRIPTION)
      throw new UsageError(`--description must be at most ${MAX_WEBHOOK_DESCRIPTION} characters`);
    const input = { url: required(values, 'url'), eventTypes: asked as WebhookEventType[], platforms, description };
    const { endpoint, secret } = await changeRegistry(
      () => ({ organizationId }),
      (s) => new WebhookStore(s.db).add(organizationId, input, urlProblem),
    );
    const warning = 'warning: the signing secret is shown only this once (no answer shows it again); keep it safe.';
    if (json) {
      io.out(JSON.stringify({ ...endpoint, secret }));
      io.err(warning);
      return;
    }
    io.out(`webhook endpoint added to organization ${endpoint.organizationId}`);
    io.out(`  id       ${endpoint.id}`);
    io.out(`  url      ${endpoint.url}`);
    io.out(`  secret   ${secret}`);
    io.out(`  events   ${endpoint.eventTypes.join(' ')}`);
    io.out(
      `  hears    ${endpoint.platforms === null ? 'every platform of the organization' : endpoint.platforms.join(' ')}`,
    );
    io.out(warning);
    io.out(
      "the edge starts its platforms' webhook sources within a minute, or at once when it is changed through the API",
    );
  } else if (verb === 'list') {
    const orgId = values.org === undefined ? undefined : uuid(String(values.org), '--org');
    const endpoints = await withRegistry(async (s) => {
      const store = new WebhookStore(s.db);
      const orgs = orgId ? [orgId] : (await s.allOrganizations()).map((o) => o.id);
      return (await Promise.all(orgs.map((o) => store.list(o)))).flat();
    });
    if (json) return io.out(JSON.stringify(endpoints));
    table(io, [
      ['WEBHOOK ID', 'ORGANIZATION', 'URL', 'STATE', 'EVENTS', 'PLATFORMS'],
      ...endpoints.map((e) => [
        e.id,
        e.organizationId,
        e.url,
        e.enabled ? 'enabled' : `disabled: ${e.disabledReason ?? ''}`,
        e.eventTypes.join(' '),
        e.platforms === null ? 'all' : e.platforms.join(' '),
      ]),
    ]);
  } else if (verb === 'disable' || verb === 'enable' || verb === 'remove') {
    const id = onePositional(positionals, 'webhook id', (v) => uuid(v, 'WEBHOOK_ID'));
    const result = await changeRegistry(
      (s) => webhookSubject(s, id),
      async (s) => {
        const store = new WebhookStore(s.db);
        const endpoint = await found(store, id);
        return verb === 'remove'
          ? store.remove(endpoint.organizationId, id)
          : store.change(endpoint.organizationId, id, { enabled: verb === 'enable' }, urlProblem);
      },
    );
    io.out(
      json ? JSON.stringify(result) : `webhook endpoint ${result.id} ${verb === 'remove' ? 'removed' : `${verb}d`}`,
    );
  } else {
    throw new UsageError(`unknown command: webhook ${verb}`);
  }
}

const OPTIONS = {
  add: {
    org: { name: { type: 'string' }, id: { type: 'string' }, jurisdiction: { type: 'string' } },
    platform: {
      org: { type: 'string' },
      type: { type: 'string' },
      name: { type: 'string' },
      id: { type: 'string' },
      'broker-url': { type: 'string', multiple: true },
      'home-region': { type: 'string' },
      server: { type: 'string' },
      'manager-login': { type: 'string' },
      'manager-password-env': { type: 'string' },
    },
    client: {
      org: { type: 'string' },
      name: { type: 'string' },
      id: { type: 'string' },
      scopes: { type: 'string' },
      networks: { type: 'string' },
    },
    webhook: {
      org: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      platforms: { type: 'string' },
      description: { type: 'string' },
    },
  },
  list: {
    org: {},
    platform: { org: { type: 'string' } },
    client: { org: { type: 'string' } },
    webhook: { org: { type: 'string' } },
    audit: { org: { type: 'string' }, limit: { type: 'string' } },
  },
  brokers: { platform: { default: { type: 'boolean' } } },
  home: { platform: { default: { type: 'boolean' } } },
  jurisdiction: { org: { none: { type: 'boolean' } } },
  networks: { client: { any: { type: 'boolean' } } },
} as const;
const TAKE_NO_POSITIONALS = new Set(['add', 'list']);

/**
 * Runs one command: its exit code (0, 1 for a refused change, 2 for bad usage). `env` gives DATA_DIR and
 * BROKER_PLATFORMS_FILE (and the manager password variables); `registry`, when given, replaces the registry of
 * DATA_DIR (or `--remote`).
 */
export async function main(
  argv: string[],
  io: Io,
  options: { env?: NodeJS.ProcessEnv; registry?: RegistryRunner } = {},
): Promise<number> {
  const env = options.env ?? process.env;
  dataDir = resolve(env.DATA_DIR || '.data');
  platformsFile = resolve(env.BROKER_PLATFORMS_FILE || join(dataDir, 'broker-platforms.json'));
  openRegistry = options.registry;
  passwords = env;
  let args: string[];
  try {
    args = takeTargetFlags(argv);
  } catch (error) {
    io.err(`error: ${(error as Error).message}`);
    return 2;
  }
  const [noun, verb, ...rest] = args;
  if (!noun || noun === 'help' || noun === '--help' || noun === '-h') {
    io.out(HELP);
    return 0;
  }
  try {
    if (!['org', 'platform', 'client', 'webhook', 'audit'].includes(noun))
      throw new UsageError(`unknown command: ${noun}`);
    if (!verb) throw new UsageError(`${noun}: a subcommand is required`);
    const byVerb = (OPTIONS as Record<string, Record<string, object>>)[verb];
    const options = { ...(byVerb?.[noun] ?? {}), json: { type: 'boolean' } } as NonNullable<ParseArgsConfig['options']>;
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options, strict: true, allowPositionals: true });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const values = parsed.values as Values;
    const json = values.json === true;
    command = { noun, verb, values, positionals: parsed.positionals };
    warn = io.err;
    if (TAKE_NO_POSITIONALS.has(verb) && parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument: ${parsed.positionals[0]}`);
    if (noun === 'org') await org(verb, values, parsed.positionals, io, json);
    else if (noun === 'platform') await platform(verb, values, parsed.positionals, io, json);
    else if (noun === 'client') await client(verb, values, parsed.positionals, io, json);
    else if (noun === 'audit') await audit(verb, values, parsed.positionals, io, json);
    else await webhook(verb, values, parsed.positionals, io, json);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`error: ${error.message}`);
      io.err('run `npm run registry -- help` for usage');
      return 2;
    }
    if (error instanceof RegistryError) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    // wrangler's own account of a failed remote command (not logged in, unknown database, …): one line, no trace.
    if (target.remote) {
      io.err(`error: ${(error as Error).message}`);
      return 1;
    }
    throw error;
  }
}

if (isEntryModule(import.meta.url)) {
  const io: Io = { out: (line) => console.log(line), err: (line) => console.error(line) };
  process.exitCode = await main(process.argv.slice(2), io);
}
