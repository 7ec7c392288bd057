// The shape of a request body, read byte by byte before it is parsed. What JSON.parse costs in
// memory follows the number of values and how deep they nest, not the bytes: 3 MiB of `[{},{},…]`
// grows the heap by ~60 MB, 3 MiB of `[[[…]]]` nests 1.5 million levels. One pass over the raw
// bytes counts the values and tracks the depth, with no allocation per value (the path of a
// too-deep value is kept in fixed-size arrays and spelled out only on refusal), so a body over
// either limit is refused before it is parsed, wherever in the body it is: fields no decoder knows
// count like the object's. It does not check that the body is JSON (JSON.parse does, next); it
// only needs to skip strings correctly, escapes included.
import { childPath, ROOT_PATH } from '../render/path.ts';
import { MAX_OBJECT_DEPTH } from './depth.ts';

/** The object sits two levels under the review (review → request → object). */
const OBJECT_LEVEL = 2;

/** How deep a body nests, counting the review itself: the object's limit plus its two envelopes. */
export const MAX_BODY_DEPTH = MAX_OBJECT_DEPTH + OBJECT_LEVEL;

/**
 * The most JSON values (objects, arrays, strings, numbers, booleans, nulls; keys not counted) in
 * one body. A review carries an object and its old version, each at most 1.5 MiB in etcd: a
 * NamespaceTemplate of 50 objects has ~5,000, a large Pod ~1,000. The limit bounds what parsing
 * a body of any shape costs (test/bench/webhooks-memory.bench.ts).
 */
export const MAX_BODY_VALUES = 100_000;

export interface BodyLimits {
  maxDepth: number;
  maxValues: number;
}

export const BODY_LIMITS: BodyLimits = { maxDepth: MAX_BODY_DEPTH, maxValues: MAX_BODY_VALUES };

export type BodyProblem =
  | { kind: 'too-deep'; /** Where the first too-deep value is, as `path` in the notation of field errors. */ path: string; /** 'object', 'oldObject' or 'review': what `path` is relative to. */ within: 'object' | 'oldObject' | 'review'; limit: number }
  | { kind: 'too-many-values'; limit: number };

export interface BodyScan {
  /** Values counted (up to the first problem). */
  values: number;
  /** The deepest nesting seen, counting the review itself as 1. */
  depth: number;
  /** request.uid when it is a string, undecoded bytes [start, end) of the body. */
  uid?: [number, number];
  problem?: BodyProblem;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** First bytes of a number, true, false or null. */
function startsScalar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x74 || c === 0x66 || c === 0x6e;
}

/** Whether c belongs to a number, true, false or null after its first byte. */
function continuesScalar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c === 0x2b || c === 0x2d || c === 0x2e || c === 0x45;
}

/** The index just after the string whose opening quote is at `at` (bytes.length when unterminated). */
function skipString(bytes: Uint8Array, at: number): number {
  let i = at + 1;
  const end = bytes.length;
  while (i < end) {
    const c = bytes[i]!;
    if (c === QUOTE) return i + 1;
    i += c === BACKSLASH ? 2 : 1;
  }
  return end;
}

function bytesEqual(bytes: Uint8Array, start: number, end: number, ascii: string): boolean {
  if (end - start !== ascii.length) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[start + i] !== ascii.charCodeAt(i)) return false;
  return true;
}

/** Per open container (index 1 is the body's root): array or object, the current key's bytes or element index. */
class Levels {
  readonly isArray: Uint8Array;
  readonly keyStart: Int32Array;
  readonly keyEnd: Int32Array;
  readonly index: Int32Array;

  constructor(size: number) {
    this.isArray = new Uint8Array(size);
    this.keyStart = new Int32Array(size);
    this.keyEnd = new Int32Array(size);
    this.index = new Int32Array(size);
  }

  /** The key (or index) under which level `level` holds its current child. */
  keyAt(bytes: Uint8Array, level: number): string | number {
    if (this.isArray[level]) return this.index[level]!;
    const raw = Buffer.from(bytes.buffer, bytes.byteOffset + this.keyStart[level]!, this.keyEnd[level]! - this.keyStart[level]!).toString('utf8');
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw;
    }
  }
}

