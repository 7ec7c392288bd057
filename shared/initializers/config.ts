// NamespaceInitializationConfiguration: validating one object (every problem with its path),
// compiling the valid entries, merging several objects by name order, and choosing the
// initializers a namespace gets. Pure: no I/O.
import { subjectMatches } from '../rbac/authorizer.ts';
import { SUBJECT_KINDS, type KubeObject, type StringMap, type Subject, type UserInfo } from '../kube/types.ts';
import { isRecord, unknownFieldProblems } from '../render/json.ts';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../render/names.ts';
import { childPath } from '../render/path.ts';
import { matchesSelector, parseSelector, selectorToString, type CompiledSelector } from '../render/selector.ts';
import { API_VERSION, type ValidationProblem } from '../render/types.ts';
import { matchingPrincipal } from '../webhooks/rules/principals.ts';
import { CONFIG_KIND, FURNISH_INITIALIZER } from './keys.ts';

export type Principal = Subject;

/** One initializer, compiled: what admission and the reconciler need. */
export interface Initializer {
  name: string;
  principals: Principal[];
  /** Configured principal patterns (`name`, `group:g`, trailing `*`): the built-in initializer's, from the settings. */
  patterns?: string[];
  /** Which namespaces it initializes (everything when the configuration gives no selector). */
  selector: CompiledSelector;
  timeoutSeconds?: number;
  /** The NamespaceInitializationConfiguration that defines it, or `built-in`. */
  source: string;
}

/** Longest accepted timeout: a week. A namespace closed for longer is a stuck namespace. */
export const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;

const SPEC_FIELDS = new Set(['initializers']);
const INITIALIZER_FIELDS = new Set(['name', 'principals', 'namespaces', 'timeoutSeconds']);
const NAMESPACES_FIELDS = new Set(['labelSelector']);
const PRINCIPAL_FIELDS = new Set(['kind', 'name', 'namespace']);

export function isInitializationConfiguration(o: KubeObject): boolean {
  return o.kind === CONFIG_KIND && o.apiVersion === API_VERSION;
}

function nameProblems(value: unknown, path: string): ValidationProblem[] {
  if (typeof value !== 'string' || value === '') return [{ path, message: 'required: a name such as "vault-injector"' }];
  if (value === FURNISH_INITIALIZER) return [{ path, message: `"${FURNISH_INITIALIZER}" is Furnish's own template population, the built-in first initializer; it cannot be redefined` }];
  return dns1123LabelErrors(value).map((message) => ({ path, message: `invalid initializer name "${value}": ${message}` }));
}

function principalProblems(p: unknown, path: string): ValidationProblem[] {
  if (!isRecord(p)) return [{ path, message: 'must be an object: { kind: User|Group|ServiceAccount, name, namespace? }' }];
  const problems = unknownFieldProblems(p, PRINCIPAL_FIELDS, path);
  if (!(SUBJECT_KINDS as readonly unknown[]).includes(p.kind)) problems.push({ path: childPath(path, 'kind'), message: `must be one of ${SUBJECT_KINDS.join(', ')}, not ${JSON.stringify(p.kind ?? null)}` });
  if (typeof p.name !== 'string' || p.name.trim() === '') problems.push({ path: childPath(path, 'name'), message: 'required: a non-empty string' });
  if (p.kind === 'ServiceAccount') {
    if (typeof p.name === 'string' && p.name !== '') problems.push(...dns1123SubdomainErrors(p.name).map((m) => ({ path: childPath(path, 'name'), message: `invalid ServiceAccount name "${p.name as string}": ${m}` })));
    if (typeof p.namespace !== 'string' || p.namespace === '') problems.push({ path: childPath(path, 'namespace'), message: 'required for a ServiceAccount: the namespace it lives in' });
    else problems.push(...dns1123LabelErrors(p.namespace).map((m) => ({ path: childPath(path, 'namespace'), message: `invalid namespace "${p.namespace as string}": ${m}` })));
  } else if (p.namespace !== undefined) {
    problems.push({ path: childPath(path, 'namespace'), message: `only a ServiceAccount has a namespace, not a ${String(p.kind)}` });
  }
  return problems;
}

