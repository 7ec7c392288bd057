// Admission-time checks of a NamespaceTemplate: everything that can be known without a
// namespace, reported with the path of the offending field. The name checks that depend on the
// token values run once here with worst-case samples, and again at render with the real values.
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { APPLYSET_PARENT_KIND, APPLYSET_PARENT_NAME } from './applyset.ts';
import { cloneJson, isRecord, isStringMap, unknownFieldProblems, type JsonRecord } from './json.ts';
import { formatGroupKind, groupOf, isClusterScoped, nameErrors, nameRuleOf, objectKey } from './kinds.ts';
import { dns1035LabelErrors, dns1123SubdomainErrors, labelValueErrors, LABEL_VALUE_MAX, qualifiedNameErrors } from './names.ts';
import { childPath, ROOT_PATH } from './path.ts';
import { parseSelector } from './selector.ts';
import { ANNOTATION_TOKEN, formatToken, hasTokenSyntax, substituteTokens, tokenArgumentProblems, TOKEN_NAMES, tokensIn, unknownTokensIn, type TokenName, type TokenValues } from './tokens.ts';
import { API_VERSION, type GroupKind, type ValidationProblem } from './types.ts';

/**
 * Largest serialized NamespaceTemplate accepted: etcd's default request limit (1.5 MiB), which
 * bounds every stored object. The API server's own 3 MiB request limit is never the one that bites.
 */
export const MAX_TEMPLATE_BYTES = 1.5 * 1024 * 1024;

/**
 * Worst-case values that are still valid, to check at admission names and labels built from
 * tokens. A namespace name is a DNS-1123 label of up to 63 characters. An organization name is
 * a DNS-1123 subdomain that is also a label value: up to 63 characters, dots allowed. A user name
 * is any string; OIDC user names are prefixed with the issuer URL (`https://...#sub`), so
 * `$(CREATOR)` never fits in a name or a label value: it belongs in subjects and annotations.
 */
export const SAMPLE_TOKEN_VALUES: TokenValues = {
  CREATOR: 'https://issuer.example.com#Alice@Example.com',
  NAMESPACE: 'n'.repeat(63),
  ORGANIZATION: `${'o'.repeat(31)}.${'o'.repeat(31)}`,
  // Any annotation a $(ANNOTATION:key|default) token reads: the longest value that is used.
  annotations: new Proxy({}, { get: (_target, key) => (typeof key === 'string' ? 'a'.repeat(63) : undefined) }),
};

const SAMPLE_DESCRIPTIONS: Readonly<Record<TokenName | typeof ANNOTATION_TOKEN, string>> = {
  CREATOR: `a user name such as "${SAMPLE_TOKEN_VALUES.CREATOR}"`,
  NAMESPACE: 'a 63-character namespace name',
  ORGANIZATION: "a 63-character organization name containing '.'",
  ANNOTATION: 'a 63-character annotation value',
};

const SPEC_FIELDS = new Set(['namespaces', 'templates', 'deletionPolicy', 'mode', 'existingNamespaces', 'protect']);
const NAMESPACES_FIELDS = new Set(['labelSelector']);
const DELETION_POLICIES = ['Delete', 'Orphan'] as const;
const MODES = ['Enforce', 'CreateOnly'] as const;
const EXISTING_NAMESPACES = ['Adopt', 'Ignore'] as const;
/** Allowed values of the NamespaceTemplate's own annotations: a typo must not change behaviour silently. */
const TEMPLATE_ANNOTATION_VALUES: Readonly<Record<string, readonly string[]>> = {
  [KEY.requirePermission]: ['true', 'false'],
  [KEY.apply]: ['disable'],
};
const NAMESPACE_TOKEN = formatToken('NAMESPACE');

function problem(path: string, message: string): ValidationProblem {
  return { path, message };
}

/** A found value for a message: its JSON, or "nothing" when the field is absent. */
function found(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value);
}

function quoteList(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}

function enumProblems(value: unknown, path: string, allowed: readonly string[]): ValidationProblem[] {
  if (value === undefined || value === null || allowed.includes(value as string)) return [];
  return [problem(path, `Unsupported value: ${JSON.stringify(value)}: supported values: ${quoteList(allowed)}`)];
}

