/** v2 PF4 Groups: group records from the cache and live, their security entries and margin overrides, updates. */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { contractBody, groupName, mergePatchBody, pageQuery } from '../../fields.js';
import { V2_PF4 as v2 } from '../paths.js';

/**
 * Fields a group cannot be without: its currency and its enumerated modes have no empty value, so a merge patch may
 * change them but not remove them (null).
 */
const GROUP_REQUIRED = [
  'currency',
  'otpMode',
  'marginMode',
  'newsMode',
  'groupRights',
  'marginControllingType',
] as const;

/** Type 1 body: the contract's PF4GroupUpdate. It has no `group` member: the path names the group, which cannot change. */
const groupUpdateBody = (contractBody('PF4GroupUpdate') as z.ZodObject).extend({
  currency: z
    .string()
    .min(1, 'currency must not be empty')
    .max(16, 'currency must be at most 16 characters')
    .nullable()
    .optional(),
});

/** Type 2 body: a merge patch of PF4GroupUpdate; unknown members (the group name among them) are refused by name. */
const groupPatchBody = mergePatchBody('PF4GroupUpdate').superRefine((patch, ctx) => {
  for (const field of GROUP_REQUIRED) {
    if (patch[field] === null) ctx.addIssue({ code: 'custom', path: [field], message: `${field} cannot be removed` });
  }
  const currency = patch.currency;
  if (typeof currency === 'string' && (currency.length === 0 || currency.length > 16)) {
    ctx.addIssue({ code: 'custom', path: ['currency'], message: 'currency must be 1 to 16 characters' });
  }
});

const groupOnly = (a: { group: string }) => ({ group: a.group });

export const groups = {
  GroupsGet: defineOperation({
    name: 'GroupsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/GroupsGet`,
    tag: 'Groups',
    summary:
      'Every group from the cache, no paging; SMTP credentials, template paths and nested security arrays are dropped.',
    response: 'PF4Group[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedList', table: 'groups' },
  }),
  GroupRecordGet: defineOperation({
    name: 'GroupRecordGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/GroupRecordGet/{group}`,
    tag: 'Groups',
    summary: 'One group from the cache by its exact (case-sensitive) name; not-found envelope when absent.',
    params: z.object({ group: groupName }),
    response: 'PF4Group',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'groups', key: 'group', what: 'group' },
  }),
  GroupsRequest: defineOperation({
    name: 'GroupsRequest',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/GroupsRequest`,
    tag: 'Groups',
    summary:
      'Live paged list of groups sorted by group name (ordinal) ascending; the cursor holds the last group name.',
    query: z.object(pageQuery),
    response: 'PF4Group[]',
    timeout: 'read',
    read: 'live',
    paged: { key: 'group' },
    answer: { kind: 'livePage', command: 'GroupsRequest' },
  }),
  GroupSecGroupsGet: defineOperation({
    name: 'GroupSecGroupsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/GroupSecGroupsGet/{group}`,
    tag: 'Groups',
    summary:
      "The group's 32 security entries (one per symbol type; trade and show both 0 is a placeholder), cached; not-found envelope for an unknown group.",
    params: z.object({ group: groupName }),
    response: 'PF4GroupSec[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'groupSecurities', key: 'group', what: 'group', field: 'secGroups' },
  }),
  GroupSecMarginsGet: defineOperation({
    name: 'GroupSecMarginsGet',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/GroupSecMarginsGet/{group}`,
    tag: 'Groups',
    summary:
      "The group's per-symbol margin overrides: the first secMarginsTotal entries, cached; not-found envelope for an unknown group.",
    params: z.object({ group: groupName }),
    response: 'PF4GroupMargin[]',
    timeout: 'read',
    read: 'cached',
    answer: { kind: 'cachedRecord', table: 'groupSecurities', key: 'group', what: 'group', field: 'secMargins' },
  }),
  GroupRecordUpdate: defineOperation({
    name: 'GroupRecordUpdate',
    generation: 'v2',
    family: 'PF4',
    method: 'POST',
    path: `${v2}/GroupRecordUpdate/{group}`,
    tag: 'Groups',
    summary:
      'Type 1 full replace: the group read live, the PF4GroupUpdate fields laid over it, written back; the name, SMTP credentials, template paths, securities hash, reserved and nested security arrays and news languages are preserved (admin).',
    params: z.object({ group: groupName }),
    body: groupUpdateBody,
    response: 'PF4Group',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'replace',
      dto: 'PF4GroupUpdate',
      read: { command: 'GroupRecordRequest', args: groupOnly },
      write: { command: 'GroupRecordUpdate', args: (a, record) => ({ group: a.group, record }) },
    },
  }),
  GroupRecord: defineOperation({
    name: 'GroupRecord',
    generation: 'v2',
    family: 'PF4',
    method: 'PATCH',
    path: `${v2}/GroupRecord/{group}`,
    tag: 'Groups',
    summary:
      'Type 2 merge patch of the group (read, merge, write); omitted fields keep their values; the updated group is answered (admin).',
    params: z.object({ group: groupName }),
    body: groupPatchBody,
    response: 'PF4Group',
    timeout: 'change',
    read: 'live',
    mutating: true,
    answer: {
      kind: 'patch',
      dto: 'PF4GroupUpdate',
      read: { command: 'GroupRecordRequest', args: groupOnly },
      write: { command: 'GroupRecordUpdate', args: (a, record) => ({ group: a.group, record }) },
    },
  }),
  EnsureGroupNameExist: defineOperation({
    name: 'EnsureGroupNameExist',
    generation: 'v2',
    family: 'PF4',
    method: 'GET',
    path: `${v2}/EnsureGroupNameExist/{group}`,
    tag: 'Groups',
    summary:
      'True when a group of exactly this (case-sensitive) name exists, else false; answered by listing every group live.',
    params: z.object({ group: groupName }),
    response: { type: 'boolean' },
    timeout: 'read',
    read: 'live',
    answer: {
      kind: 'live',
      command: 'GroupsRequest',
      args: () => undefined,
      // Ordinal comparison: `Real\\Vip` is not `real\\vip`.
      result: (all, a) => Array.isArray(all) && all.some((g) => (g as { group?: unknown } | null)?.group === a.group),
    },
  }),
};
