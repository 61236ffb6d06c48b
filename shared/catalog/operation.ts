/**
 * The shape of one catalog entry. One declarative entry per operation is the single source for the edge's route,
 * validation and OpenAPI document and for the broker's handler: the entry's `answer` says how the broker answers it
 * (a cached record or list, a live command, a live page, a Type 1 replace, a Type 2 patch), and only entries with
 * logic of their own (`custom`) have a hand-written handler, bound to the entry itself so that it receives the
 * entry's typed, already-converted arguments.
 */
import type { z } from 'zod';
import type { Family } from '../protocol.js';
import type { Answer } from './answer.js';

export type Generation = 'v1' | 'v2' | 'registry';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Time-out classes and their default budgets in seconds (service spec, "Limits"). */
export const TIMEOUT_CLASSES = { read: 10, history: 30, change: 15, trade: 5, maintenance: 60 } as const;
export type TimeoutClass = keyof typeof TIMEOUT_CLASSES;
export const TIMEOUT_MIN_S = 1;
export const TIMEOUT_MAX_S = 300;

/**
 * OAuth scopes of the API, least privilege first: `webapi` reads (and is what every token carries, the scope existing
 * SDKs ask for), `webapi.write` changes server state and tests account passwords, `webapi.admin` runs destructive and
 * administrative operations; `webapi.audit` reads the organization's audit trail (a compliance team's client, which
 * need hold nothing else); `webapi.webhooks` manages the organization's webhook endpoints. A client is registered with the scopes it may hold; each operation needs exactly one.
 */
export const SCOPES = ['webapi', 'webapi.write', 'webapi.admin', 'webapi.audit', 'webapi.webhooks'] as const;
export type Scope = (typeof SCOPES)[number];
export const READ_SCOPE: Scope = 'webapi';

/**
 * The scope an operation needs unless its entry says otherwise: destructive → admin; mutating → write; a password
 * check → write too (it changes nothing, but answers whether a guess is an account's password, which a read-only
 * client must not learn); else read.
 */
export function derivedScope(op: { mutating?: boolean; destructive?: boolean; passwordCheck?: unknown }): Scope {
  return op.destructive ? 'webapi.admin' : op.mutating || op.passwordCheck ? 'webapi.write' : 'webapi';
}

/**
 * An operation that tests an account's password: `login` names the argument holding the account. The broker counts
 * its failed answers per trade platform and account and, past its bound, refuses further checks of that account
 * without asking the trading server (broker/link/passwordChecks.ts).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- unparameterised: a check of an operation whatever its arguments
export interface PasswordCheck<A = any> {
  login: keyof A & string;
}

/**
 * Text fields where control characters are part of the value (`lineBreaks`: tab, CR and LF; `any`: every control
 * character), by field path (`body.message`; a path covers everything under it). Every other text input refuses them.
 */
export type ControlCharacterAllowances = Readonly<Record<string, 'lineBreaks' | 'any'>>;

/** How a paged list is ordered and what its cursor is made of. */
export interface Paging {
  /** Field (or fields, in order) the list is sorted by ascending; the cursor encodes the last item's key. */
  key: string | readonly string[];
}

type SchemaOrNone = z.ZodType | undefined;
type Out<T> = T extends z.ZodType ? z.output<T> : unknown;

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- {} is what an intersection leaves unchanged: no arguments from that part
type NoArgs = {};

/** The arguments a handler receives: path parameters and query merged, the body under `body`. */
export type ArgsOf<P extends SchemaOrNone, Q extends SchemaOrNone, B extends SchemaOrNone> = (P extends z.ZodType
  ? z.output<P>
  : NoArgs) &
  (Q extends z.ZodType ? z.output<Q> : NoArgs) &
  (B extends z.ZodType ? { body: Out<B> } : NoArgs);