function templateNameProblems(name: unknown): ValidationProblem[] {
  const path = 'metadata.name';
  if (typeof name !== 'string' || name === '') return [problem(path, 'Required value')];
  // At most 63 characters, not 253: the name is the value of label furnish.dev/template.
  return dns1123SubdomainErrors(name, LABEL_VALUE_MAX).map((m) => problem(path, `"${name}": ${m} (it is the value of label ${KEY.template})`));
}

function templateAnnotationProblems(annotations: unknown): ValidationProblem[] {
  if (annotations === undefined || annotations === null) return [];
  if (!isRecord(annotations)) return [problem('metadata.annotations', 'must be an object of annotation key to string')];
  return Object.entries(TEMPLATE_ANNOTATION_VALUES)
    .filter(([key, allowed]) => key in annotations && !allowed.includes(annotations[key] as string))
    .map(([key, allowed]) =>
      problem(childPath('metadata.annotations', key), `must be ${allowed.map((v) => `"${v}"`).join(' or ')}, found ${found(annotations[key])}`),
    );
}

function headerProblems(obj: JsonRecord): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  if (obj.apiVersion !== API_VERSION) problems.push(problem('apiVersion', `must be "${API_VERSION}", found ${found(obj.apiVersion)}`));
  if (obj.kind !== 'NamespaceTemplate') problems.push(problem('kind', `must be "NamespaceTemplate", found ${found(obj.kind)}`));
  if (!isRecord(obj.metadata)) return [...problems, problem('metadata', 'Required value: an object with a name')];
  return [...problems, ...templateNameProblems(obj.metadata.name), ...templateAnnotationProblems(obj.metadata.annotations)];
}

function namespacesProblems(namespaces: unknown): ValidationProblem[] {
  const path = 'spec.namespaces';
  if (namespaces === undefined || namespaces === null) return [];
  if (!isRecord(namespaces)) return [problem(path, 'must be an object with a labelSelector')];
  const parsed = parseSelector(namespaces.labelSelector, childPath(path, 'labelSelector'));
  return [...unknownFieldProblems(namespaces, NAMESPACES_FIELDS, path), ...(parsed.ok ? [] : parsed.problems)];
}

function apiVersionProblems(apiVersion: unknown, path: string): ValidationProblem[] {
  if (typeof apiVersion !== 'string' || apiVersion === '') return [problem(path, 'Required value')];
  const parts = apiVersion.split('/');
  if (parts.length > 2) return [problem(path, `"${apiVersion}": must be "version" or "group/version"`)];
  const group = parts.length === 2 ? parts[0]! : '';
  const version = parts.at(-1)!;
  const errors = [...(parts.length === 2 ? dns1123SubdomainErrors(group).map((m) => `group ${m}`) : []), ...dns1035LabelErrors(version).map((m) => `version ${m}`)];
  return errors.map((m) => problem(path, `"${apiVersion}": ${m}`));
}

/** Keys may not hold tokens (they are never replaced there); values may hold only known ones. */
function tokenProblems(value: unknown, path: string): ValidationProblem[] {
  if (typeof value === 'string') {
    const unknown = [...new Set(unknownTokensIn(value))];
    const malformed = tokenArgumentProblems(value, qualifiedNameErrors).map((m) => problem(path, m));
    if (unknown.length === 0) return malformed;
    const known = [...TOKEN_NAMES.map(formatToken), `$(${ANNOTATION_TOKEN}:key|default)`].join(', ');
    return [problem(path, `unknown token ${unknown.map(formatToken).join(', ')}: known tokens are ${known} (write $$(NAME) for a literal $(NAME))`), ...malformed];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => tokenProblems(item, childPath(path, i)));
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([key, item]) => [
    ...(hasTokenSyntax(key) ? [problem(childPath(path, key), 'tokens are not replaced in keys, only in string values')] : []),
    ...tokenProblems(item, childPath(path, key)),
  ]);
}

function isReservedLabel(key: string): boolean {
  return key === KEY.template || key.startsWith('applyset.kubernetes.io/');
}

/** Label or annotation keys and value types; label values are checked once tokens are replaced. */
function metadataMapProblems(map: unknown, path: string, what: 'label' | 'annotation'): ValidationProblem[] {
  if (map === undefined || map === null) return [];
  if (!isRecord(map)) return [problem(path, `must be an object of ${what} key to string`)];
  return Object.entries(map).flatMap(([key, value]) => {
    const at = childPath(path, key);
    return [
      ...qualifiedNameErrors(key).map((m) => problem(at, `invalid ${what} key: ${m}`)),
      ...(typeof value === 'string' ? [] : [problem(at, `must be a string, found ${found(value)} (quote it in YAML)`)]),
      ...(what === 'label' && isReservedLabel(key) ? [problem(at, 'is set by Furnish on every applied object; remove it from the template')] : []),
    ];
  });
}

