// The byte scan that refuses a body for its shape before it is parsed (issue 25, finding 11):
// its counts and depth against a reference computed from the parsed value, for generated JSON of
// every kind (strings with quotes, backslashes, escapes and non-ASCII included; whitespace
// anywhere); each shape refused or accepted exactly at the limits, wherever it is in the body,
// fields no decoder knows included; the refusal naming the limit and where the body is too deep;
// and the review's uid read from the bytes so that the refusal can be the request's denial.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { AdmissionError } from '../../../shared/admission/errors.ts';
import { parseAdmissionReview } from '../../../shared/admission/decode.ts';
import { depthProblem, MAX_OBJECT_DEPTH, tooDeepAt } from '../../../shared/admission/depth.ts';
import { bodyProblemMessage, MAX_BODY_DEPTH, MAX_BODY_VALUES, scanBody } from '../../../shared/admission/scan.ts';
import { admissionFixture } from '../../support/fixtures.ts';

/** Reference: every JSON value (keys not counted), and the deepest nesting of containers. */
function reference(value: unknown): { values: number; depth: number } {
  if (typeof value !== 'object' || value === null) return { values: 1, depth: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  let values = 1;
  let depth = 0;
  for (const child of children) {
    const r = reference(child);
    values += r.values;
    depth = Math.max(depth, r.depth);
  }
  return { values, depth: depth + 1 };
}

const NO_LIMITS = { maxDepth: 1_000, maxValues: Number.MAX_SAFE_INTEGER };
const bytes = (text: string) => Buffer.from(text);

/** Nested `levels` deep, as objects or arrays, around a string. */
function nested(levels: number, arrays = false): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = arrays ? [v] : { a: v };
  return v;
}

function review(): { request: Record<string, unknown> & { uid: string; object: Record<string, unknown>; oldObject: Record<string, unknown> } } {
  const r = structuredClone(admissionFixture('030-guard-UPDATE-configmaps-furnished-admin').review) as unknown as ReturnType<typeof review>;
  r.request.oldObject ??= structuredClone(r.request.object);
  return r;
}

function refusal(body: string): AdmissionError {
  try {
    parseAdmissionReview(body);
  } catch (e) {
    if (e instanceof AdmissionError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('the scan agrees with the parsed value', () => {
  // Strings of every kind: quotes, backslashes, control characters, lone surrogates' escapes, non-ASCII.
  const json = fc.jsonValue({ maxDepth: 6, stringUnit: fc.oneof(fc.constantFrom('"', '\\', '\\"', '{', '}', '[', ']', ',', ':', '\u0000', '\n', 'é', '😀'), fc.string({ unit: 'binary', maxLength: 1 })) });

  it('counts every value and measures the depth of any JSON, compact or indented', () => {
    fc.assert(
      fc.property(json, fc.constantFrom(undefined, 1, '\t'), (value, indent) => {
        const scan = scanBody(bytes(JSON.stringify(value, null, indent)), NO_LIMITS);
        const ref = reference(value);
        expect(scan.problem).toBeUndefined();
        expect(scan.values).toBe(ref.values);
        expect(scan.depth).toBe(ref.depth);
      }),
      { numRuns: 1_000, seed: 25_11 },
    );
  });

  it('finds the same too-deep path as the walk over the parsed object, for objects and arrays', () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 95, max: 140 }), fc.boolean(), fc.constantFrom('object', 'oldObject'), (filler, levels, arrays, at) => {
        const r = review();
        r.request[at] = { ...r.request[at], spec: { filler, deep: nested(levels, arrays) } };
        const scan = scanBody(bytes(JSON.stringify(r)));
        const expected = tooDeepAt(r.request[at], MAX_OBJECT_DEPTH, at === 'object' ? '' : 'oldObject');
        if (expected === undefined) return expect(scan.problem).toBeUndefined();
        expect(scan.problem).toEqual({ kind: 'too-deep', path: expected, within: at, limit: MAX_OBJECT_DEPTH });
      }),
      { numRuns: 300, seed: 25_12 },
    );
  });
});

