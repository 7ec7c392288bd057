// The kinds kube-sim serves: the built-in ones Furnish and its templates touch, plus every
// CustomResourceDefinition created at run time. One ResourceType describes routing, discovery,
// storage behaviour (status subresource, generation) and the list/map semantics that strategic
// merge patch and server-side apply need.
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { GroupResource } from './errors.ts';

/** How a list (or map) merges: `atomic` replaces it whole, `map` merges items by keys, `set` by value. */
export type ListSemantics = { type: 'atomic' } | { type: 'set' } | {
  type: 'map';
  keys: string[];
  /** What a key field an item leaves out is in the item's path (its OpenAPI default: a port's `protocol: TCP`). */
  keyDefaults?: Record<string, unknown>;
};

/**
 * Answers, for a path of field names (list items written `[]`, map values `{}`), how that field
 * merges. Built-in kinds use a table; CRDs read their OpenAPI v3 schema.
 */
export interface MergeSchema {
  list(path: string[]): ListSemantics;
  /** true for maps and structs that are replaced whole (`x-kubernetes-map-type: atomic`, roleRef). */
  atomicMap(path: string[]): boolean;
  /**
   * Built-in kinds are Go structs: an absent map or list and an empty one are the same value, so
   * `spec: {}` is never a change. Custom objects keep the difference.
   */
  typed: boolean;
}

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories?: string[];
  /** `<plural>/status` is served and the main resource ignores status changes. */
  statusSubresource: boolean;
  /** `<plural>/scale` is served (operations/scale.ts): an autoscaling/v1 Scale of spec.replicas. */
  scaleSubresource?: boolean;
  /** metadata.generation is set to 1 and bumped on every change outside metadata and status. */
  generation: boolean;
  /** Strategic merge patch is accepted (built-in kinds); CRDs answer 415 like kube-apiserver. */
  strategicMerge: boolean;
  merge: MergeSchema;
  /** Verbs advertised in discovery; SARs and reviews are create-only. */
  verbs: string[];
  /** Objects a fresh Kind gets on CREATE before anything else (e.g. Namespace status). */
  defaults?: (obj: KubeObject) => void;
  /** The CRD this kind comes from, for CRD-served kinds. */
  crdName?: string;
  /** Schema of a CRD version, kept for the OpenAPI document. */
  openAPIV3Schema?: Record<string, unknown>;
  printerColumns?: Array<{ name: string; type: string; jsonPath: string; description?: string }>;
}

export const CRUD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function apiVersionOf(t: ResourceType): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

export function groupResource(t: ResourceType): GroupResource {
  return { group: t.group, resource: t.plural };
}

export function typeKey(group: string, plural: string): string {
  return `${plural}.${group}`;
}

// --- merge tables for built-in kinds -------------------------------------------------------

type Table = Record<string, ListSemantics>;
const byName: ListSemantics = { type: 'map', keys: ['name'] };
const byType: ListSemantics = { type: 'map', keys: ['type'] };

/** Every kind: metadata lists are keyed the same way everywhere. */
const METADATA_TABLE: Table = {
  'metadata.ownerReferences': { type: 'map', keys: ['uid'] },
  'metadata.finalizers': { type: 'set' },
};

const CONTAINER_TABLE = (prefix: string): Table => ({
  [prefix]: byName,
  [`${prefix}[].env`]: byName,
  [`${prefix}[].ports`]: { type: 'map', keys: ['containerPort', 'protocol'], keyDefaults: { protocol: 'TCP' } },
  [`${prefix}[].volumeMounts`]: { type: 'map', keys: ['mountPath'] },
  [`${prefix}[].volumeDevices`]: { type: 'map', keys: ['devicePath'] },
});

/** A PodSpec at `prefix`: in a Pod and in a workload's pod template alike. */
const POD_SPEC_TABLE = (prefix: string): Table => ({
  ...CONTAINER_TABLE(`${prefix}.containers`),
  ...CONTAINER_TABLE(`${prefix}.initContainers`),
  ...CONTAINER_TABLE(`${prefix}.ephemeralContainers`),
  [`${prefix}.volumes`]: byName,
  [`${prefix}.imagePullSecrets`]: byName,
});

