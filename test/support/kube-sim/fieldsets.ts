// Field sets in the structured-merge-diff sense: the set of paths an object (or a manager) owns,
// how two objects differ in those terms, and the FieldsV1 JSON of managedFields.
//
// A path is a list of elements written as in FieldsV1: `f:name` (struct field or map key),
// `k:{"name":"x"}` (item of a keyed list), `v:"x"` (item of a set), `i:0` (item of an atomic list's
// parent walk, rarely seen). Sets hold paths joined by NUL.
import type { ListSemantics, MergeSchema } from './resources.ts';

export type FieldSet = Set<string>;
const SEP = '\u0000';

export const joinPath = (path: string[]): string => path.join(SEP);
export const splitPath = (key: string): string[] => (key === '' ? [] : key.split(SEP));

type Json = unknown;
type JsonObject = Record<string, Json>;

export const isObject = (v: Json): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The element naming a list item: its key fields for keyed lists, its value for sets. */
export function itemElement(item: Json, semantics: ListSemantics, index: number): string {
  if (semantics.type === 'map' && isObject(item)) {
    const keys: JsonObject = {};
    for (const k of [...semantics.keys].sort()) {
      const value = item[k] ?? semantics.keyDefaults?.[k];
      if (value !== undefined) keys[k] = value;
    }
    return `k:${JSON.stringify(keys)}`;
  }
  if (semantics.type === 'set') return `v:${JSON.stringify(item)}`;
  return `i:${index}`;
}

/**
 * ToFieldSet: what an applied configuration owns. Leaves, atomic values, list items and empty maps
 * (`resources: {}`, as kube-apiserver records them) do; a map with fields owns only them.
 */
