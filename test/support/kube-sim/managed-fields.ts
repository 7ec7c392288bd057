// metadata.managedFields: who owns which fields. Updates (create, update, patch) give their
// manager the fields they changed; applies (apply.ts) give their manager exactly what they
// applied. The encoding, ordering and conflict wording follow kube-apiserver's fieldmanager.
import type { KubeObject } from '../../../shared/kube/types.ts';
import { compare, difference, fromFieldsV1, onlyUnder, toFieldsV1, union, withoutPrefixes, type FieldSet } from './fieldsets.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: unknown;
  subresource?: string;
}

export interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

export type Managers = Map<string, Manager>;

/** Like BuildManagerIdentifier: time never counts, apiVersion only for updates. */
export function managerId(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([m.manager, m.operation, m.subresource ?? '', m.operation === 'Update' ? m.apiVersion : '']);
}

export function decodeManagers(obj: KubeObject): Managers {
  const managers: Managers = new Map();
  for (const raw of (obj.metadata.managedFields ?? []) as ManagedFieldsEntry[]) {
    if (!raw || !raw.manager) continue;
    const m: Manager = {
      manager: raw.manager, operation: raw.operation, apiVersion: raw.apiVersion, set: fromFieldsV1(raw.fieldsV1),
      ...(raw.time ? { time: raw.time } : {}), ...(raw.subresource ? { subresource: raw.subresource } : {}),
    };
    managers.set(managerId(m), m);
  }
  return managers;
}

/** Sorted like sortEncodedManagedFields: operation, time, manager, apiVersion, subresource. */
export function encodeManagers(managers: Managers): ManagedFieldsEntry[] {
  const entries = [...managers.values()].filter((m) => m.set.size > 0);
  entries.sort((p, q) => compareBy(p.operation, q.operation) || compareBy(seconds(p.time), seconds(q.time))
    || compareBy(p.manager, q.manager) || compareBy(p.apiVersion, q.apiVersion) || compareBy(p.subresource ?? '', q.subresource ?? ''));
  return entries.map((m) => ({
    manager: m.manager,
    operation: m.operation,
    apiVersion: m.apiVersion,
    ...(m.time ? { time: m.time } : {}),
    fieldsType: 'FieldsV1' as const,
    fieldsV1: toFieldsV1(m.set),
    ...(m.subresource ? { subresource: m.subresource } : {}),
  }));
}

const seconds = (time?: string): number => (time ? Math.floor(Date.parse(time) / 1000) : 0);
const compareBy = <T extends string | number>(a: T, b: T): number => (a < b ? -1 : a > b ? 1 : 0);

/** `"furnish"`, `"kubectl-label" using v1`, `"x" with subresource "status" using v1`: printManager. */
export function printManager(m: Manager): string {
  let text = JSON.stringify(m.manager);
  if (m.subresource) text += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') text += ` using ${m.apiVersion}`;
  return text;
}

export function nowTime(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const SERVER_SET_METADATA = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'];
const IGNORED = [['f:apiVersion'], ['f:kind'], ...SERVER_SET_METADATA.map((f) => ['f:metadata', `f:${f}`])];

/**
 * The fields a write may own: never the server-set ones; for kinds with a status subresource the
 * main resource never owns status and the status subresource owns only status.
 */
export function ownableFields(set: FieldSet, type: ResourceType, subresource: string | undefined): FieldSet {
  const kept = withoutPrefixes(set, IGNORED);
  if (subresource === 'status') return onlyUnder(kept, ['f:status']);
  return type.statusSubresource ? withoutPrefixes(kept, [['f:status']]) : kept;
}

export interface WriteContext {
  type: ResourceType;
  manager: string;
  subresource?: string;
}

export function newManager(ctx: WriteContext, operation: 'Apply' | 'Update', set: FieldSet): Manager {
  return {
    manager: ctx.manager, operation, apiVersion: apiVersionOf(ctx.type), set, time: nowTime(),
    ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
  };
}

/**
 * An Update (create, update, any patch but apply): everyone loses the fields it changed or
 * removed, and its manager gains the fields it added or changed. Nothing changed: nothing moves.
 * An existing object without managers (reset with `[{}]` or `[]`) stays without: kube-apiserver's
 * skipNonAppliedManager tracks an Update only on create or once something is tracked.
 */
export function recordUpdate(live: KubeObject | undefined, next: KubeObject, managers: Managers, ctx: WriteContext): Managers {
  if (live && managers.size === 0) return managers;
  const before = live ?? zeroObject(next, ctx.type);
  const diff = compare(before, next, ctx.type.merge);
  const changed = ownableFields(union(diff.added, diff.modified), ctx.type, ctx.subresource);
  const lost = ownableFields(union(diff.added, diff.modified, diff.removed), ctx.type, ctx.subresource);
  const result: Managers = new Map();
  for (const [id, m] of managers) result.set(id, { ...m, set: difference(m.set, lost) });
  if (changed.size > 0) {
    const mine = newManager(ctx, 'Update', changed);
    const previous = result.get(managerId(mine));
    if (previous) mine.set = union(previous.set, changed);
    result.set(managerId(mine), mine);
  }
  return dropEmpty(result);
}

/**
 * What a create is compared with: the zero value of the kind. Built-in kinds are Go structs whose
 * spec and status exist even when empty, so a create never "adds" them; custom objects start empty.
 */
function zeroObject(next: KubeObject, type: ResourceType): KubeObject {
  const zero: KubeObject = { apiVersion: next.apiVersion, kind: next.kind, metadata: {} };
  if (type.merge.typed) Object.assign(zero, { spec: {}, status: {} });
  return zero;
}

export function dropEmpty(managers: Managers): Managers {
  return new Map([...managers].filter(([, m]) => m.set.size > 0));
}

/** Writes the managers onto the object (or removes managedFields when there are none). */
export function setManagedFields(obj: KubeObject, managers: Managers): void {
  const entries = encodeManagers(managers);
  if (entries.length > 0) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

/**
 * The managers an apply starts from: the stored ones; none (reset), every existing field given to
 * `before-first-apply` first, as kube-apiserver does, so that the applier does not own them all.
 */
export function managersForApply(live: KubeObject, ctx: WriteContext): Managers {
  const stored = decodeManagers(live);
  return stored.size > 0 ? stored : recordUpdate(undefined, live, new Map(), { ...ctx, manager: 'before-first-apply' });
}

/**
 * The managers a write starts from: the stored ones, unless the request carried its own
 * managedFields (an explicit `[{}]` or `[]` resets them, as in kube-apiserver).
 */
export function managersForWrite(live: KubeObject | undefined, incoming: KubeObject): Managers {
  const sent = incoming.metadata.managedFields;
  if (sent === undefined || sent === null || !live) return live ? decodeManagers(live) : new Map();
  if (Array.isArray(sent) && sent.every((e) => !e || Object.keys(e as object).length === 0)) return new Map();
  return decodeManagers(incoming);
}
