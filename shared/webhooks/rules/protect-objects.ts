// protect-objects: the objects of a NamespaceTemplate with `spec.protect: true` are changed only by
// Furnish's reconciler and the system controllers (the namespace controller emptying a namespace
// being deleted, the garbage collector), as HNC's object validator guards propagated objects. The
// webhook's objectSelector sends only objects labelled furnish.dev/template (old or new object), so
// every request here is about an object Furnish applied, or one labelled as if it had.
// Before any of that, whoever writes: whether an object is Furnish's (ownership.ts) and Furnish's
// ApplySet parent change only by Furnish's reconciler, whatever the template says.
import type { Operation } from '../../admission/types.ts';
import type { PolicySettings } from '../../config/types.ts';
import { FIELD_MANAGER, KEY } from '../../keys.ts';
import type { KubeObject, UserInfo } from '../../kube/types.ts';
import { isFurnishParent, ownedByFurnish, ownershipChange } from '../../ownership.ts';
import { APPLYSET_PARENT_NAME } from '../../render/applyset.ts';
import { canonicalJson } from '../../render/hash.ts';
import { isTemplateDisabled } from '../../render/match.ts';
import type { NamespaceTemplate } from '../../render/types.ts';
import { allowBecause, denyBecause, type RuleOutcome } from './outcome.ts';
import { matchingPrincipal, who } from './principals.ts';

export interface ProtectInput {
  operation: Operation;
  user: UserInfo;
  /** The object as it will be (UPDATE); null or absent on DELETE. */
  object?: KubeObject | null;
  /** The object as it is: its label says which template it belongs to. */
  oldObject?: KubeObject | null;
  /** request.kind.kind, for the message. */
  kind: string;
  /** request.name; absent in a collection delete, where the old object names it. */
  name?: string;
  namespace?: string;
  /** request.options.fieldManager: a write that names Furnish's field manager. */
  fieldManager?: unknown;
  /** `scale` when the request came through `<resource>/scale` (object and oldObject are then the object itself, see scaledObject). */
  subResource?: string;
  settings: PolicySettings;
}

/** The subresource whose request carries a Scale, not the object: judged as an update of the object's replicas. */
export const SCALE = 'scale';

/**
 * Subresources whose request carries the object itself and can change protected content (a Pod's
 * ephemeral containers): judged exactly like an update of the object.
 */
export const JUDGED_AS_OBJECT: readonly string[] = ['ephemeralcontainers'];

/**
 * The object as a scale would leave it: `spec.replicas` from the Scale (autoscaling/v1), the rest
 * as stored. A Scale carries no labels (kube-apiserver builds it from name, namespace, uid and
 * resourceVersion alone, and matches objectSelectors against it), so the webhook reads the object
 * and judges the scale as this update of it.
 */
export function scaledObject(stored: KubeObject, scale: KubeObject | null | undefined): KubeObject {
  const next = structuredClone(stored) as KubeObject & { spec?: Record<string, unknown> };
  const replicas = (scale as { spec?: { replicas?: unknown } } | null | undefined)?.spec?.replicas;
  next.spec = { ...next.spec, replicas };
  if (replicas === undefined) delete next.spec.replicas;
  return next;
}

/** Before the template is read: an allow, or the name of the template that decides. */
export type ProtectFirstStep = RuleOutcome | { lookup: string };

/** The template an object belongs to: its label, as the object is now (never as the request would make it). */
export function templateOf(object: KubeObject | null | undefined): string | undefined {
  const name = object?.metadata?.labels?.[KEY.template];
  return name === undefined || name === '' ? undefined : name;
}

/**
 * What protection covers: everything but status and the metadata the server and controllers keep
 * (resourceVersion, finalizers, managedFields apart from whether they make the object Furnish's).
 * Labels, annotations and ownerReferences count: an owner reference to an object the requester may
 * delete would let the garbage collector delete it.
 */
export function protectedContent(object: KubeObject): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = object as KubeObject & { status?: unknown };
  const meta = metadata ?? {};
  return {
    ...rest,
    metadata: { name: meta.name, namespace: meta.namespace, labels: meta.labels ?? {}, annotations: meta.annotations ?? {}, ownerReferences: meta.ownerReferences ?? [] },
    furnish: ownedByFurnish(object),
  };
}

export function allowOtherOperations(input: ProtectInput): RuleOutcome | undefined {
  if (input.operation === 'UPDATE' || input.operation === 'DELETE') return undefined;
  return allowBecause('allow-other-operations', `${input.operation} is not protected (only UPDATE and DELETE of an existing object)`);
}

export function allowUnlabelled(input: ProtectInput): RuleOutcome | undefined {
  if (templateOf(input.oldObject) !== undefined) return undefined;
  return allowBecause('allow-unlabelled', `the object did not carry label ${KEY.template} (no template's object yet)`);
}

export function allowNotFurnish(input: ProtectInput): RuleOutcome | undefined {
  if (input.oldObject && ownedByFurnish(input.oldObject, input.namespace)) return undefined;
  return allowBecause('allow-not-furnish', `the object is not Furnish's (label ${KEY.applySetPartOf} of the namespace's ApplySet, owned by field manager "${FIELD_MANAGER}"): a label alone does not make it a template's`);
}

const verbOf = (operation: Operation) => (operation === 'DELETE' ? 'delete' : operation === 'CREATE' ? 'create' : 'update');