/** Where the container opened at `depth` sits: relative to the object or old object when inside one. */
function tooDeep(bytes: Uint8Array, levels: Levels, depth: number, limit: number): BodyProblem {
  const keys: (string | number)[] = [];
  for (let level = 1; level < depth; level++) keys.push(levels.keyAt(bytes, level));
  const [first, second] = keys;
  const inside = first === 'request' && (second === 'object' || second === 'oldObject') ? second : undefined;
  const rest = inside ? keys.slice(OBJECT_LEVEL) : keys;
  // Paths as depth.ts spells them: the object's from its root, the old object's under `oldObject`.
  const path = rest.reduce<string>((base, key) => childPath(base, key), inside === 'oldObject' ? 'oldObject' : '') || ROOT_PATH;
  // Inside the object, counted as the object's own depth: the limit the rules are written against.
  return { kind: 'too-deep', path, within: inside ?? 'review', limit: inside ? limit - OBJECT_LEVEL : limit };
}

/**
 * Counts and measures a body without parsing it: O(bytes), no allocation per value. Stops at the
 * first problem, except that it goes on looking for request.uid (kube-apiserver sends it first).
 */
export function scanBody(bytes: Uint8Array, limits: BodyLimits = BODY_LIMITS): BodyScan {
  const levels = new Levels(limits.maxDepth + 2);
  const scan: BodyScan = { values: 0, depth: 0 };
  let depth = 0;
  // In an object, after `{` or `,`: the next string is a key.
  let expectKey = false;
  // Inside `request` (level 2, under key "request" of the root).
  let inRequest = false;
  const end = bytes.length;
  let i = 0;
  while (i < end) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      const after = skipString(bytes, i);
      if (expectKey) {
        if (depth <= limits.maxDepth) {
          levels.keyStart[depth] = i + 1;
          levels.keyEnd[depth] = after - 1;
        }
        expectKey = false;
      } else {
        scan.values += 1;
        if (inRequest && depth === 2 && scan.uid === undefined && bytesEqual(bytes, levels.keyStart[2]!, levels.keyEnd[2]!, 'uid')) scan.uid = [i + 1, after - 1];
      }
      i = after;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      scan.values += 1;
      depth += 1;
      if (depth > scan.depth) scan.depth = depth;
      if (depth > limits.maxDepth && !scan.problem) scan.problem = tooDeep(bytes, levels, depth, limits.maxDepth);
      if (depth <= limits.maxDepth) {
        levels.isArray[depth] = c === OPEN_ARRAY ? 1 : 0;
        levels.index[depth] = 0;
      }
      if (depth === 2) inRequest = c === OPEN_OBJECT && !levels.isArray[1] && bytesEqual(bytes, levels.keyStart[1]!, levels.keyEnd[1]!, 'request');
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 2) inRequest = false;
      if (depth > 0) depth -= 1;
      expectKey = false;
    } else if (c === COMMA) {
      if (depth <= limits.maxDepth && levels.isArray[depth]) levels.index[depth]! += 1;
      else expectKey = depth > 0;
    } else if (startsScalar(c)) {
      scan.values += 1;
      i += 1;
      while (i < end && continuesScalar(bytes[i]!)) i += 1;
      continue;
    }
    if (scan.values > limits.maxValues && !scan.problem) scan.problem = { kind: 'too-many-values', limit: limits.maxValues };
    // Past a problem only request.uid is still of interest (kube-apiserver sends it first).
    if (scan.problem && scan.uid !== undefined) break;
    i += 1;
  }
  if (scan.values > limits.maxValues && !scan.problem) scan.problem = { kind: 'too-many-values', limit: limits.maxValues };
  return scan;
}

/** The refusal of a body with a problem, naming the limit. */
export function bodyProblemMessage(problem: BodyProblem): string {
  if (problem.kind === 'too-many-values') {
    return `request body has more than ${problem.limit} JSON values (objects, arrays, strings, numbers, booleans, nulls); refused before parsing`;
  }
  const where = problem.within === 'review' ? ' in the AdmissionReview' : '';
  return `${problem.path}: nested more than ${problem.limit} levels deep${where}; refused before parsing`;
}
