// Label selectors (the string form of `?labelSelector=`, set-based included, and metav1.LabelSelector
// objects used by webhooks and aggregated ClusterRoles) and field selectors.
import type { KubeObject, LabelSelector, StringMap } from '../../../shared/kube/types.ts';
import { badRequest } from './errors.ts';

export interface Requirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  values: string[];
}

export type Selector = Requirement[];

/** Splits on commas that are not inside `( )`. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

const SET_BASED = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/;
const EQUALITY = /^([^=!<>\s]+)\s*(==|=|!=|<|>)\s*(\S*)$/;

function parseRequirement(text: string): Requirement {
  if (text.startsWith('!')) return { key: text.slice(1).trim(), operator: 'DoesNotExist', values: [] };
  const setBased = SET_BASED.exec(text);
  if (setBased) {
    const values = setBased[3]!.split(',').map((v) => v.trim()).filter((v) => v !== '');
    return { key: setBased[1]!, operator: setBased[2] === 'in' ? 'In' : 'NotIn', values };
  }
  const equality = EQUALITY.exec(text);
  if (equality) {
    const operators: Record<string, Requirement['operator']> = { '=': 'In', '==': 'In', '!=': 'NotIn', '<': 'Lt', '>': 'Gt' };
    return { key: equality[1]!, operator: operators[equality[2]!]!, values: [equality[3]!] };
  }
  if (/^[A-Za-z0-9_./-]+$/.test(text)) return { key: text, operator: 'Exists', values: [] };
  throw badRequest(`unable to parse requirement: found '${text}', expected: key, '!', 'in', 'notin', '=', '==', '!=', '<', '>'`);
}

export function parseLabelSelector(text: string | undefined): Selector {
  return text ? splitTopLevel(text).map(parseRequirement) : [];
}

export function fromLabelSelector(selector: LabelSelector | null | undefined): Selector {
  if (!selector) return [];
  const requirements: Selector = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, operator: 'In', values: [value] }));
  for (const e of selector.matchExpressions ?? []) {
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(e.operator)) {
      throw badRequest(`"${e.operator}" is not a valid label selector operator`);
    }
    requirements.push({ key: e.key, operator: e.operator as Requirement['operator'], values: e.values ?? [] });
  }
  return requirements;
}

function matchesRequirement(r: Requirement, labels: StringMap): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case 'In': return has && r.values.includes(value!);
    case 'NotIn': return !has || !r.values.includes(value!);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': return has && Number(value) > Number(r.values[0]);
    case 'Lt': return has && Number(value) < Number(r.values[0]);
  }
}

export function matchesLabels(selector: Selector, labels: StringMap | undefined): boolean {
  return selector.every((r) => matchesRequirement(r, labels ?? {}));
}

// --- field selectors -----------------------------------------------------------------------

export interface FieldRequirement {
  field: string;
  equals: boolean;
  value: string;
}

/** Fields every kind supports, plus the few per kind that clients of Furnish use. */
const FIELDS_BY_KIND: Record<string, string[]> = {
  Event: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
    'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'type', 'source'],
  Pod: ['spec.nodeName', 'spec.serviceAccountName', 'status.phase'],
  Secret: ['type'],
  Namespace: ['status.phase'],
};

export function parseFieldSelector(text: string | undefined, kind: string): FieldRequirement[] {
  if (!text) return [];
  const allowed = new Set(['metadata.name', 'metadata.namespace', ...(FIELDS_BY_KIND[kind] ?? [])]);
  return splitTopLevel(text).map((part) => {
    const match = /^([^=!]+)(==|=|!=)(.*)$/.exec(part);
    if (!match) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const field = match[1]!.trim();
    if (!allowed.has(field)) throw badRequest(`field label not supported: ${field}`);
    return { field, equals: match[2] !== '!=', value: match[3]!.trim() };
  });
}

function fieldValue(obj: KubeObject, path: string): string {
  let current: unknown = obj;
  for (const part of path.split('.')) {
    current = current && typeof current === 'object' ? (current as Record<string, unknown>)[part] : undefined;
  }
  if (path === 'source' && current && typeof current === 'object') return String((current as { component?: string }).component ?? '');
  return current === undefined || current === null ? '' : String(current);
}

export function matchesFields(requirements: FieldRequirement[], obj: KubeObject): boolean {
  return requirements.every((r) => (fieldValue(obj, r.field) === r.value) === r.equals);
}