// Unparameterised, an entry of the catalog whatever its arguments: `A` is read by its answer (a parameter, so
// `unknown` would not take a specific entry) and by `keyof A`.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export interface Operation<A = any> {
  /** Operation id, unique across the catalog: `v2.PF4.UserRecordGet`, `v1.PF4.TradesGetTicket`. */
  id: string;
  /** Route name inside its generation and family (the last path segment that names the operation). */
  name: string;
  /** Broker handler name: `PF4.UserRecordGet`; family-agnostic operations have none (`ServerTime`). */
  op: string;
  generation: Generation;
  family: Family | null;
  method: HttpMethod;
  /** Path with `{param}` placeholders: `/api/v2/PF4/{tradePlatform}/UserRecordGet/{login}`. */
  path: string;
  tag: string;
  summary: string;
  /** Path parameters other than `tradePlatform`. */
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Schema of `data` on success: a contract schema name (`PF4User`, `PF4User[]`) or an inline JSON Schema. */
  response: string | Record<string, unknown>;
  timeout: TimeoutClass;
  /** `cached` answers from the pumping cache, `live` makes a round trip, `local` is answered by the edge itself. */
  read: 'cached' | 'live' | 'local';
  /** Changes server state: Idempotency-Key applies on v2, and a missed deadline leaves the outcome unknown. */
  mutating: boolean;
  /** Needs `confirm=true` on v2. */
  destructive: boolean;
  /** The OAuth scope a token needs to call it; derived from `mutating`/`destructive` unless the entry names one. */
  scope: Scope;
  /** Text fields that accept control characters (see ControlCharacterAllowances); none by default. */
  controlCharacters?: ControlCharacterAllowances;
  /** Paged list (v2): `limit` and `cursor` are accepted and `meta.paging` is answered. */
  paged?: Paging;
  /** Largest request body accepted, in bytes, in place of the edge's default (workers/app.ts MAX_BODY_BYTES, 1 MiB). */
  bodyLimitBytes?: number;
  /** Tests an account's password: failed checks are bounded per account (see PasswordCheck). */
  passwordCheck?: PasswordCheck<A>;
  /** The whole body is a secret (a password): the audit trail keeps `[redacted]` in its place. */
  secretBody?: boolean;
  /** How the broker answers the call (entries answered by the edge itself have none). */
  answer?: Answer<A>;
  /** Type-level only: the handler's argument type. */
  readonly __args?: A;
}

export interface OperationInput<P extends SchemaOrNone, Q extends SchemaOrNone, B extends SchemaOrNone> {
  name: string;
  op?: string;
  generation: Generation;
  family: Family | null;
  method: HttpMethod;
  path: string;
  tag: string;
  summary: string;
  params?: P;
  query?: Q;
  body?: B;
  response: string | Record<string, unknown>;
  timeout: TimeoutClass;
  read: 'cached' | 'live' | 'local';
  mutating?: boolean;
  destructive?: boolean;
  scope?: Scope;
  controlCharacters?: ControlCharacterAllowances;
  paged?: Paging;
  bodyLimitBytes?: number;
  passwordCheck?: PasswordCheck<ArgsOf<P, Q, B>>;
  secretBody?: boolean;
  answer?: Answer<ArgsOf<P, Q, B>>;
}

export function defineOperation<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(input: OperationInput<P, Q, B>): Operation<ArgsOf<P, Q, B>> {
  const family = input.family ?? 'Registry';
  return {
    mutating: false,
    destructive: false,
    op: `${family}.${input.name}`,
    ...input,
    scope: input.scope ?? derivedScope(input),
    id: `${input.generation}.${family}.${input.name}`,
  };
}

/**
 * One operation that behaves the same on both families (`ServerTime`): declared once, routed under each family's
 * prefix, answered by one family-agnostic handler (`op` without a family prefix).
 */
export function defineForFamilies<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  families: readonly Family[],
  input: Omit<OperationInput<P, Q, B>, 'family' | 'path'> & { path: (family: Family) => string },
) {
  return families.map((family) =>
    defineOperation<P, Q, B>({ ...input, op: input.op ?? input.name, family, path: input.path(family) }),
  );
}
