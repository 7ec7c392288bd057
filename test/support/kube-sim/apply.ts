// Server-side apply (`application/apply-patch+yaml`), after structured-merge-diff's Updater.Apply:
// merge the configuration into the live object, give the manager exactly the fields it applied,
// prune what it applied last time and no longer does (unless someone else owns it), and refuse
// to change fields other managers own unless forced.
import type { KubeObject } from '../../../shared/kube/types.ts';
import { ApiError } from './errors.ts';
import {
  compare, deepEqual, difference, fieldSetOf, hasDescendantIn, intersection, isObject, itemElement,
  pathToString, removePath, splitPath, union, type FieldSet,
} from './fieldsets.ts';
import { dropEmpty, managerId, newManager, ownableFields, printManager, type Manager, type Managers, type WriteContext } from './managed-fields.ts';
import type { MergeSchema } from './resources.ts';

type Json = unknown;

/** Merges an applied configuration into the live value, list by list as the schema says. */
export function mergeApplied(live: Json, config: Json, schema: MergeSchema, names: string[] = []): Json {
  if (isObject(live) && isObject(config) && !(names.length > 0 && schema.atomicMap(names))) {
    const merged: Record<string, Json> = { ...live };
    for (const [key, value] of Object.entries(config)) {
      merged[key] = key in live ? mergeApplied(live[key], value, schema, [...names, key]) : value;
    }
    return merged;
  }
  if (Array.isArray(live) && Array.isArray(config)) {
    const semantics = schema.list(names);
    if (semantics.type === 'atomic') return config;
    const merged = [...live];
    config.forEach((item, index) => {
      const element = itemElement(item, semantics, index);
      const at = merged.findIndex((existing, n) => itemElement(existing, semantics, n) === element);
      if (at < 0) merged.push(item);
      else if (semantics.type === 'map') merged[at] = mergeApplied(merged[at], item, schema, [...names, '[]']);
    });
    return merged;
  }
  return config;
}

export interface Conflict {
  manager: Manager;
  path: string;
}

export function conflictError(conflicts: Conflict[]): ApiError {
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathToString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathToString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, Conflict[]>();
    for (const c of conflicts) byManager.set(printManager(c.manager), [...(byManager.get(printManager(c.manager)) ?? []), c]);
    const lines = [...byManager.keys()].sort().flatMap((m) => [`conflicts with ${m}:`, ...byManager.get(m)!.map((c) => `- ${pathToString(c.path)}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Conflict', details: { causes }, code: 409 });
}

/** Removes what the manager applied last time and no longer applies, unless another manager owns it. */
function prune(merged: KubeObject, lastSet: FieldSet, newSet: FieldSet, others: FieldSet[], schema: MergeSchema): void {
  const stillOwned = [newSet, ...others];
  const candidates = [...difference(lastSet, union(...stillOwned))]
    .filter((path) => !hasDescendantIn(path, stillOwned))
    .sort((a, b) => splitPath(b).length - splitPath(a).length);
  for (const path of candidates) removePath(merged as unknown as Record<string, Json>, splitPath(path), schema);
}

export interface ApplyResult {
  object: KubeObject;
  managers: Managers;
}

/**
 * Applies `config` as `ctx.manager` over `live` (undefined when the object does not exist yet).
 * Throws a 409 with one cause per conflicting field unless `force`.
 */
export function serverSideApply(live: KubeObject | undefined, config: KubeObject, managers: Managers, ctx: WriteContext, force: boolean): ApplyResult {
  const schema = ctx.type.merge;
  const base: KubeObject = live ?? { apiVersion: config.apiVersion, kind: config.kind, metadata: {} };
  // A copy: pruning below removes fields in place, and `live` is what admission sees as the old
  // object and what stays stored when the apply is refused.
  const merged = mergeApplied(structuredClone(base), config, schema) as KubeObject;
  const me = newManager(ctx, 'Apply', ownableFields(fieldSetOf(config, schema), ctx.type, ctx.subresource));
  const id = managerId(me);
  const lastSet = managers.get(id)?.set ?? new Set<string>();
  const others = [...managers].filter(([otherId]) => otherId !== id).map(([, m]) => m);
  prune(merged, lastSet, me.set, others.map((m) => m.set), schema);

  const diff = compare(base, merged, schema);
  const changed = ownableFields(union(diff.added, diff.modified), ctx.type, ctx.subresource);
  const removed = ownableFields(diff.removed, ctx.type, ctx.subresource);
  const conflicts = others.flatMap((m) => [...intersection(m.set, changed)].sort().map((path) => ({ manager: m, path })));
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);

  const result: Managers = new Map();
  for (const [otherId, m] of managers) {
    if (otherId !== id) result.set(otherId, { ...m, set: difference(m.set, union(changed, removed)) });
  }
  const previous = managers.get(id);
  // An unchanged object and an unchanged set keep the old timestamp: a repeated apply is a no-op.
  const unchanged = live !== undefined && deepEqual(stripVolatile(live), stripVolatile(merged)) && previous && sameSet(previous.set, me.set);
  result.set(id, unchanged ? { ...previous, set: me.set } : me);
  return { object: merged, managers: dropEmpty(result) };
}

const sameSet = (a: FieldSet, b: FieldSet): boolean => a.size === b.size && [...a].every((p) => b.has(p));

function stripVolatile(obj: KubeObject): KubeObject {
  const { managedFields: _ignored, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

