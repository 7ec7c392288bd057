// The namespace reconciler's decisions, pure: from the namespace, the templates and the objects
// that carry our label, what to apply, create, prune, orphan and keep. "Write only what changed":
// an object whose recorded hash matches and whose fields are still ours is kept, so a resync of
// a converged namespace plans zero writes.
import { FIELD_MANAGER, KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { APPLYSET_PARENT_NAME, applySetParent, isSystemNamespace, matchTemplates, renderNamespace } from '../render/index.ts';
import type { DeletionPolicy, NamespaceInfo, NamespaceTemplate, RenderContext, RenderedObject, RenderProblem, SkipReason, TemplateMode } from '../render/types.ts';
import { unchangedSinceApply } from './observed.ts';
import { groupKindOf, isSubset, keyOf, parseGroupKind, parseGroupKinds, refOf, sortedUnique, splitList, type ObjectRef } from './objects.ts';

export { FIELD_MANAGER };

export interface DesiredObject extends RenderedObject {
  mode: TemplateMode;
  deletionPolicy: DeletionPolicy;
  groupKind: string;
}

export interface DesiredState {
  /** Set when the namespace is left alone entirely (system namespace, being deleted). */
  skip?: string;
  matched: string[];
  skipped: SkipReason[];
  objects: DesiredObject[];
  warnings: string[];
  /** Templates that could not be rendered here: reported, and their live objects are left alone. */
  problems: RenderProblem[];
  /** ApplySet group-kinds of the desired objects, sorted. */
  groupKinds: string[];
}

export interface DesiredOptions {
  systemNamespaces?: readonly string[];
  /** Creator holds `use` on namespacetemplates/<name> (templates with require-permission). */
  granted?: (template: string) => boolean;
}

export function namespaceInfo(ns: KubeObject): NamespaceInfo {
  const created = ns.metadata.creationTimestamp;
  return { name: ns.metadata.name ?? '', labels: { ...ns.metadata.labels }, annotations: { ...ns.metadata.annotations }, ...(created ? { created } : {}) };
}

export function renderContextOf(ns: KubeObject): RenderContext {
  return {
    namespace: ns.metadata.name ?? '',
    creator: ns.metadata.annotations?.[KEY.creator] ?? '',
    organization: ns.metadata.labels?.[KEY.organization] ?? '',
    annotations: { ...ns.metadata.annotations },
  };
}

/** Templates that are being deleted no longer count: their objects are pruned per policy. */
export function liveTemplates(templates: readonly NamespaceTemplate[]): NamespaceTemplate[] {
  return templates.filter((t) => !t.metadata.deletionTimestamp);
}

/** The annotations Furnish records on each object it applies. */
export function withRecordedAnnotations(obj: KubeObject, hash: string, policy: DeletionPolicy): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [KEY.appliedHash]: hash, [KEY.deletionPolicy]: policy } } };
}

export function desiredState(ns: KubeObject, templates: readonly NamespaceTemplate[], opts: DesiredOptions = {}): DesiredState {
  const name = ns.metadata.name ?? '';
  const empty = { matched: [], skipped: [], objects: [], warnings: [], problems: [], groupKinds: [] };
  if (isSystemNamespace(name, opts.systemNamespaces)) return { ...empty, skip: 'system namespace' };
  if (ns.metadata.deletionTimestamp) return { ...empty, skip: 'namespace is being deleted' };
  const match = matchTemplates(namespaceInfo(ns), liveTemplates(templates), { systemNamespaces: opts.systemNamespaces, granted: opts.granted });
  const rendered = renderNamespace(match.matched, renderContextOf(ns));
  const byName = new Map(match.matched.map((t) => [t.metadata.name ?? '', t]));
  const objects = rendered.objects.map((r): DesiredObject => {
    const spec = byName.get(r.template)?.spec;
    const deletionPolicy = spec?.deletionPolicy ?? 'Delete';
    return { ...r, object: withRecordedAnnotations(r.object, r.hash, deletionPolicy), mode: spec?.mode ?? 'Enforce', deletionPolicy, groupKind: groupKindOf(r.object.apiVersion, r.object.kind) };
  });
  return {
    matched: match.matched.map((t) => t.metadata.name ?? ''),
    skipped: match.skipped,
    objects,
    warnings: rendered.warnings,
    problems: rendered.problems,
    groupKinds: sortedUnique(objects.map((o) => o.groupKind)),
  };
}

/** What to read before planning. */
export type Observation =
  /** The parent records the inventory: GET each object in it and each desired one. */
  | { by: 'inventory'; keys: string[] }
  /** No inventory (a parent written by another tool, or none): LIST these group-kinds by our label. */
  | { by: 'kinds'; groupKinds: string[] };

export function toObserve(parent: KubeObject | null, desired: DesiredState): Observation {
  const inventory = parentInventory(parent);
  if (inventory || !parent) return { by: 'inventory', keys: sortedUnique([...(inventory ?? []), ...desired.objects.map((o) => o.key)]) };
  return { by: 'kinds', groupKinds: sortedUnique([...parentGroupKinds(parent), ...desired.groupKinds]) };
}

export function parentInventory(parent: KubeObject | null): string[] | null {
  const raw = parent?.metadata.annotations?.[KEY.inventory];
  return raw === undefined ? null : splitList(raw);
}

export function parentGroupKinds(parent: KubeObject | null): string[] {
  return parseGroupKinds(parent?.metadata.annotations?.[KEY.applySetGroupKinds]);
}

/** Whether a live object must be written again: absent, another version of the template, or drifted. */
export function needsApply(want: DesiredObject, live: KubeObject | undefined): boolean {
  return !live || !unchangedSinceApply(want.object, want.hash, live);
}