export function fieldSetOf(value: Json, schema: MergeSchema): FieldSet {
  const set: FieldSet = new Set();
  const walk = (v: Json, path: string[], names: string[]): void => {
    if (isObject(v)) {
      if (path.length > 0 && (schema.atomicMap(names) || Object.keys(v).length === 0)) {
        set.add(joinPath(path));
        return;
      }
      for (const [key, child] of Object.entries(v)) walk(child, [...path, `f:${key}`], [...names, key]);
      return;
    }
    if (Array.isArray(v)) {
      const semantics = schema.list(names);
      if (semantics.type === 'atomic') {
        set.add(joinPath(path));
        return;
      }
      v.forEach((item, index) => {
        const itemPath = [...path, itemElement(item, semantics, index)];
        set.add(joinPath(itemPath));
        if (semantics.type === 'map') walk(item, itemPath, [...names, '[]']);
      });
      return;
    }
    set.add(joinPath(path));
  };
  walk(value, [], []);
  return set;
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

const isEmpty = (v: Json): boolean => v === undefined || v === null
  || (isObject(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0);

export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Items of a non-atomic list by their path element. */
function itemsByElement(list: Json[], semantics: ListSemantics): Map<string, Json> {
  return new Map(list.map((item, index) => [itemElement(item, semantics, index), item]));
}

/** Like structured-merge-diff's Compare: which paths appear, change or disappear from lhs to rhs. */
export function compare(lhs: Json, rhs: Json, schema: MergeSchema): Comparison {
  const result: Comparison = { added: new Set(), modified: new Set(), removed: new Set() };
  const visit = (l: Json, r: Json, path: string[], names: string[]): void => {
    const key = joinPath(path);
    const leaf = (): void => {
      if (schema.typed && isEmpty(l) && isEmpty(r)) return;
      if (l === undefined) result.added.add(key);
      else if (r === undefined) result.removed.add(key);
      else if (!deepEqual(l, r)) result.modified.add(key);
    };
    const mapLike = isObject(l) || isObject(r);
    const listLike = Array.isArray(l) || Array.isArray(r);
    if (mapLike && !listLike && !(isEmpty(l) && isEmpty(r)) && !(path.length > 0 && schema.atomicMap(names))
        && (l === undefined || isObject(l)) && (r === undefined || isObject(r))) {
      const lo = (l ?? {}) as JsonObject;
      const ro = (r ?? {}) as JsonObject;
      for (const k of new Set([...Object.keys(lo), ...Object.keys(ro)])) visit(lo[k], ro[k], [...path, `f:${k}`], [...names, k]);
      if (path.length > 0) mark();
      return;
    }
    const semantics = listLike ? schema.list(names) : undefined;
    if (semantics && semantics.type !== 'atomic' && !(isEmpty(l) && isEmpty(r))
        && (l === undefined || Array.isArray(l)) && (r === undefined || Array.isArray(r))) {
      const li = itemsByElement((l ?? []) as Json[], semantics);
      const ri = itemsByElement((r ?? []) as Json[], semantics);
      for (const element of new Set([...li.keys(), ...ri.keys()])) {
        const itemPath = [...path, element];
        if (semantics.type === 'map') visit(li.get(element), ri.get(element), itemPath, [...names, '[]']);
        else if (!li.has(element)) result.added.add(joinPath(itemPath));
        else if (!ri.has(element)) result.removed.add(joinPath(itemPath));
      }
      mark();
      return;
    }
    leaf();
    function mark(): void {
      if (l === undefined) result.added.add(key);
      else if (r === undefined) result.removed.add(key);
    }
  };
  visit(lhs, rhs, [], []);
  return result;
}

// --- set algebra ---------------------------------------------------------------------------

export const union = (...sets: FieldSet[]): FieldSet => new Set(sets.flatMap((s) => [...s]));
export const difference = (a: FieldSet, b: FieldSet): FieldSet => new Set([...a].filter((p) => !b.has(p)));
export const intersection = (a: FieldSet, b: FieldSet): FieldSet => new Set([...a].filter((p) => b.has(p)));

/** Keeps the paths that do not start with any of the given prefixes (as paths of elements). */
export function withoutPrefixes(set: FieldSet, prefixes: string[][]): FieldSet {
  const keys = prefixes.map(joinPath);
  return new Set([...set].filter((p) => !keys.some((k) => p === k || p.startsWith(k + SEP))));
}

/** Keeps only the paths under one prefix (status writes own only status). */
export function onlyUnder(set: FieldSet, prefix: string[]): FieldSet {
  const key = joinPath(prefix);
  return new Set([...set].filter((p) => p === key || p.startsWith(key + SEP)));
}

export function hasDescendantIn(path: string, sets: FieldSet[]): boolean {
  const prefix = path + SEP;
  return sets.some((s) => [...s].some((p) => p.startsWith(prefix)));
}

// --- FieldsV1 ------------------------------------------------------------------------------

type Tree = { [element: string]: Tree };

export function toFieldsV1(set: FieldSet): Tree {
  const root: Tree = {};
  for (const key of set) {
    let node = root;
    for (const element of splitPath(key)) node = node[element] ??= {};
    if (Object.keys(node).length > 0) node['.'] = {};
    else node['.'] ??= {};
  }
  return normalise(root) ?? {};
}

/** `.` marks a member that also has children; a bare member is `{}`. Keys sorted, `.` first. */
function normalise(node: Tree): Tree | undefined {
  const children = Object.keys(node).filter((k) => k !== '.').sort();
  const out: Tree = {};
  if (children.length > 0 && node['.']) out['.'] = {};
  for (const child of children) out[child] = normalise(node[child]!) ?? {};
  return out;
}

export function fromFieldsV1(tree: unknown): FieldSet {
  const set: FieldSet = new Set();
  const walk = (node: unknown, path: string[]): void => {
    if (!isObject(node)) return;
    const children = Object.keys(node).filter((k) => k !== '.');
    if (path.length > 0 && (children.length === 0 || '.' in node)) set.add(joinPath(path));
    for (const child of children) walk(node[child], [...path, child]);
  };
  walk(tree, []);
  return set;
}

/** `.data.a`, `.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`: how conflicts are printed. */
export function pathToString(key: string): string {
  return splitPath(key).map((element) => {
    const body = element.slice(2);
    if (element.startsWith('f:')) return `.${body}`;
    if (element.startsWith('v:')) return `[=${body}]`;
    if (element.startsWith('i:')) return `[${body}]`;
    const keys = JSON.parse(body) as JsonObject;
    return `[${Object.entries(keys).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
  }).join('');
}

// --- removing paths from an object (pruning fields a manager stopped applying) --------------

/** Removes the value at `path` from `root` (mutating); returns true when something was removed. */
export function removePath(root: JsonObject, path: string[], schema: MergeSchema): boolean {
  let parent: Json = root;
  const names: string[] = [];
  const chain: Array<{ container: Json; element: string }> = [];
  for (let i = 0; i < path.length; i += 1) {
    const element = path[i]!;
    const last = i === path.length - 1;
    if (element.startsWith('f:') && isObject(parent)) {
      const field = element.slice(2);
      if (!(field in parent)) return false;
      if (last) {
        Reflect.deleteProperty(parent, field);
        pruneEmptyParents(chain);
        return true;
      }
      chain.push({ container: parent, element });
      parent = parent[field];
      names.push(field);
      continue;
    }
    if (!Array.isArray(parent)) return false;
    const semantics = schema.list(names);
    const index = parent.findIndex((item, n) => itemElement(item, semantics, n) === element);
    if (index < 0) return false;
    if (last) {
      parent.splice(index, 1);
      pruneEmptyParents(chain);
      return true;
    }
    chain.push({ container: parent, element });
    parent = parent[index];
    names.push('[]');
  }
  return false;
}

/** After a removal, maps left empty disappear too (built-in kinds omit empty maps). */
function pruneEmptyParents(chain: Array<{ container: Json; element: string }>): void {
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    const { container, element } = chain[i]!;
    if (!isObject(container) || !element.startsWith('f:')) return;
    const field = element.slice(2);
    const value = container[field];
    if (!isObject(value) || Object.keys(value).length > 0) return;
    Reflect.deleteProperty(container, field);
  }
}