function namespaceFieldProblems(namespace: unknown, path: string): ValidationProblem[] {
  if (namespace === undefined || namespace === null || namespace === '' || namespace === NAMESPACE_TOKEN) return [];
  return [
    problem(
      path,
      `${JSON.stringify(namespace)}: must be absent or "${NAMESPACE_TOKEN}": a template applies to many namespaces and each object goes into the namespace it is rendered for`,
    ),
  ];
}

function clusterScopeProblems(gk: GroupKind, path: string): ValidationProblem[] {
  if (!isClusterScoped(gk)) return [];
  return [problem(path, `${formatGroupKind(gk)} is cluster-scoped: a NamespaceTemplate may only hold namespaced objects`)];
}

function describeValue(raw: string, rendered: string, sampled: boolean): string {
  if (raw === rendered) return `"${raw}"`;
  if (!sampled) return `"${rendered}" (from "${raw}")`;
  const tokens = [...new Set(tokensIn(raw))] as (TokenName | typeof ANNOTATION_TOKEN)[];
  return `"${raw}" (once ${tokens.map((t) => `${formatToken(t)} is ${SAMPLE_DESCRIPTIONS[t]}`).join(' and ')})`;
}

/**
 * Checks of an object once its tokens are replaced: name syntax of its kind, label values, and
 * the name reserved for the ApplySet parent. `sampled`: the values are SAMPLE_TOKEN_VALUES.
 */
export function renderedObjectProblems(raw: KubeObject, rendered: KubeObject, path: string, sampled: boolean): ValidationProblem[] {
  const gk = { group: groupOf(rendered.apiVersion), kind: rendered.kind };
  const metaPath = childPath(path, 'metadata');
  const name = rendered.metadata.name ?? '';
  const nameMessages = nameErrors(nameRuleOf(gk), name);
  const problems = nameMessages.map((m) =>
    problem(childPath(metaPath, 'name'), `${describeValue(raw.metadata.name ?? '', name, sampled)} is not a valid ${gk.kind} name: ${m}`),
  );
  if (formatGroupKind(gk) === formatGroupKind(APPLYSET_PARENT_KIND) && name === APPLYSET_PARENT_NAME) {
    problems.push(problem(childPath(metaPath, 'name'), `"${name}" is reserved for the ApplySet parent ConfigMap Furnish keeps in every namespace`));
  }
  for (const [key, value] of Object.entries(rendered.metadata.labels ?? {})) {
    const rawValue = raw.metadata.labels?.[key] ?? value;
    for (const m of labelValueErrors(value)) {
      problems.push(problem(childPath(childPath(metaPath, 'labels'), key), `${describeValue(rawValue, value, sampled)} is not a valid label value: ${m}`));
    }
  }
  return problems;
}

interface CheckedObject {
  problems: ValidationProblem[];
  /** Identity with the sample token values, when the object is well-formed enough to have one. */
  key?: string;
}

function objectProblems(obj: unknown, path: string): CheckedObject {
  if (!isRecord(obj)) return { problems: [problem(path, 'must be an object (a namespaced Kubernetes object)')] };
  const at = (field: string): string => childPath(path, field);
  const problems = [...tokenProblems(obj, path), ...apiVersionProblems(obj.apiVersion, at('apiVersion'))];
  const kindOk = typeof obj.kind === 'string' && obj.kind !== '';
  if (!kindOk) problems.push(problem(at('kind'), 'Required value'));
  else if (typeof obj.apiVersion === 'string') problems.push(...clusterScopeProblems({ group: groupOf(obj.apiVersion), kind: obj.kind as string }, at('kind')));
  const meta = obj.metadata;
  if (!isRecord(meta)) return { problems: [...problems, problem(at('metadata'), 'Required value: an object with a name')] };
  const metaPath = at('metadata');
  const nameOk = typeof meta.name === 'string' && meta.name !== '';
  if (!nameOk) problems.push(problem(childPath(metaPath, 'name'), 'Required value'));
  if (meta.generateName !== undefined) {
    problems.push(problem(childPath(metaPath, 'generateName'), 'not supported: Furnish applies every object by name (server-side apply), so set metadata.name'));
  }
  problems.push(
    ...namespaceFieldProblems(meta.namespace, childPath(metaPath, 'namespace')),
    ...metadataMapProblems(meta.labels, childPath(metaPath, 'labels'), 'label'),
    ...metadataMapProblems(meta.annotations, childPath(metaPath, 'annotations'), 'annotation'),
  );
  const wellFormed = typeof obj.apiVersion === 'string' && kindOk && nameOk && (meta.labels === undefined || isStringMap(meta.labels));
  if (!wellFormed) return { problems };
  const raw = obj as KubeObject;
  const sampled = cloneJson(raw, (s) => substituteTokens(s, SAMPLE_TOKEN_VALUES)) as KubeObject;
  problems.push(...renderedObjectProblems(raw, sampled, path, true));
  return { problems, key: objectKey({ group: groupOf(raw.apiVersion), kind: raw.kind }, '', sampled.metadata.name!) };
}