function timeoutProblems(value: unknown, path: string): ValidationProblem[] {
  if (value === undefined) return [];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_SECONDS) {
    return [{ path, message: `must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}, not ${JSON.stringify(value)}` }];
  }
  return [];
}

function initializerProblems(entry: unknown, path: string): ValidationProblem[] {
  if (!isRecord(entry)) return [{ path, message: 'must be an object: { name, principals, namespaces?, timeoutSeconds? }' }];
  const problems = [...unknownFieldProblems(entry, INITIALIZER_FIELDS, path), ...nameProblems(entry.name, childPath(path, 'name'))];
  const principalsPath = childPath(path, 'principals');
  if (!Array.isArray(entry.principals) || entry.principals.length === 0) {
    problems.push({ path: principalsPath, message: 'required: at least one User, Group or ServiceAccount that completes this initializer' });
  } else {
    entry.principals.forEach((p, i) => problems.push(...principalProblems(p, childPath(principalsPath, i))));
  }
  const namespacesPath = childPath(path, 'namespaces');
  if (entry.namespaces !== undefined) {
    if (!isRecord(entry.namespaces)) problems.push({ path: namespacesPath, message: 'must be an object: { labelSelector }' });
    else {
      problems.push(...unknownFieldProblems(entry.namespaces, NAMESPACES_FIELDS, namespacesPath));
      const parsed = parseSelector(entry.namespaces.labelSelector, childPath(namespacesPath, 'labelSelector'));
      if (!parsed.ok) problems.push(...parsed.problems);
    }
  }
  problems.push(...timeoutProblems(entry.timeoutSeconds, childPath(path, 'timeoutSeconds')));
  return problems;
}

function duplicateProblems(entries: readonly unknown[]): ValidationProblem[] {
  const first = new Map<string, number>();
  const problems: ValidationProblem[] = [];
  entries.forEach((e, i) => {
    const name = isRecord(e) && typeof e.name === 'string' ? e.name : undefined;
    if (name === undefined) return;
    const seen = first.get(name);
    if (seen === undefined) first.set(name, i);
    else problems.push({ path: `spec.initializers[${i}].name`, message: `duplicate initializer "${name}" (also spec.initializers[${seen}].name)` });
  });
  return problems;
}

/** Every problem of one NamespaceInitializationConfiguration, each with its path; [] when valid. */
export function validateInitializationConfiguration(o: unknown): ValidationProblem[] {
  if (!isRecord(o)) return [{ path: '(root)', message: `must be a ${CONFIG_KIND} object` }];
  const problems: ValidationProblem[] = [];
  if (o.apiVersion !== API_VERSION) problems.push({ path: 'apiVersion', message: `must be ${API_VERSION}` });
  if (o.kind !== CONFIG_KIND) problems.push({ path: 'kind', message: `must be ${CONFIG_KIND}` });
  const spec = o.spec;
  if (!isRecord(spec)) return [...problems, { path: 'spec', message: 'required: { initializers: [...] }' }];
  problems.push(...unknownFieldProblems(spec, SPEC_FIELDS, 'spec'));
  if (!Array.isArray(spec.initializers)) return [...problems, { path: 'spec.initializers', message: 'required: a list of initializers' }];
  spec.initializers.forEach((e, i) => problems.push(...initializerProblems(e, `spec.initializers[${i}]`)));
  problems.push(...duplicateProblems(spec.initializers));
  return problems;
}

