// The namespace reconciler's decisions, pure: from the namespace, the templates, its ApplySet
// parent and the live objects of every kind the parent names or the templates render, what to
// apply, create, prune, orphan and keep; then, from what the writes did, the parent and the
// namespace's phase to leave behind. What a namespace holds has one home (docs/adr/0009): the
// parent (its kinds, the templates applied and failed) and the objects Furnish applied (ownership
// by membership and field manager, the template version in `furnish.dev/hash`, drift by field
// ownership: drift.ts). "Write only what changed": an object at the desired version whose fields
// are all still Furnish's is kept, so a resync of a converged namespace plans zero writes.
import { FIELD_MANAGER, KEY, LEGACY_KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { newestRevision, writtenAfter } from '../kube/revisions.ts';
import type { MetadataPatch } from '../initializers/decide.ts';
import { APPLYSET_PARENT_NAME, applySetParent, isSystemNamespace, matchTemplates, renderNamespace } from '../render/index.ts';
import type { DeletionPolicy, NamespaceInfo, NamespaceTemplate, RenderContext, RenderedObject, RenderProblem, SkipReason, TemplateMode } from '../render/types.ts';
import { appliedFieldsHeld } from './drift.ts';
import { ownedByFurnish } from '../ownership.ts';
import { groupKindOf, groupKindOfKey, isSubset, keyOf, parseGroupKind, parseGroupKinds, refOf, sortedUnique, splitList, type ObjectRef } from './objects.ts';
import { decideAfterReconcile, type PhaseDecision } from './phase.ts';
import type { ObjectFailure } from './report.ts';

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
  return renderContextOfInfo(namespaceInfo(ns));
}

/** What a template renders from for a namespace: its name, creator, organization and annotations ($(ANNOTATION:key|default)). */
export function renderContextOfInfo(ns: NamespaceInfo): RenderContext {
  return { namespace: ns.name, creator: ns.annotations[KEY.creator] ?? '', organization: ns.labels[KEY.organization] ?? '', annotations: ns.annotations };
}

/** Templates that are being deleted no longer count: their objects are pruned per policy. */
export function liveTemplates(templates: readonly NamespaceTemplate[]): NamespaceTemplate[] {
  return templates.filter((t) => !t.metadata.deletionTimestamp);
}

/** The annotations Furnish records on each object it applies. */
export function withRecordedAnnotations(obj: KubeObject, hash: string, policy: DeletionPolicy): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [KEY.appliedHash]: hash, [KEY.deletionPolicy]: policy } } };
}

/** Why a namespace is never furnished, whatever the templates say (decided before they are read); undefined when it may be. */
export function namespaceSkip(ns: KubeObject, systemNamespaces?: readonly string[]): string | undefined {
  if (isSystemNamespace(ns.metadata.name ?? '', systemNamespaces)) return 'system namespace';
  if (ns.metadata.deletionTimestamp) return 'namespace is being deleted';
  return undefined;
}