function objectName(input: ProtectInput): string {
  const name = input.name ?? input.oldObject?.metadata?.name ?? input.object?.metadata?.name ?? '';
  return `${input.kind} "${name}"${input.namespace ? ` in namespace "${input.namespace}"` : ''}`;
}

/**
 * Whether an object is Furnish's, and Furnish's marks on it, change only by Furnish's reconciler
 * (ownershipChange): anyone else could otherwise detach a template's object from pruning at the
 * moment its template stops selecting the namespace, or make their own object Furnish's to have
 * the reconciler delete it. Whatever the template says about protection.
 */
export function refuseOwnershipChange(input: ProtectInput): RuleOutcome | undefined {
  const change = ownershipChange({ old: input.oldObject, next: input.object, namespace: input.namespace ?? '', fieldManager: input.fieldManager });
  if (change === undefined || matchingPrincipal(input.user, input.settings.guard.reconciler) !== undefined) return undefined;
  return denyBecause('protect-ownership', `${who(input.user)} may not ${verbOf(input.operation)} ${objectName(input)}: the request ${change}. `
    + `Only Furnish's reconciler changes whether an object is Furnish's: it prunes it, or releases it under deletionPolicy Orphan, when no template wants it any more`);
}

/**
 * Furnish's ApplySet parent (ConfigMap furnish-applyset) is written only by Furnish's reconciler and
 * deleted only by it or the system controllers (the namespace controller emptying the namespace).
 */
export function refuseParentWrite(input: ProtectInput): RuleOutcome | undefined {
  const ns = input.namespace ?? '';
  if (!isFurnishParent(input.oldObject, ns) && !isFurnishParent(input.object, ns)) return undefined;
  if (allowReconciler(input) ?? allowSystemPrincipals(input) ?? allowUnchanged(input)) return undefined;
  return denyBecause('protect-applyset-parent', `${who(input.user)} may not ${verbOf(input.operation)} ConfigMap "${APPLYSET_PARENT_NAME}"${ns ? ` in namespace "${ns}"` : ''}: `
    + `it is the parent of the namespace's ApplySet, where Furnish records what it applied there, and only Furnish's reconciler writes it`);
}

export function allowReconciler(input: ProtectInput): RuleOutcome | undefined {
  const p = matchingPrincipal(input.user, input.settings.guard.reconciler);
  return p === undefined ? undefined : allowBecause('allow-reconciler', `the reconciler ("${p}") applies and prunes templates' objects`);
}

export function allowSystemPrincipals(input: ProtectInput): RuleOutcome | undefined {
  // Not a scale: the controller that scales (the HorizontalPodAutoscaler's) does so for whoever
  // created the HPA, so a tenant could scale a protected workload through it.
  if (input.subResource === SCALE) return undefined;
  const p = matchingPrincipal(input.user, input.settings.guard.systemPrincipals);
  return p === undefined ? undefined : allowBecause('allow-system-principals', `system principal "${p}" (namespace deletion, garbage collection)`);
}

/** An update that leaves the protected content as it is (status, finalizers, a no-op apply). */
export function allowUnchanged(input: ProtectInput): RuleOutcome | undefined {
  if (input.operation !== 'UPDATE' || !input.object || !input.oldObject) return undefined;
  // Canonical JSON: key order is not content (the server may return a custom resource's keys sorted).
  if (canonicalJson(protectedContent(input.object)) !== canonicalJson(protectedContent(input.oldObject))) return undefined;
  return allowBecause('allow-unchanged', 'the update leaves spec, data, labels, annotations and owner references as they are');
}

/** Every rule that can allow without reading the template; otherwise the template to read. */
export function protectFirstStep(input: ProtectInput): ProtectFirstStep {
  const refused = refuseOwnershipChange(input) ?? refuseParentWrite(input);
  if (refused) return refused;
  const allowed = allowOtherOperations(input) ?? allowUnlabelled(input) ?? allowNotFurnish(input) ?? allowReconciler(input) ?? allowSystemPrincipals(input) ?? allowUnchanged(input);
  return allowed ?? { lookup: templateOf(input.oldObject)! };
}

/** A template protects its objects when it says so and is not disabled (a disabled template manages nothing). */
export function templateProtects(template: NamespaceTemplate | undefined): boolean {
  return template !== undefined && template.spec?.protect === true && !isTemplateDisabled(template);
}

/** The denial, naming the template and how to change the object. */
export function protectionDenial(input: ProtectInput, template: string): string {
  return `${who(input.user)} may not ${input.subResource === SCALE ? 'scale' : verbOf(input.operation)} ${objectName(input)}: it belongs to NamespaceTemplate "${template}", which protects its objects (spec.protect: true), `
    + `so only Furnish's reconciler changes it. To change it, edit the template (kubectl edit namespacetemplate ${template}); Furnish applies the change to every namespace the template selects`;
}

/** After the template has been read (undefined: it no longer exists, so nothing protects the object). */
export function protectOutcome(input: ProtectInput, templateName: string, template: NamespaceTemplate | undefined): RuleOutcome {
  if (!templateProtects(template)) {
    return allowBecause('allow-unprotected', template ? `NamespaceTemplate "${templateName}" does not protect its objects` : `NamespaceTemplate "${templateName}" does not exist`);
  }
  return denyBecause('protect-template-objects', protectionDenial(input, templateName));
}
