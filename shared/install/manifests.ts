// What `furnish install` puts in a cluster: infra/ read the way `kubectl kustomize infra` renders
// it (the subset of kustomize infra/ uses: `resources` files and folders, `namespace`, `labels`),
// so the installer needs no kubectl, then every `${FURNISH_*}` template variable filled in.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeObject } from '../kube/types.ts';

export const INFRA = join(import.meta.dirname, '..', '..', 'infra');

interface Kustomization {
  namespace?: string;
  labels?: { pairs?: Record<string, string> }[];
  resources?: string[];
}

/** Kinds that live in a namespace among those infra/ holds (kustomize's `namespace:` applies to these only). */
const CLUSTER_SCOPED = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

function readKustomization(dir: string): Kustomization {
  const file = join(dir, 'kustomization.yaml');
  try {
    return (parse(readFileSync(file, 'utf8')) ?? {}) as Kustomization;
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message}`, { cause: e });
  }
}

function readObjects(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as KubeObject | null).filter((o): o is KubeObject => o !== null);
}

/** The objects of a kustomization folder, in `resources` order, with its namespace and labels applied. */
export function loadKustomization(dir: string = INFRA): KubeObject[] {
  const k = readKustomization(dir);
  const objects = (k.resources ?? []).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? loadKustomization(path) : readObjects(path);
  });
  const labels = Object.assign({}, ...(k.labels ?? []).map((l) => l.pairs ?? {})) as Record<string, string>;
  return objects.map((o) => {
    const metadata = { ...o.metadata };
    if (Object.keys(labels).length > 0) metadata.labels = { ...metadata.labels, ...labels };
    if (k.namespace && !CLUSTER_SCOPED.has(o.kind)) metadata.namespace = k.namespace;
    return { ...o, metadata };
  });
}

/**
 * The user a function authenticates as where it presents its Google service account (GKE: the
 * account's e-mail), by the ServiceAccount whose bindings that user joins. Terraform's
 * install_vars sets them for a cluster reached with Google identities; absent or empty elsewhere.
 */
export const IDENTITY_VARS = { FURNISH_RECONCILER_USER: 'furnish-reconciler', FURNISH_WEBHOOK_USER: 'furnish-webhook' } as const;

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

/**
 * A RoleBinding or ClusterRoleBinding of Furnish's ServiceAccount also binds, as a `User`, the
 * identity that component has on a cluster where it presents a Google token: the same roles, not
 * one more (infra/ stays the one statement of what each component may do).
 */
export function withIdentityUsers(o: KubeObject, vars: Readonly<Record<string, string>>): KubeObject {
  if (o.kind !== 'ClusterRoleBinding' && o.kind !== 'RoleBinding') return o;
  const subjects = ((o as { subjects?: Subject[] }).subjects ?? []);
  const users = Object.entries(IDENTITY_VARS)
    .filter(([variable, account]) => vars[variable] && subjects.some((s) => s.kind === 'ServiceAccount' && s.name === account))
    .map(([variable]) => vars[variable]!)
    .filter((user) => !subjects.some((s) => s.kind === 'User' && s.name === user));
  if (users.length === 0) return o;
  return { ...o, subjects: [...subjects, ...users.map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }))] } as KubeObject;
}

/**
 * One object of infra/ for a cluster: `${FURNISH_X}` in every string value from `vars` (an unknown
 * variable is an error naming where it is), and the Google identities of vars bound (withIdentityUsers).
 */
export function fillObject(o: KubeObject, vars: Readonly<Record<string, string>>): KubeObject {
  try {
    return withIdentityUsers(fillTemplates(o, vars), vars);
  } catch (e) {
    throw new Error(`${o.kind}/${o.metadata.name}: ${(e as Error).message}`, { cause: e });
  }
}

/** `${FURNISH_X}` in every string value, from `vars`; an unknown variable is an error naming its path. */
export function fillTemplates<T>(value: T, vars: Readonly<Record<string, string>>, path = ''): T {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => {
      const v = vars[name];
      if (v === undefined) throw new Error(`${path || '(root)'}: template variable \${${name}} has no value (have ${Object.keys(vars).filter((k) => vars[k] !== undefined).join(', ')})`);
      return v;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v, i) => fillTemplates(v, vars, `${path}[${i}]`)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillTemplates(v, vars, path ? `${path}.${k}` : k)])) as T;
  }
  return value;
}

export const isWebhookConfiguration = (o: KubeObject): boolean => o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration';
