/**
 * The shape of one catalog entry. One declarative entry per operation is the single source for the edge's route,
 * validation and OpenAPI document and for the broker's handler lookup.
 */
import type { z } from 'zod';

export type Generation = 'v1' | 'v2' | 'registry';
export type Family = 'PF4' | 'PF5';
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Time-out classes and their default budgets in seconds (service spec, "Limits"). */
export const TIMEOUT_CLASSES = { read: 10, history: 30, change: 15, trade: 5, maintenance: 60 } as const;
export type TimeoutClass = keyof typeof TIMEOUT_CLASSES;
export const TIMEOUT_MIN_S = 1;
export const TIMEOUT_MAX_S = 300;

/** How a paged list is ordered and what its cursor is made of. */
export interface Paging {
  /** Field (or fields, in order) the list is sorted by ascending; the cursor encodes the last item's key. */
  key: string | string[];
}

export interface Operation {
  /** Operation id, unique across the catalog: `v2.PF4.UserRecordGet`, `v1.PF4.TradesGetTicket`. */
  id: string;
  /** Route name inside its generation and family (the last path segment that names the operation). */
  name: string;
  /** Broker handler name: `PF4.UserRecordGet`. Several routes may share one handler. */
  op: string;
  generation: Generation;
  family: Family | null;
  method: HttpMethod;
  /** Path with `{param}` placeholders: `/api/v2/PF4/{tradePlatform}/UserRecordGet/{login}`. */
  path: string;
  tag: string;
  summary: string;
  /** Path parameters other than `tradePlatform`. */
  params?: z.ZodObject<any>;
  query?: z.ZodObject<any>;
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
  /** Paged list (v2): `limit` and `cursor` are accepted and `meta.paging` is answered. */
  paged?: Paging;
}

export type OperationInput = Omit<Operation, 'id' | 'op' | 'mutating' | 'destructive'> &
  Partial<Pick<Operation, 'op' | 'mutating' | 'destructive'>>;

export function defineOperation(input: OperationInput): Operation {
  const family = input.family ?? 'Registry';
  return {
    mutating: false,
    destructive: false,
    op: `${family}.${input.name}`,
    ...input,
    id: `${input.generation}.${family}.${input.name}`,
  };
}
