// Identities of Kubernetes objects: the render key `group/Kind/namespace/name` and the ApplySet
// group-kind `Kind.group`. Pure string arithmetic, shared by the planner and the executors.
import type { KubeObject } from '../kube/types.ts';
import { formatGroupKind, groupOf, objectKey, type GroupKind } from '../render/index.ts';

export interface ObjectRef {
  key: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  /** Template label on the live object. */
  template: string;
}

/** Same format as RenderedObject.key: `group/Kind/namespace/name`, core group empty. */
export function keyOf(obj: KubeObject): string {
  return objectKey({ group: groupOf(obj.apiVersion), kind: obj.kind }, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
}

/** Inverse of keyOf. */
export function parseKey(key: string): { group: string; kind: string; namespace: string; name: string } {
  const [group = '', kind = '', namespace = '', ...name] = key.split('/');
  return { group, kind, namespace, name: name.join('/') };
}

/** ApplySet's spelling of a group-kind: `Kind.group`, or `Kind` for the core group. */
export function groupKindOf(apiVersion: string, kind: string): string {
  return formatGroupKind({ group: groupOf(apiVersion), kind });
}

/** Inverse of formatGroupKind. */
export function parseGroupKind(gk: string): GroupKind {
  const dot = gk.indexOf('.');
  return dot < 0 ? { group: '', kind: gk } : { group: gk.slice(dot + 1), kind: gk.slice(0, dot) };
}

export function parseGroupKinds(annotation: string | undefined): string[] {
  if (!annotation) return [];
  return [...new Set(annotation.split(',').map((s) => s.trim()).filter((s) => s !== ''))].sort();
}

export function refOf(obj: KubeObject, templateLabel: string): ObjectRef {
  return {
    key: keyOf(obj),
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name ?? '',
    template: obj.metadata.labels?.[templateLabel] ?? '',
  };
}

/**
 * True when every field of `want` is present in `have` with the same value. Objects are compared
 * key by key (extra keys in `have` are fine: defaults, other managers' fields), arrays element by
 * element with equal length, scalars strictly.
 */
export function isSubset(want: unknown, have: unknown): boolean {
  if (want === have) return true;
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return false;
    return want.every((w, i) => isSubset(w, have[i]));
  }
  if (want && typeof want === 'object') {
    if (!have || typeof have !== 'object' || Array.isArray(have)) return false;
    const h = have as Record<string, unknown>;
    return Object.entries(want as Record<string, unknown>).every(([k, v]) => (v === undefined ? true : isSubset(v, h[k])));
  }
  return false;
}

export function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

export function splitList(value: string | undefined): string[] {
  return value ? sortedUnique(value.split(',').map((s) => s.trim()).filter((s) => s !== '')) : [];
}

/** `Kind.group` of a render key. */
export function groupKindOfKey(key: string): string {
  const { group, kind } = parseKey(key);
  return formatGroupKind({ group, kind });
}
