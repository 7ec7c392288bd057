// How deep a submitted object nests. Every rule and renderer walks objects recursively, so a
// template nested ~2,000 levels would exhaust the stack: such a request is refused (422, with the
// path where it gets too deep) before any rule sees it. Walked with an explicit stack: this check
// itself cannot overflow.
import { childPath, ROOT_PATH } from '../render/path.ts';

/** Far deeper than any real object (managedFields included), far shallower than the stack allows. */
export const MAX_OBJECT_DEPTH = 100;

/** The path of the first value nested deeper than `max` levels under `root`, or undefined. */
export function tooDeepAt(value: unknown, max = MAX_OBJECT_DEPTH, root = ''): string | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node.value !== 'object' || node.value === null) continue;
    if (node.depth >= max) return node.path || ROOT_PATH;
    const entries: [string | number, unknown][] = Array.isArray(node.value) ? node.value.map((v, i) => [i, v]) : Object.entries(node.value);
    for (const [key, child] of entries) stack.push({ value: child, path: childPath(node.path, key), depth: node.depth + 1 });
  }
  return undefined;
}

/** Why an object is refused for its depth, or undefined. */
export function depthProblem(value: unknown, root: string, max = MAX_OBJECT_DEPTH): string | undefined {
  const at = tooDeepAt(value, max, root);
  return at === undefined ? undefined : `${at}: nested more than ${max} levels deep; refused before validation`;
}
