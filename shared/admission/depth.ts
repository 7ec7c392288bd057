// How deep a submitted object nests. Every rule and renderer walks objects recursively, so a
// template nested ~2,000 levels would exhaust the stack: such a request is refused (422, with the
// path where it gets too deep) before any rule sees it. The HTTP layer refuses it earlier still,
// from the raw bytes (scan.ts); this check covers objects that reach a handler another way
// (`furnish admit`, a server that parsed the body itself). The walk recurses at most `max` levels
// and spells out a path only for the value it refuses: no allocation per value.
import { childPath, ROOT_PATH } from '../render/path.ts';

/** Far deeper than any real object (managedFields included), far shallower than the stack allows. */
export const MAX_OBJECT_DEPTH = 100;

/** The keys, innermost first, of the first container `max - depth` levels under `value`, or undefined. */
function deepKeys(value: unknown, depth: number, max: number): (string | number)[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= max) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const keys = deepKeys(value[i], depth + 1, max);
      if (keys) {
        keys.push(i);
        return keys;
      }
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    const keys = deepKeys(record[key], depth + 1, max);
    if (keys) {
      keys.push(key);
      return keys;
    }
  }
  return undefined;
}

/** The path of the first value nested deeper than `max` levels under `root`, or undefined. */
export function tooDeepAt(value: unknown, max = MAX_OBJECT_DEPTH, root = ''): string | undefined {
  const keys = deepKeys(value, 0, max);
  return keys === undefined ? undefined : keys.reduceRight<string>((path, key) => childPath(path, key), root) || ROOT_PATH;
}

/** Why an object is refused for its depth, or undefined. */
export function depthProblem(value: unknown, root: string, max = MAX_OBJECT_DEPTH): string | undefined {
  const at = tooDeepAt(value, max, root);
  return at === undefined ? undefined : `${at}: nested more than ${max} levels deep; refused before validation`;
}