const KIND_TABLES: Record<string, Table> = {
  Pod: { ...POD_SPEC_TABLE('spec'), 'status.conditions': byType },
  Deployment: { ...POD_SPEC_TABLE('spec.template.spec'), 'status.conditions': byType },
  ServiceAccount: { secrets: byName, imagePullSecrets: byName },
  Namespace: { 'status.conditions': byType },
  MutatingWebhookConfiguration: { webhooks: byName, 'webhooks[].matchConditions': byName },
  ValidatingWebhookConfiguration: { webhooks: byName, 'webhooks[].matchConditions': byName },
  ValidatingAdmissionPolicy: { 'spec.matchConditions': byName, 'status.conditions': byType },
  CustomResourceDefinition: { 'status.conditions': byType },
};

const ATOMIC_MAPS: Record<string, string[]> = {
  RoleBinding: ['roleRef'],
  ClusterRoleBinding: ['roleRef'],
  // A LabelSelector is `+structType=atomic`: an apply owns it whole, empty or not (`f:podSelector: {}`).
  NetworkPolicy: ['spec.podSelector'],
  Deployment: ['spec.selector'],
};

export function tableSchema(kind: string): MergeSchema {
  const table = { ...METADATA_TABLE, ...KIND_TABLES[kind] };
  const atomicMaps = new Set(ATOMIC_MAPS[kind] ?? []);
  return {
    list: (path) => table[path.join('.').replace(/\.\[\]/g, '[]')] ?? { type: 'atomic' },
    atomicMap: (path) => atomicMaps.has(path.join('.')),
    typed: true,
  };
}

// --- built-in kinds ------------------------------------------------------------------------

interface BuiltinSpec {
  group?: string;
  version?: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  shortNames?: string[];
  statusSubresource?: boolean;
  scaleSubresource?: boolean;
  generation?: boolean;
  verbs?: string[];
  defaults?: (obj: KubeObject) => void;
  categories?: string[];
}

function builtin(spec: BuiltinSpec): ResourceType {
  return {
    group: spec.group ?? '',
    version: spec.version ?? 'v1',
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    namespaced: spec.namespaced,
    shortNames: spec.shortNames ?? [],
    statusSubresource: spec.statusSubresource ?? false,
    ...(spec.scaleSubresource ? { scaleSubresource: true } : {}),
    generation: spec.generation ?? false,
    strategicMerge: true,
    merge: tableSchema(spec.kind),
    verbs: spec.verbs ?? CRUD_VERBS,
    ...(spec.defaults ? { defaults: spec.defaults } : {}),
    ...(spec.categories ? { categories: spec.categories } : {}),
  };
}

const RBAC = 'rbac.authorization.k8s.io';
const ADMISSION = 'admissionregistration.k8s.io';
const REVIEW_VERBS = ['create'];

