// metav1.LabelSelector with the semantics of k8s.io/apimachinery/pkg/labels: compile once (and
// refuse what the API server would refuse), then match many label sets cheaply.
import type { StringMap } from '../kube/types.ts';
import { isRecord, unknownFieldProblems } from './json.ts';
import { labelValueErrors, qualifiedNameErrors } from './names.ts';
import { childPath } from './path.ts';
import type { ValidationProblem } from './types.ts';

export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
export type SelectorOperator = (typeof SELECTOR_OPERATORS)[number];

/** One requirement; `Equals` comes from `matchLabels` and prints as `key=value`. */
export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator | 'Equals';
  /** Sorted, for a stable string form. */
  readonly values: readonly string[];
}

export interface CompiledSelector {
  /** Sorted by key; all must hold. Empty: the selector selects everything. */
  readonly requirements: readonly Requirement[];
  /** The `?labelSelector=` form, computed once. */
  readonly text: string;
}

export type ParsedSelector = { ok: true; selector: CompiledSelector } | { ok: false; problems: ValidationProblem[] };

const SELECTOR_FIELDS = new Set(['matchLabels', 'matchExpressions']);
const REQUIREMENT_FIELDS = new Set(['key', 'operator', 'values']);

/** Selects every namespace: `{}`, `null` and an absent selector. */
export const EVERYTHING: CompiledSelector = Object.freeze({ requirements: Object.freeze([]), text: '' });

function isOperator(value: unknown): value is SelectorOperator {
  return (SELECTOR_OPERATORS as readonly unknown[]).includes(value);
}

function keyProblems(key: string, path: string): ValidationProblem[] {
  return qualifiedNameErrors(key).map((message) => ({ path, message: `invalid label key "${key}": ${message}` }));
}

function valueProblems(value: unknown, path: string): ValidationProblem[] {
  if (typeof value !== 'string') return [{ path, message: 'must be a string' }];
  return labelValueErrors(value).map((message) => ({ path, message: `invalid label value "${value}": ${message}` }));
}

function compileMatchLabels(matchLabels: unknown, path: string, out: Requirement[]): ValidationProblem[] {
  if (matchLabels === undefined || matchLabels === null) return [];
  if (!isRecord(matchLabels)) return [{ path, message: 'must be an object of label key to value' }];
  const problems: ValidationProblem[] = [];
  for (const [key, value] of Object.entries(matchLabels)) {
    const at = childPath(path, key);
    const found = [...keyProblems(key, at), ...valueProblems(value, at)];
    problems.push(...found);
    if (found.length === 0) out.push({ key, operator: 'Equals', values: [value as string] });
  }
  return problems;
}

/** The rules of metav1 ValidateLabelSelectorRequirement, one message each. */
function requirementShapeProblems(operator: unknown, values: unknown, path: string): ValidationProblem[] {
  const at = (field: string): string => childPath(path, field);
  if (typeof operator !== 'string' || operator === '') return [{ path: at('operator'), message: 'Required value' }];
  if (!isOperator(operator)) {
    return [{ path: at('operator'), message: `Unsupported value: "${operator}": supported values: ${SELECTOR_OPERATORS.map((o) => `"${o}"`).join(', ')}` }];
  }
  if (values !== undefined && values !== null && !Array.isArray(values)) return [{ path: at('values'), message: 'must be a list of strings' }];
  const count = Array.isArray(values) ? values.length : 0;
  if ((operator === 'In' || operator === 'NotIn') && count === 0) {
    return [{ path: at('values'), message: "must be specified when `operator` is 'In' or 'NotIn'" }];
  }
  if ((operator === 'Exists' || operator === 'DoesNotExist') && count > 0) {
    return [{ path: at('values'), message: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'" }];
  }
  return ((values as unknown[] | undefined) ?? []).flatMap((v, i) => valueProblems(v, childPath(at('values'), i)));
}

function compileRequirement(expr: unknown, path: string, out: Requirement[]): ValidationProblem[] {
  if (!isRecord(expr)) return [{ path, message: 'must be an object with key, operator and values' }];
  const problems = unknownFieldProblems(expr, REQUIREMENT_FIELDS, path);
  const { key, operator, values } = expr;
  if (typeof key !== 'string' || key === '') problems.push({ path: childPath(path, 'key'), message: 'Required value' });
  else problems.push(...keyProblems(key, childPath(path, 'key')));
  problems.push(...requirementShapeProblems(operator, values, path));
  if (problems.length === 0) {
    const sorted = [...((values as string[] | undefined) ?? [])].sort();
    out.push({ key: key as string, operator: operator as SelectorOperator, values: sorted });
  }
  return problems;
}

function compileMatchExpressions(exprs: unknown, path: string, out: Requirement[]): ValidationProblem[] {
  if (exprs === undefined || exprs === null) return [];
  if (!Array.isArray(exprs)) return [{ path, message: 'must be a list of requirements' }];
  return exprs.flatMap((expr, i) => compileRequirement(expr, childPath(path, i), out));
}

function requirementToString(r: Requirement): string {
  switch (r.operator) {
    case 'Equals':
      return `${r.key}=${r.values[0]}`;
    case 'In':
      return `${r.key} in (${r.values.join(',')})`;
    case 'NotIn':
      return `${r.key} notin (${r.values.join(',')})`;
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
  }
}

function byKey(a: Requirement, b: Requirement): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Compiles a metav1.LabelSelector. `null`, `undefined` and `{}` select everything (as in a
 * NamespaceTemplate, where an absent selector means `{}`). Problems carry paths under `path`.
 */
export function parseSelector(sel: unknown, path = 'labelSelector'): ParsedSelector {
  if (sel === null || sel === undefined) return { ok: true, selector: EVERYTHING };
  if (!isRecord(sel)) return { ok: false, problems: [{ path, message: 'must be an object (metav1.LabelSelector)' }] };
  const requirements: Requirement[] = [];
  const problems = [
    ...unknownFieldProblems(sel, SELECTOR_FIELDS, path),
    ...compileMatchLabels(sel.matchLabels, childPath(path, 'matchLabels'), requirements),
    ...compileMatchExpressions(sel.matchExpressions, childPath(path, 'matchExpressions'), requirements),
  ];
  if (problems.length > 0) return { ok: false, problems };
  if (requirements.length === 0) return { ok: true, selector: EVERYTHING };
  requirements.sort(byKey);
  const selector = { requirements, text: requirements.map(requirementToString).join(',') };
  return { ok: true, selector };
}

function requirementMatches(r: Requirement, labels: StringMap): boolean {
  // Own keys only: a label set parsed from JSON must not "have" `constructor` or `toString`.
  const present = Object.hasOwn(labels, r.key);
  switch (r.operator) {
    case 'Equals':
      return present && labels[r.key] === r.values[0];
    case 'In':
      return present && r.values.includes(labels[r.key]!);
    case 'NotIn':
      return !present || !r.values.includes(labels[r.key]!);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
  }
}

/** True when every requirement holds; a missing key satisfies only NotIn and DoesNotExist. */
export function matchesSelector(selector: CompiledSelector, labels: StringMap): boolean {
  for (const r of selector.requirements) if (!requirementMatches(r, labels)) return false;
  return true;
}

/** The string form the API takes in `?labelSelector=` (`a=b,c in (x,y),!d`); `''` is everything. */
export function selectorToString(selector: CompiledSelector): string {
  return selector.text;
}