export function desiredState(ns: KubeObject, templates: readonly NamespaceTemplate[], opts: DesiredOptions = {}): DesiredState {
  const empty = { matched: [], skipped: [], objects: [], warnings: [], problems: [], groupKinds: [] };
  const skip = namespaceSkip(ns, opts.systemNamespaces);
  if (skip) return { ...empty, skip };
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


/** The template name failures of the ApplySet parent are recorded under. */
export const PARENT_FAILURE = '(applyset)';

export function parentGroupKinds(parent: KubeObject | null | undefined): string[] {
  return parseGroupKinds(parent?.metadata.annotations?.[KEY.applySetGroupKinds]);
}

/** What the parent says of the templates: applied in full here, and failed here. */
export function parentTemplates(parent: KubeObject | null | undefined): { applied: string[]; failed: string[] } {
  const a = parent?.metadata.annotations;
  return { applied: splitList(a?.[KEY.appliedTemplates]), failed: splitList(a?.[KEY.failedTemplates]) };
}

/**
 * Whether the templates listed at `listedAt` may be older than what a reconcile must plan from:
 * the change the message names (`atLeast`), or anything Furnish wrote in the namespace (its parent,
 * its objects). Reconciles of one namespace run one at a time (ordering key), so the only way to
 * apply a template's older version over its newer one is to plan from a list older than a write
 * already made from the newer one: then the templates are listed again. Returns the revision the
 * list must reach, or null when it is recent enough.
 */
export function templatesOutdated(listedAt: string, atLeast: string | undefined, parent: KubeObject | null, observed: readonly KubeObject[]): string | null {
  const written = [atLeast, parent?.metadata.resourceVersion, ...[...ownedObjects(observed).values()].map((o) => o.metadata.resourceVersion)];
  const newest = newestRevision(written);
  return newest !== undefined && writtenAfter(newest, listedAt) ? newest : null;
}

/**
 * Whether a live object must be written again: absent, applied from another version of its
 * template (`furnish.dev/hash`), or someone else took over or removed a field Furnish sets
 * (drift.ts): a value the server only normalised stays Furnish's and is no drift.
 */
export function needsApply(want: DesiredObject, live: KubeObject | undefined): boolean {
  return !live || live.metadata.annotations?.[KEY.appliedHash] !== want.hash || !appliedFieldsHeld(want.object, live);
}

/** An object to release under deletionPolicy Orphan, with the patch that takes Furnish's marks off it. */
export interface OrphanRef extends ObjectRef {
  patch: MetadataPatch;
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
  orphan: OrphanRef[];
  setReady: boolean;
  /**
   * Templates dry-run before any of their writes, so that each applies all or nothing
   * (templatesToDryRun); the others are rolled back if a write is refused.
   */
  dryRun: string[];
}

export interface PlanInput {
  namespace: KubeObject;
  desired: DesiredState;
  /** Live objects of every kind in kindsToObserve, anyone's (ownership is judged here: ownedByFurnish). */
  observed: readonly KubeObject[];
  /** Kinds that could not be listed for a permanent reason: nothing of them is released, and the parent keeps naming them. */
  unreadableKinds?: readonly string[];
  /** The live ApplySet parent (null: none yet). */
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

/**
 * The merge patch that releases an object: Furnish's label and annotations off, so that neither
 * they nor its field manager claim it any more (`furnish.dev/observed-hash`, which earlier versions
 * wrote, goes too).
 */
export function orphanPatch(): MetadataPatch {
  return { metadata: { labels: { [KEY.template]: null, [KEY.applySetPartOf]: null }, annotations: { [KEY.appliedHash]: null, [KEY.deletionPolicy]: null, [LEGACY_KEY.observedHash]: null } } };
}

/** The live objects Furnish owns, by key (the parent and objects being deleted aside). */
export function ownedObjects(observed: readonly KubeObject[]): Map<string, KubeObject> {
  const live = new Map<string, KubeObject>();
  for (const obj of observed) {
    if (obj.metadata.name === APPLYSET_PARENT_NAME && obj.kind === 'ConfigMap') continue;
    if (obj.metadata.deletionTimestamp || !ownedByFurnish(obj)) continue;
    live.set(keyOf(obj), obj);
  }
  return live;
}

/** What the dry-run decision knows of the namespace before writing. */
export interface DryRunContext {
  /** Keys of every object listed (anyone's). */
  existing: ReadonlySet<string>;
  /** Kinds that could not be listed: nothing is known absent there. */
  unreadableKinds: readonly string[];
  /** Templates that failed here before (the parent says so). */
  failedBefore: readonly string[];
}

/** Whether a write may change an object that already exists: an Enforce apply over a live object, or one not known absent. A CreateOnly create never changes one (409). */
function mayUpdate(w: Pick<DesiredObject, 'key' | 'groupKind' | 'mode'>, ctx: DryRunContext, unreadable: ReadonlySet<string>): boolean {
  if (w.mode === 'CreateOnly') return false;
  return ctx.existing.has(w.key) || unreadable.has(w.groupKind);
}

/**
 * The templates to dry-run before their writes, so that each applies all or nothing: those with
 * two or more writes (a single write is its own dry run) of which one may change an object that
 * exists, since a rollback cannot undo an update. A template whose writes all create objects seen
 * to be absent (a new namespace) is written at once and, if one is refused, what it created is
 * deleted again (namespace-writes.ts): half the calls of dry runs. A template that failed here
 * before is dry-run too, so that retrying it (every resync) writes nothing while it still fails.
 */
export function templatesToDryRun(writes: readonly Pick<DesiredObject, 'template' | 'key' | 'groupKind' | 'mode'>[], ctx: DryRunContext): string[] {
  const unreadable = new Set(ctx.unreadableKinds);
  const failed = new Set(ctx.failedBefore);
  const count = new Map<string, number>();
  const guarded = new Set<string>();
  for (const w of writes) {
    count.set(w.template, (count.get(w.template) ?? 0) + 1);
    if (failed.has(w.template) || mayUpdate(w, ctx, unreadable)) guarded.add(w.template);
  }
  return [...count].filter(([t, n]) => n > 1 && guarded.has(t)).map(([t]) => t).sort();
}

export function planNamespace(input: PlanInput): NamespacePlan {
  const { desired, namespace, parent } = input;
  const none: NamespacePlan = { parentBefore: null, apply: [], create: [], keep: [], prune: [], orphan: [], setReady: false, dryRun: [] };
  if (desired.skip) return none;
  const live = ownedObjects(input.observed);
  const plan = { ...none, setReady: namespace.metadata.labels?.[KEY.phase] !== PHASE.ready };
  const wanted = new Set<string>();
  for (const want of desired.objects) {
    wanted.add(want.key);
    const inPlace = want.mode === 'CreateOnly' ? live.has(want.key) : !needsApply(want, live.get(want.key));
    if (inPlace) plan.keep.push(want.key);
    else if (want.mode === 'CreateOnly') plan.create.push(want);
    else plan.apply.push(want);
  }
  // A template that cannot render here leaves its objects alone (an object without a template label: while any cannot).
  const unrenderable = new Set(desired.problems.map((p) => p.template));
  for (const [key, obj] of live) {
    if (wanted.has(key)) continue;
    const ref = refOf(obj, KEY.template);
    if (unrenderable.has(ref.template) || (ref.template === '' && unrenderable.size > 0)) continue;
    if (pruneDecision(ref, obj, input.templates) === 'Orphan') plan.orphan.push({ ...ref, patch: orphanPatch() });
    else plan.prune.push(ref);
  }
  const before = parentTemplates(parent);
  plan.dryRun = templatesToDryRun([...plan.apply, ...plan.create], { existing: new Set(input.observed.map(keyOf)), unreadableKinds: input.unreadableKinds ?? [], failedBefore: before.failed });
  const kindsBefore = parentGroupKinds(parent);
  const grown = sortedUnique([...kindsBefore, ...desired.groupKinds]);
  if (grown.length !== kindsBefore.length || (!parent && grown.length > 0)) {
    plan.parentBefore = parentObject(namespace.metadata.name ?? '', { groupKinds: grown, ...expectedTemplates(desired, parent ? before : null) });
  }
  return plan;
}

/**
 * The templates the parent written before the objects names: those it named, and those about to
 * be applied, as applied (a template that cannot render here, as failed). When every write
 * succeeds that is what the reconcile leaves behind, so the parent is written once (a first
 * population: once, not twice); a failure rewrites it afterwards. Named before its objects exist,
 * a template only makes a fan-out or a status recount look at this namespace a moment early.
 */
export function expectedTemplates(desired: Pick<DesiredState, 'matched' | 'problems'>, base: Pick<ParentContent, 'applied' | 'failed'> | null): Pick<ParentContent, 'applied' | 'failed'> {
  const unrenderable = sortedUnique(desired.problems.map((p) => p.template));
  return {
    applied: sortedUnique([...(base?.applied ?? []), ...desired.matched.filter((t) => !unrenderable.includes(t))]),
    failed: sortedUnique([...(base?.failed ?? []), ...unrenderable]),
  };
}

export interface ParentContent {
  groupKinds: readonly string[];
  applied: readonly string[];
  failed: readonly string[];
}

/** The ApplySet parent with Furnish's bookkeeping: which templates are applied, which failed. */
export function parentObject(namespace: string, content: ParentContent): KubeObject {
  const parent = applySetParent(namespace, content.groupKinds.map(parseGroupKind));
  const annotations: Record<string, string> = { ...parent.metadata.annotations, [KEY.appliedTemplates]: sortedUnique(content.applied).join(',') };
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

/** What the writes did. */
export interface WriteResults {
  applied: ReadonlySet<string>;
  created: ReadonlySet<string>;
  /** Keys pruned or orphaned (or found already gone). */
  released: ReadonlySet<string>;
  failures: readonly ObjectFailure[];
}

export interface AfterWrites {
  parent: KubeObject;
  /** Write `parent` now: it differs from what the namespace's parent holds. */
  parentWrite: boolean;
  appliedTemplates: string[];
  failedTemplates: string[];
  phase: PhaseDecision;
  /** The one namespace write (phase, and the removal of keys earlier versions kept there); null when the namespace already says all this. */
  namespacePatch: MetadataPatch | null;
}

/**
 * The group-kinds the parent names afterwards: what is desired, what Furnish still owns here, and
 * what it named of kinds that could not be read (nothing is known gone there).
 */
export function parentKindsAfter(input: PlanInput, results: Pick<WriteResults, 'released'>): string[] {
  const unreadable = new Set(input.unreadableKinds ?? []);
  const held = [...ownedObjects(input.observed).keys()].filter((k) => !results.released.has(k)).map(groupKindOfKey);
  return sortedUnique([...input.desired.groupKinds, ...held, ...parentGroupKinds(input.parent).filter((k) => unreadable.has(k))]);
}

/**
 * The decisions after the writes: the ApplySet parent (group-kinds of everything still ours,
 * templates applied and failed) and the namespace's phase (phase.ts), as one namespace patch.
 */
export function afterWrites(input: PlanInput, plan: NamespacePlan, results: WriteResults, opts: { readyDespiteFailures?: boolean } = {}): AfterWrites {
  const { desired, namespace } = input;
  const failedTemplates = sortedUnique(results.failures.map((f) => f.template).filter((t) => t !== PARENT_FAILURE));
  const appliedTemplates = desired.matched.filter((t) => !failedTemplates.includes(t));
  const groupKinds = parentKindsAfter(input, results);
  const parent = parentObject(namespace.metadata.name ?? '', { groupKinds, applied: appliedTemplates, failed: failedTemplates });
  const base = plan.parentBefore ?? input.parent;
  const parentWanted = Boolean(base) || groupKinds.length > 0 || failedTemplates.length > 0;
  const parentWrite = parentWanted && parentNeedsWrite(base, parent) && !results.failures.some((f) => f.template === PARENT_FAILURE);
  const phase = decideAfterReconcile(namespace, results.failures, opts.readyDespiteFailures);
  return { parent, parentWrite, appliedTemplates, failedTemplates, phase, namespacePatch: withoutLegacyKeys(namespace, phase.patch) };
}

/**
 * The phase patch, with the key earlier versions kept on the namespace (its record of what
 * Furnish applied, a copy of the parent and the objects) removed: the upgrade costs each namespace
 * one write, at its next reconcile.
 */
export function withoutLegacyKeys(ns: KubeObject, patch: MetadataPatch | null): MetadataPatch | null {
  if (ns.metadata.annotations?.[LEGACY_KEY.applied] === undefined) return patch;
  const metadata = patch?.metadata ?? {};
  return { ...patch, metadata: { ...metadata, annotations: { ...metadata.annotations, [LEGACY_KEY.applied]: null } } };
}