/** ValidatingAdmissionPolicies and their bindings (GA in 1.30); a server without them (1.26) serves neither. */
function admissionPolicyTypes(): ResourceType[] {
  return [
    builtin({ group: ADMISSION, kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies', namespaced: false, statusSubresource: true, generation: true }),
    builtin({ group: ADMISSION, kind: 'ValidatingAdmissionPolicyBinding', plural: 'validatingadmissionpolicybindings', namespaced: false, generation: true }),
  ];
}

export function builtinTypes(options: { admissionPolicies: boolean } = { admissionPolicies: true }): ResourceType[] {
  return [
    builtin({ kind: 'Namespace', plural: 'namespaces', namespaced: false, shortNames: ['ns'], statusSubresource: true,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] }),
    builtin({ kind: 'ConfigMap', plural: 'configmaps', namespaced: true, shortNames: ['cm'] }),
    builtin({ kind: 'Secret', plural: 'secrets', namespaced: true }),
    builtin({ kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true, shortNames: ['sa'] }),
    builtin({ kind: 'ResourceQuota', plural: 'resourcequotas', namespaced: true, shortNames: ['quota'], statusSubresource: true }),
    builtin({ kind: 'LimitRange', plural: 'limitranges', namespaced: true, shortNames: ['limits'] }),
    builtin({ kind: 'Event', plural: 'events', namespaced: true, shortNames: ['ev'] }),
    builtin({ kind: 'Pod', plural: 'pods', namespaced: true, shortNames: ['po'], statusSubresource: true, categories: ['all'] }),
    builtin({ group: RBAC, kind: 'Role', plural: 'roles', namespaced: true }),
    builtin({ group: RBAC, kind: 'RoleBinding', plural: 'rolebindings', namespaced: true }),
    builtin({ group: RBAC, kind: 'ClusterRole', plural: 'clusterroles', namespaced: false }),
    builtin({ group: RBAC, kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false }),
    // Stored as given (no controller runs them): enough for RBAC on them (`kubectl auth can-i create deployments`) and for templates.
    builtin({ group: 'apps', kind: 'Deployment', plural: 'deployments', namespaced: true, shortNames: ['deploy'], statusSubresource: true, scaleSubresource: true, generation: true, categories: ['all'] }),
    builtin({ group: 'networking.k8s.io', kind: 'NetworkPolicy', plural: 'networkpolicies', namespaced: true, shortNames: ['netpol'], generation: true }),
    builtin({ group: ADMISSION, kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations', namespaced: false, generation: true }),
    builtin({ group: ADMISSION, kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations', namespaced: false, generation: true }),
    ...(options.admissionPolicies ? admissionPolicyTypes() : []),
    builtin({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false,
      shortNames: ['crd', 'crds'], statusSubresource: true, generation: true }),
    builtin({ group: 'authorization.k8s.io', kind: 'SubjectAccessReview', plural: 'subjectaccessreviews', namespaced: false, verbs: REVIEW_VERBS }),
    builtin({ group: 'authorization.k8s.io', kind: 'SelfSubjectAccessReview', plural: 'selfsubjectaccessreviews', namespaced: false, verbs: REVIEW_VERBS }),
    builtin({ group: 'authorization.k8s.io', kind: 'LocalSubjectAccessReview', plural: 'localsubjectaccessreviews', namespaced: true, verbs: REVIEW_VERBS }),
    builtin({ group: 'authorization.k8s.io', kind: 'SelfSubjectRulesReview', plural: 'selfsubjectrulesreviews', namespaced: false, verbs: REVIEW_VERBS }),
    builtin({ group: 'authentication.k8s.io', kind: 'SelfSubjectReview', plural: 'selfsubjectreviews', namespaced: false, verbs: REVIEW_VERBS }),
  ];
}

/** Kinds that are computed per request and never stored. */
export const REVIEW_KINDS = new Set(['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview', 'SelfSubjectReview']);

/** The registry of served kinds, looked up by URL segments, by kind, and for discovery. */
export class ResourceRegistry {
  private readonly types = new Map<string, ResourceType>();

  constructor(types: ResourceType[]) {
    for (const t of types) this.add(t);
  }

  add(t: ResourceType): void {
    this.types.set(typeKey(t.group, t.plural), t);
  }

  remove(group: string, plural: string): void {
    this.types.delete(typeKey(group, plural));
  }

  get(group: string, version: string, plural: string): ResourceType | undefined {
    const t = this.types.get(typeKey(group, plural));
    return t && t.version === version ? t : undefined;
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.all().find((t) => apiVersionOf(t) === apiVersion && t.kind === kind);
  }

  byGroupResource(group: string, plural: string): ResourceType | undefined {
    return this.types.get(typeKey(group, plural));
  }

  all(): ResourceType[] {
    return [...this.types.values()];
  }

  /** Group → versions, in the order groups were first registered (core group excluded). */
  groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const t of this.types.values()) {
      if (!t.group) continue;
      const versions = groups.get(t.group) ?? [];
      if (!versions.includes(t.version)) versions.push(t.version);
      groups.set(t.group, versions);
    }
    return groups;
  }
}