describe('each shape refused or accepted at the limits, wherever it is', () => {
  const places: [string, (r: ReturnType<typeof review>, v: unknown) => void, number][] = [
    // [where, put, how many levels the place itself is under the body's root]
    ['object', (r, v) => (r.request.object.deep = v), 3],
    ['oldObject', (r, v) => (r.request.oldObject.deep = v), 3],
    ['a field of the request no decoder knows', (r, v) => (r.request.unknown = v), 2],
    ['a field of the review no decoder knows', (r, v) => ((r as Record<string, unknown>).unknown = v), 1],
  ];
  for (const [where, put, under] of places) {
    for (const arrays of [false, true]) {
      it(`${arrays ? 'arrays' : 'objects'} in ${where}: ${MAX_BODY_DEPTH} levels in the body accepted, one more refused with a denial naming the limit`, () => {
        const atLimit = review();
        put(atLimit, nested(MAX_BODY_DEPTH - under, arrays));
        expect(parseAdmissionReview(JSON.stringify(atLimit)).request.uid).toBe(atLimit.request.uid);

        const over = review();
        put(over, nested(MAX_BODY_DEPTH - under + 1, arrays));
        const e = refusal(JSON.stringify(over));
        expect(e).toMatchObject({ code: 'too-deep', status: 422, uid: over.request.uid });
        const inObject = under === 3;
        expect(e.message).toMatch(inObject ? new RegExp(`^(oldObject\\.)?deep(\\.a|\\[0\\])+: nested more than ${MAX_OBJECT_DEPTH} levels deep; refused before parsing$`) : new RegExp(`^(request\\.)?unknown(\\.a|\\[0\\])+: nested more than ${MAX_BODY_DEPTH} levels deep in the AdmissionReview; refused before parsing$`));
      });
    }
  }

  it('the depth in the object is the one the rules are written against: the same object passes both checks, or fails both', () => {
    for (const levels of [MAX_OBJECT_DEPTH, MAX_OBJECT_DEPTH + 1]) {
      const r = review();
      r.request.object = nested(levels) as Record<string, unknown>;
      const scanned = scanBody(bytes(JSON.stringify(r))).problem;
      expect(scanned === undefined).toBe(depthProblem(r.request.object, '') === undefined);
    }
  });

  it(`${MAX_BODY_VALUES} values accepted, one more refused (object, old object or an unknown field), the denial naming the limit`, () => {
    const base = review();
    const own = scanBody(bytes(JSON.stringify(base))).values;
    for (const put of [(r: typeof base, v: unknown[]) => (r.request.object.items = v), (r: typeof base, v: unknown[]) => (r.request.oldObject.items = v), (r: typeof base, v: unknown[]) => (r.request.unknown = v)]) {
      const atLimit = review();
      put(atLimit, new Array<number>(MAX_BODY_VALUES - own - 1).fill(0));
      expect(scanBody(bytes(JSON.stringify(atLimit))).values).toBe(MAX_BODY_VALUES);
      expect(() => parseAdmissionReview(JSON.stringify(atLimit))).not.toThrow();

      const over = review();
      put(over, new Array<object>(MAX_BODY_VALUES - own).fill({}));
      const e = refusal(JSON.stringify(over));
      expect(e).toMatchObject({ code: 'too-many-values', status: 413, uid: over.request.uid });
      expect(e.message).toBe(`request body has more than ${MAX_BODY_VALUES} JSON values (objects, arrays, strings, numbers, booleans, nulls); refused before parsing`);
    }
  });

  it('long strings count as one value each, whatever they hold', () => {
    const r = review();
    r.request.object.data = { big: `"\\{[${'x'.repeat(1 << 20)}]}\\"` };
    const scan = scanBody(bytes(JSON.stringify(r)));
    expect(scan.problem).toBeUndefined();
    expect(scan.values).toBe(reference(r).values);
  });
});

describe('the uid, read from the bytes', () => {
  it('is found wherever request.uid is, escapes decoded; a body without one is refused as a plain 4xx', () => {
    const deep = JSON.stringify(nested(MAX_BODY_DEPTH + 5, true));
    const withUid = refusal(`{"kind":"AdmissionReview","request":{"object":{"x":${deep}},"uid":"u-\\u0031"}}`);
    expect(withUid).toMatchObject({ code: 'too-deep', uid: 'u-1' });
    // A key "uid" elsewhere (deeper, or of the review) is not the request's.
    const elsewhere = refusal(`{"uid":"top","request":{"object":{"uid":"inner","x":${deep}},"name":"uid"}}`);
    expect(elsewhere.uid).toBeUndefined();
    expect(elsewhere.status).toBe(422);
  });

  it('a quote escaped in a key or value never ends the string early', () => {
    const scan = scanBody(bytes('{"request":{"a\\"uid":"x\\\\","uid":"the-\\"uid"}}'), NO_LIMITS);
    expect(scan.values).toBe(4);
    const [start, end] = scan.uid!;
    expect(Buffer.from('{"request":{"a\\"uid":"x\\\\","uid":"the-\\"uid"}}').toString('utf8', start, end)).toBe('the-\\"uid');
  });
});

it('every refusal message names its limit', () => {
  expect(bodyProblemMessage({ kind: 'too-many-values', limit: 7 })).toMatch(/more than 7 JSON values/);
  expect(bodyProblemMessage({ kind: 'too-deep', path: 'spec.a', within: 'object', limit: 100 })).toBe('spec.a: nested more than 100 levels deep; refused before parsing');
});
