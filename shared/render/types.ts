// Types of the NamespaceTemplate API (furnish.dev/v1alpha1) and of the render pipeline.
import type { KubeObject, LabelSelector, StringMap } from '../kube/types.ts';

export const GROUP = 'furnish.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export type DeletionPolicy = 'Delete' | 'Orphan';
export type TemplateMode = 'Enforce' | 'CreateOnly';
/** Whether a template applies to namespaces created before it (see README "Existing namespaces"). */
export type ExistingNamespaces = 'Adopt' | 'Ignore';

export interface NamespaceTemplateSpec {
  namespaces?: { labelSelector?: LabelSelector | null } | null;
  templates?: KubeObject[];
  deletionPolicy?: DeletionPolicy;
  mode?: TemplateMode;
  /** Default Adopt. */
  existingNamespaces?: ExistingNamespaces;
  /**
   * true: only Furnish's reconciler (and the system controllers) may update or delete the objects
   * this template applied (webhook protect-objects, README "Protected objects"). Default false.
   */
  protect?: boolean;
}

export interface TemplateCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface TemplateFailure {
  namespace: string;
  object: string;
  reason: string;
  time?: string;
}

export interface NamespaceTemplateStatus {
  observedGeneration?: number;
  matched?: number;
  applied?: number;
  failed?: number;
  conditions?: TemplateCondition[];
  recentFailures?: TemplateFailure[];
}

export interface NamespaceTemplate extends KubeObject {
  spec: NamespaceTemplateSpec;
  status?: NamespaceTemplateStatus;
}

/** What matching and rendering need to know about a namespace. */
export interface NamespaceInfo {
  name: string;
  labels: StringMap;
  annotations: StringMap;
  /** metadata.creationTimestamp; absent for a namespace being created (admission). */
  created?: string;
}

/** Values of the tokens `$(CREATOR)`, `$(NAMESPACE)`, `$(ORGANIZATION)`. */
export interface RenderContext {
  namespace: string;
  creator: string;
  organization: string;
  /** The namespace's annotations, for `$(ANNOTATION:key|default)`. */
  annotations?: StringMap;
}

export type SkipReasonCode =
  | 'system-namespace'
  | 'opted-out'
  | 'template-disabled'
  | 'not-selected'
  | 'invalid-selector'
  | 'permission-required'
  | 'existed-before-template';

/** Why a template does not apply to a namespace: every skip is explainable. */
export interface SkipReason {
  template: string;
  code: SkipReasonCode;
  message: string;
}

export interface MatchResult {
  /** Templates that apply, sorted by name ascending. */
  matched: NamespaceTemplate[];
  skipped: SkipReason[];
}

/** One object Furnish would apply, with where it came from. */
export interface RenderedObject {
  /** Template the object came from (the last one to define it). */
  template: string;
  /** `group/Kind/namespace/name` (core group empty): the object's identity. */
  key: string;
  /** Stable content hash (sha256 hex of the canonical JSON of `object`). */
  hash: string;
  object: KubeObject;
}

export interface RenderResult {
  objects: RenderedObject[];
  /** Human-readable warnings, e.g. a later template overriding an earlier one's object. */
  warnings: string[];
  /**
   * Templates that could not be rendered for this namespace. Such a template contributes no
   * object at all (a template renders all or nothing); the others still render.
   */
  problems: RenderProblem[];
  /** The ApplySet parent ConfigMap listing the group-kinds of `objects` (apply it first). */
  parent: KubeObject;
}

/** A problem in a template, with the JSON-ish path to it (`spec.templates[2].metadata.name`). */
export interface ValidationProblem {
  path: string;
  message: string;
}

/** A problem met while rendering one template for one namespace. */
export interface RenderProblem extends ValidationProblem {
  template: string;
}

/** A Kubernetes API group and kind; the core group is `''`. */
export interface GroupKind {
  group: string;
  kind: string;
}
