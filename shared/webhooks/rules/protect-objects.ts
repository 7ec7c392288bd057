// protect-objects: the objects of a NamespaceTemplate with `spec.protect: true` are changed only by
// Furnish's reconciler and the system controllers (the namespace controller emptying a namespace
// being deleted, the garbage collector), as HNC's object validator guards propagated objects. The
// webhook's objectSelector sends only objects labelled furnish.dev/template (old or new object), so
// every request here is about an object Furnish applied, or one labelled as if it had.
import type { Operation } from '../../admission/types.ts';
import type { PolicySettings } from '../../config/types.ts';
import { FIELD_MANAGER, KEY } from '../../keys.ts';
import type { KubeObject, UserInfo } from '../../kube/types.ts';
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
  settings: PolicySettings;
}

/** Before the template is read: an allow, or the name of the template that decides. */
export type ProtectFirstStep = RuleOutcome | { lookup: string };

/** The template an object belongs to: its label, as the object is now (never as the request would make it). */
export function templateOf(object: KubeObject | null | undefined): string | undefined {
  const name = object?.metadata?.labels?.[KEY.template];
  return name === undefined || name === '' ? undefined : name;
}

/**
 * Whether Furnish's field manager wrote the object: a label alone is something anyone may put on
 * their own object (which Furnish then does not protect), a field manager entry is not.
 */
export function appliedByFurnish(object: KubeObject | null | undefined): boolean {
  const entries = object?.metadata?.managedFields;
  return Array.isArray(entries) && entries.some((e) => typeof e === 'object' && e !== null && (e as { manager?: unknown }).manager === FIELD_MANAGER);
}

/**
 * What protection covers: everything but status and the metadata the server and controllers keep
 * (resourceVersion, finalizers, managedFields apart from whether Furnish is one of its managers).
 * Labels, annotations and ownerReferences count: an owner reference to an object the requester may
 * delete would let the garbage collector delete it; dropping Furnish's managedFields entry would
 * unprotect it.
 */
export function protectedContent(object: KubeObject): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = object as KubeObject & { status?: unknown };
  const meta = metadata ?? {};
  return {
    ...rest,
    metadata: { name: meta.name, namespace: meta.namespace, labels: meta.labels ?? {}, annotations: meta.annotations ?? {}, ownerReferences: meta.ownerReferences ?? [] },
    appliedByFurnish: appliedByFurnish(object),
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

export function allowNotAppliedByFurnish(input: ProtectInput): RuleOutcome | undefined {
  if (appliedByFurnish(input.oldObject)) return undefined;
  return allowBecause('allow-not-applied-by-furnish', `field manager "${FIELD_MANAGER}" never wrote the object (a label alone does not make it a template's)`);
}

export function allowReconciler(input: ProtectInput): RuleOutcome | undefined {
  const p = matchingPrincipal(input.user, input.settings.guard.reconciler);
  return p === undefined ? undefined : allowBecause('allow-reconciler', `the reconciler ("${p}") applies and prunes templates' objects`);
}

export function allowSystemPrincipals(input: ProtectInput): RuleOutcome | undefined {
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
  const allowed = allowOtherOperations(input) ?? allowUnlabelled(input) ?? allowNotAppliedByFurnish(input) ?? allowReconciler(input) ?? allowSystemPrincipals(input) ?? allowUnchanged(input);
  return allowed ?? { lookup: templateOf(input.oldObject)! };
}

/** A template protects its objects when it says so and is not disabled (a disabled template manages nothing). */
export function templateProtects(template: NamespaceTemplate | undefined): boolean {
  return template !== undefined && template.spec?.protect === true && !isTemplateDisabled(template);
}

/** The denial, naming the template and how to change the object. */
export function protectionDenial(input: ProtectInput, template: string): string {
  const verb = input.operation === 'DELETE' ? 'delete' : 'update';
  const name = input.name ?? input.oldObject?.metadata?.name ?? '';
  const where = input.namespace ? ` in namespace "${input.namespace}"` : '';
  const label = input.operation === 'UPDATE' && templateOf(input.object) !== template ? ` (changing or removing label ${KEY.template} is an update of it too)` : '';
  return `${who(input.user)} may not ${verb} ${input.kind} "${name}"${where}${label}: it belongs to NamespaceTemplate "${template}", which protects its objects (spec.protect: true), `
    + `so only Furnish's reconciler changes it. To change it, edit the template (kubectl edit namespacetemplate ${template}); Furnish applies the change to every namespace the template selects`;
}

/** After the template has been read (undefined: it no longer exists, so nothing protects the object). */
export function protectOutcome(input: ProtectInput, templateName: string, template: NamespaceTemplate | undefined): RuleOutcome {
  if (!templateProtects(template)) {
    return allowBecause('allow-unprotected', template ? `NamespaceTemplate "${templateName}" does not protect its objects` : `NamespaceTemplate "${templateName}" does not exist`);
  }
  return denyBecause('protect-template-objects', protectionDenial(input, templateName));
}