function templateListProblems(templates: unknown): ValidationProblem[] {
  const path = 'spec.templates';
  if (templates === undefined || templates === null) return [];
  if (!Array.isArray(templates)) return [problem(path, 'must be a list of namespaced objects')];
  const firstIndexByKey = new Map<string, number>();
  return templates.flatMap((obj, i) => {
    const at = childPath(path, i);
    const { problems, key } = objectProblems(obj, at);
    if (key === undefined) return problems;
    const first = firstIndexByKey.get(key);
    if (first === undefined) firstIndexByKey.set(key, i);
    else problems.push(problem(at, `defines the same object as ${childPath(path, first)}; define each object once`));
    return problems;
  });
}

/**
 * `protect` must be a boolean, and needs mode Enforce: a CreateOnly template leaves its objects to
 * the namespace after creating them, so nobody could change a protected one (the denial's advice,
 * "edit the template", would change nothing).
 */
function protectProblems(spec: JsonRecord): ValidationProblem[] {
  const path = 'spec.protect';
  if (spec.protect === undefined || spec.protect === null) return [];
  if (typeof spec.protect !== 'boolean') return [problem(path, `must be true or false, found ${found(spec.protect)}`)];
  if (spec.protect && spec.mode === 'CreateOnly') return [problem(path, 'true needs mode Enforce: a CreateOnly template leaves its objects to the namespace, so a protected one could never change')];
  return [];
}

function specProblems(spec: unknown): ValidationProblem[] {
  if (!isRecord(spec)) return [problem('spec', spec === undefined ? 'Required value' : 'must be an object')];
  return [
    ...unknownFieldProblems(spec, SPEC_FIELDS, 'spec'),
    ...namespacesProblems(spec.namespaces),
    ...enumProblems(spec.deletionPolicy, 'spec.deletionPolicy', DELETION_POLICIES),
    ...enumProblems(spec.mode, 'spec.mode', MODES),
    ...enumProblems(spec.existingNamespaces, 'spec.existingNamespaces', EXISTING_NAMESPACES),
    ...protectProblems(spec),
    ...templateListProblems(spec.templates),
  ];
}

function sizeProblems(obj: JsonRecord): ValidationProblem[] {
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(obj), 'utf8');
  } catch {
    return [problem(ROOT_PATH, 'is not serializable as JSON')];
  }
  if (bytes <= MAX_TEMPLATE_BYTES) return [];
  return [problem(ROOT_PATH, `is ${bytes} bytes as JSON; etcd stores objects of at most 1.5 MiB (${MAX_TEMPLATE_BYTES} bytes)`)];
}

/** Every problem of a NamespaceTemplate, each with the path of the field at fault; `[]` when valid. */
export function validateTemplate(obj: unknown): ValidationProblem[] {
  if (!isRecord(obj)) return [problem(ROOT_PATH, 'must be an object (a NamespaceTemplate)')];
  return [...headerProblems(obj), ...specProblems(obj.spec), ...sizeProblems(obj)];
}

const validated = new WeakMap<object, readonly ValidationProblem[]>();

/**
 * validateTemplate, remembered per template object: render checks every template it is given
 * (one stored before the webhook existed was never validated) without paying for it per namespace.
 * Templates are values: an object is not modified after it has been validated.
 */
export function templateProblems(template: object): readonly ValidationProblem[] {
  let problems = validated.get(template);
  if (problems === undefined) {
    problems = validateTemplate(template);
    validated.set(template, problems);
  }
  return problems;
}