export interface NamespacePlan {
  /** ApplySet parent to write before any object (its group-kinds grow first, KEP-3659). */
  parentBefore: KubeObject | null;
  /** Enforce: server-side apply. */
  apply: DesiredObject[];
  /** CreateOnly objects that are absent. */
  create: DesiredObject[];
  /** Keys of desired objects that need no write. */
  keep: string[];
  prune: ObjectRef[];
  /** Objects released under deletionPolicy Orphan: our labels come off, the object stays. */
  orphan: ObjectRef[];
  setReady: boolean;
}

export interface PlanInput {
  namespace: KubeObject;
  desired: DesiredState;
  /** Live objects in the namespace carrying label furnish.dev/template. */
  observed: readonly KubeObject[];
  parent: KubeObject | null;
  /** Every existing template, to read the current deletionPolicy of a template that still exists. */
  templates: readonly NamespaceTemplate[];
}

/** Policy for an object nobody wants any more: its template's current one, else what was recorded on it. */
export function pruneDecision(ref: ObjectRef, live: KubeObject, templates: readonly NamespaceTemplate[]): DeletionPolicy {
  const template = liveTemplates(templates).find((t) => t.metadata.name === ref.template);
  const recorded = live.metadata.annotations?.[KEY.deletionPolicy];
  return template?.spec.deletionPolicy ?? (recorded === 'Orphan' ? 'Orphan' : 'Delete');
}

export function planNamespace(input: PlanInput): NamespacePlan {
  const { desired, namespace } = input;
  const none: NamespacePlan = { parentBefore: null, apply: [], create: [], keep: [], prune: [], orphan: [], setReady: false };
  if (desired.skip) return none;
  const live = new Map<string, KubeObject>();
  for (const obj of input.observed) {
    if (obj.metadata.name === APPLYSET_PARENT_NAME && obj.kind === 'ConfigMap') continue;
    if (obj.metadata.deletionTimestamp) continue;
    live.set(keyOf(obj), obj);
  }
  const plan = { ...none, setReady: namespace.metadata.labels?.[KEY.phase] !== PHASE.ready };
  const wanted = new Set<string>();
  for (const want of desired.objects) {
    wanted.add(want.key);
    const have = live.get(want.key);
    if (want.mode === 'CreateOnly') {
      if (have) plan.keep.push(want.key);
      else plan.create.push(want);
    } else if (needsApply(want, have)) plan.apply.push(want);
    else plan.keep.push(want.key);
  }
  const unrenderable = new Set(desired.problems.map((p) => p.template));
  for (const [key, obj] of live) {
    if (wanted.has(key)) continue;
    // Only objects that still carry our label are ours to prune: someone took it off, it is theirs.
    if (!obj.metadata.labels?.[KEY.template]) continue;
    const ref = refOf(obj, KEY.template);
    if (unrenderable.has(ref.template)) continue;
    if (pruneDecision(ref, obj, input.templates) === 'Orphan') plan.orphan.push(ref);
    else plan.prune.push(ref);
  }
  const before = parentGroupKinds(input.parent);
  const grown = sortedUnique([...before, ...desired.groupKinds]);
  const inventory = parentInventory(input.parent) ?? [];
  const grownInventory = sortedUnique([...inventory, ...desired.objects.map((o) => o.key)]);
  if (grown.length !== before.length || grownInventory.length !== inventory.length || (!input.parent && grown.length > 0)) {
    plan.parentBefore = parentObject(namespace.metadata.name ?? '', {
      groupKinds: grown,
      inventory: grownInventory,
      applied: splitList(input.parent?.metadata.annotations?.[KEY.appliedTemplates]),
      failed: splitList(input.parent?.metadata.annotations?.[KEY.failedTemplates]),
    });
  }
  return plan;
}

export interface ParentContent {
  groupKinds: readonly string[];
  /** Keys of the objects applied (ours, labelled), for observing by GET rather than LIST. */
  inventory: readonly string[];
  applied: readonly string[];
  failed: readonly string[];
}

/** The ApplySet parent with Furnish's bookkeeping: which templates are applied, which failed. */
export function parentObject(namespace: string, content: ParentContent): KubeObject {
  const parent = applySetParent(namespace, content.groupKinds.map(parseGroupKind));
  const annotations: Record<string, string> = {
    ...parent.metadata.annotations,
    [KEY.appliedTemplates]: sortedUnique(content.applied).join(','),
    [KEY.inventory]: sortedUnique(content.inventory).join(','),
  };
  if (content.failed.length > 0) annotations[KEY.failedTemplates] = sortedUnique(content.failed).join(',');
  return { ...parent, metadata: { ...parent.metadata, annotations } };
}

/** Whether the live parent differs from the one we want, in the fields we own. */
export function parentNeedsWrite(live: KubeObject | null, want: KubeObject): boolean {
  if (!live) return true;
  const wantFailed = want.metadata.annotations?.[KEY.failedTemplates];
  if (wantFailed === undefined && live.metadata.annotations?.[KEY.failedTemplates] !== undefined) return true;
  return !isSubset({ metadata: { labels: want.metadata.labels ?? {}, annotations: want.metadata.annotations ?? {} } }, live);
}

/** Plans with nothing to write, used to assert that a resync is a no-op. */
export function planWrites(plan: NamespacePlan): number {
  return (plan.parentBefore ? 1 : 0) + plan.apply.length + plan.create.length + plan.prune.length + plan.orphan.length + (plan.setReady ? 1 : 0);
}