function compile(entry: Record<string, unknown>, source: string): Initializer {
  const namespaces = isRecord(entry.namespaces) ? entry.namespaces : {};
  const parsed = parseSelector(namespaces.labelSelector);
  return {
    name: entry.name as string,
    principals: (entry.principals as Principal[]).map(({ kind, name, namespace }) => (kind === 'ServiceAccount' ? { kind, name, namespace } : { kind, name })),
    selector: parsed.ok ? parsed.selector : { requirements: [], text: '' },
    ...(typeof entry.timeoutSeconds === 'number' ? { timeoutSeconds: entry.timeoutSeconds } : {}),
    source,
  };
}

export interface MergedInitializers {
  /** Configured initializers in merged order (the built-in `furnish` is not among them). */
  initializers: Initializer[];
  /** Overrides between objects. */
  warnings: string[];
  /** Entries left out because they are invalid (stored before the webhook ran, or by hand). */
  problems: Array<ValidationProblem & { configuration: string }>;
}

/**
 * Several configurations, taken in name order (byte order, like NamespaceTemplates), their
 * initializers concatenated. A name defined again by a later object replaces the earlier
 * definition in place (the later one wins, the order stays that of the first). An invalid entry
 * is left out: it never initializes anything, so it never closes a namespace nobody can open.
 */
export function mergeConfigurations(configs: readonly KubeObject[]): MergedInitializers {
  const sorted = configs.filter(isInitializationConfiguration).map((c) => ({ name: c.metadata.name ?? '', c })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out = new Map<string, Initializer>();
  const warnings: string[] = [];
  const problems: MergedInitializers['problems'] = [];
  for (const { name: configuration, c } of sorted) {
    const entries: unknown[] = isRecord(c.spec) && Array.isArray(c.spec.initializers) ? c.spec.initializers : [];
    entries.forEach((entry, i) => {
      const found = initializerProblems(entry, `spec.initializers[${i}]`);
      if (found.length > 0 || !isRecord(entry)) return void problems.push(...found.map((p) => ({ ...p, configuration })));
      const compiled = compile(entry, configuration);
      const earlier = out.get(compiled.name);
      if (earlier && earlier.source !== configuration) warnings.push(`initializer "${compiled.name}" of ${CONFIG_KIND} "${configuration}" replaces the one of "${earlier.source}"`);
      out.set(compiled.name, compiled);
    });
  }
  return { initializers: [...out.values()], warnings, problems };
}

/** The built-in first initializer: Furnish's template population, completed by the reconciler. */
export function furnishInitializer(reconcilerPrincipals: readonly string[]): Initializer {
  return { name: FURNISH_INITIALIZER, principals: [], patterns: [...reconcilerPrincipals], selector: { requirements: [], text: '' }, source: 'built-in' };
}

/**
 * The initializers a namespace gets, in order: `furnish` first, then every configured one whose
 * selector matches its labels. A namespace Furnish does not govern (opted out, system) gets none.
 */
export function selectInitializers(labels: StringMap, optedOut: boolean, configured: readonly Initializer[]): string[] {
  if (optedOut) return [];
  return [FURNISH_INITIALIZER, ...configured.filter((i) => matchesSelector(i.selector, labels)).map((i) => i.name)];
}

/** Why an initializer is not selected for these labels, for `furnish render`. */
export function notSelectedReason(i: Initializer, labels: StringMap): string | undefined {
  return matchesSelector(i.selector, labels) ? undefined : `namespace labels do not match selector "${selectorToString(i.selector)}"`;
}

export function describePrincipal(p: Principal): string {
  return p.kind === 'ServiceAccount' ? `ServiceAccount ${p.namespace ?? ''}/${p.name}` : `${p.kind} ${p.name}`;
}

/** The principal of `i` the user is, described (for audit reasons), or undefined. */
export function principalOf(user: UserInfo, i: Initializer): string | undefined {
  const p = i.principals.find((q) => subjectMatches(q, user));
  if (p) return describePrincipal(p);
  return matchingPrincipal(user, i.patterns ?? []);
}

/** Everyone who may complete `i`, for denials. */
export function describePrincipals(i: Initializer): string {
  return [...i.principals.map(describePrincipal), ...(i.patterns ?? [])].join(', ') || 'nobody';
}
