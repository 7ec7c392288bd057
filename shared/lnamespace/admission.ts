// mutate-lnamespace's rules, one pure function each: the creator recorded at CREATE and restored
// if changed, well-formed subjects and billing fields, a name that can be a namespace and is not
// reserved, and who may put an LNamespace around a namespace that already exists. Each problem
// names its path, so one refusal lists everything to fix.
import { matchesAny } from '../org/settings.ts';
import { KEY } from '../keys.ts';
import type { KubeObject, UserInfo } from '../kube/types.ts';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../render/names.ts';
import { SYSTEM_NAMESPACES } from '../keys.ts';
import { billingFieldError } from './desired.ts';
import { LNS_KEY } from './types.ts';

export interface Problem {
  path: string;
  message: string;
}

/** Names no LNamespace may take (wildcards as trailing `*`): Kubernetes', OpenShift's and Furnish's own. */
export const RESERVED_NAMES: readonly string[] = [...SYSTEM_NAMESPACES, 'default', 'kube-*', 'openshift-*', 'furnish-*'];


/** The annotation changes the creator rule wants: recorded at CREATE, restored at UPDATE. */
export function creatorAnnotation(operation: string, user: UserInfo, object: KubeObject, old: KubeObject | undefined): Record<string, string> | undefined {
  const now = object.metadata?.annotations?.[KEY.creator];
  if (operation === 'CREATE') return user.username && now !== user.username ? { [KEY.creator]: user.username } : undefined;
  const before = old?.metadata?.annotations?.[KEY.creator];
  if (operation === 'UPDATE' && before !== undefined && now !== before) return { [KEY.creator]: before };
  return undefined;
}

function subjectProblems(list: unknown, path: string): Problem[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) return [{ path, message: 'must be a list of subjects' }];
  const problems: Problem[] = [];
  list.forEach((s: unknown, i) => {
    const at = `${path}[${i}]`;
    if (!s || typeof s !== 'object' || Array.isArray(s)) return void problems.push({ path: at, message: 'must be an object {kind, name, namespace?}' });
    const { kind, name, namespace } = s as Record<string, unknown>;
    if (kind !== 'User' && kind !== 'Group' && kind !== 'ServiceAccount') problems.push({ path: `${at}.kind`, message: `must be User, Group or ServiceAccount, not ${JSON.stringify(kind)}` });
    if (typeof name !== 'string' || name === '') problems.push({ path: `${at}.name`, message: 'is required' });
    if (kind === 'ServiceAccount') {
      if (typeof namespace !== 'string' || namespace === '') problems.push({ path: `${at}.namespace`, message: 'is required for a ServiceAccount' });
      else if (dns1123LabelErrors(namespace).length > 0) problems.push({ path: `${at}.namespace`, message: `${JSON.stringify(namespace)} is not a namespace name` });
      if (typeof name === 'string' && name !== '' && dns1123SubdomainErrors(name).length > 0) problems.push({ path: `${at}.name`, message: `${JSON.stringify(name)} is not a ServiceAccount name` });
    } else if (namespace !== undefined && (kind === 'User' || kind === 'Group')) {
      problems.push({ path: `${at}.namespace`, message: `only a ServiceAccount has a namespace, not a ${kind}` });
    }
  });
  return problems;
}

/** What is wrong with the object itself (no look-ups): name, subjects, billing fields. */
export function objectProblems(object: KubeObject, reserved: readonly string[]): Problem[] {
  const name = object.metadata?.name ?? '';
  const problems: Problem[] = [];
  const nameErrors = dns1123LabelErrors(name);
  if (nameErrors.length > 0) problems.push({ path: 'metadata.name', message: `${JSON.stringify(name)} is not a valid namespace name: ${nameErrors.join('; ')}` });
  const pattern = matchesAny(name, reserved); // the Organization settings' wildcards
  if (pattern !== undefined) problems.push({ path: 'metadata.name', message: `"${name}" is reserved (matches "${pattern}")` });
  const spec = (object as { spec?: unknown }).spec;
  if (spec !== undefined && (spec === null || typeof spec !== 'object' || Array.isArray(spec))) return [...problems, { path: 'spec', message: 'must be an object' }];
  const s = (spec ?? {}) as Record<string, unknown>;
  for (const list of ['users', 'managers', 'sudoers']) problems.push(...subjectProblems(s[list], `spec.${list}`));
  if (s.billing !== undefined) {
    if (!s.billing || typeof s.billing !== 'object' || Array.isArray(s.billing)) problems.push({ path: 'spec.billing', message: 'must be a map of strings' });
    else {
      for (const [k, v] of Object.entries(s.billing)) {
        const err = billingFieldError(k);
        if (err) problems.push({ path: `spec.billing.${k}`, message: `cannot become annotation ${LNS_KEY.billingPrefix}${k}: ${err}` });
        if (typeof v !== 'string') problems.push({ path: `spec.billing.${k}`, message: 'must be a string' });
      }
    }
  }
  return problems;
}

/**
 * Does this request need verb `adopt`? At CREATE when the namespace already exists (an LNamespace
 * would take over someone's namespace); at UPDATE when the adopt annotation is added or changed.
 * Returns why, or undefined.
 */
export function adoptionNeeded(operation: string, object: KubeObject, old: KubeObject | undefined, namespaceExists: boolean): string | undefined {
  const name = object.metadata?.name ?? '';
  const adopt = object.metadata?.annotations?.[LNS_KEY.adopt];
  if (operation === 'CREATE' && namespaceExists) {
    if (adopt !== 'true') return `namespace "${name}" already exists; to put an LNamespace around it, set annotation ${LNS_KEY.adopt}: "true"`;
    return `namespace "${name}" already exists`;
  }
  if (operation === 'UPDATE' && adopt !== undefined && adopt !== old?.metadata?.annotations?.[LNS_KEY.adopt]) return `annotation ${LNS_KEY.adopt} was changed`;
  return undefined;
}

export function describeProblems(name: string, problems: readonly Problem[]): string {
  return `LNamespace "${name}" is invalid: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`;
}
