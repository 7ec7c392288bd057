// The namespace reconciler's decisions, pure: from the namespace, the templates, the record of
// what Furnish applied there (record.ts) and, when read, the live objects Furnish owns, what to
// apply, create, prune, orphan and keep; then, from what the writes did, the record, the ApplySet
// parent and the namespace's phase to leave behind. "Write only what changed": an object whose
// recorded hash matches and whose fields are still ours is kept, so a resync of a converged
// namespace plans zero writes.
import { FIELD_MANAGER, KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { writtenAfter } from '../kube/revisions.ts';
import type { MetadataPatch } from '../initializers/decide.ts';
import { APPLYSET_PARENT_NAME, applySetParent, isSystemNamespace, matchTemplates, renderNamespace } from '../render/index.ts';
import type { DeletionPolicy, NamespaceInfo, NamespaceTemplate, RenderContext, RenderedObject, RenderProblem, SkipReason, TemplateMode } from '../render/types.ts';
import { observedException, unchangedSinceApply } from './observed.ts';
import { ownedByFurnish } from '../ownership.ts';
import { groupKindOf, groupKindOfKey, isSubset, keyOf, parseGroupKind, parseGroupKinds, refOf, sortedUnique, splitList, type ObjectRef } from './objects.ts';
import { decideAfterReconcile, type PhaseDecision } from './phase.ts';
import { recordChange, type AppliedRecord, type RecordedObject } from './record.ts';
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

/** Every group-kind any template applies: a template that stops selecting a namespace still names the kinds to look for. */
export function templateGroupKinds(templates: readonly NamespaceTemplate[]): string[] {
  return sortedUnique(templates.flatMap((t) => (t.spec?.templates ?? []).map((o) => groupKindOf(String(o.apiVersion ?? ''), String(o.kind ?? '')))));
}

/**
 * The kinds to list when the objects are read: every kind Furnish may have applied here (desired
 * now, recorded, named by the parent, or applied by any template), so that an object whose
 * template no longer selects the namespace is still found and pruned.
 */
export function kindsToObserve(desired: DesiredState, record: AppliedRecord | null, parent: KubeObject | null, templates: readonly NamespaceTemplate[]): string[] {
  const recorded = record ? [...record.groupKinds, ...Object.keys(record.objects).map(groupKindOfKey)] : [];
  return sortedUnique([...desired.groupKinds, ...recorded, ...parentGroupKinds(parent), ...templateGroupKinds(templates)]);
}

/**
 * A namespace Furnish has not populated yet: phase `pending` and no record. Furnish writes the
 * ApplySet parent before any object of its own, so while the parent is absent nothing of
 * Furnish's is there to find or prune, and its first population need not list the kinds other
 * templates, a record or a parent would add (kindsAbsenceDecides). That is not "nothing is
 * there": the guard lets system principals (a ServiceAccount `default`, a ConfigMap
 * `kube-root-ca.crt`) and holders of `initialize` (a GitOps tool syncing the namespace with its
 * objects) write into a pending namespace. A namespace without the phase (one that existed before
 * its templates) is read in full.
 */
export function unpopulated(ns: KubeObject, record: AppliedRecord | null): boolean {
  return record === null && ns.metadata.labels?.[KEY.phase] === PHASE.pending;
}

/**
 * The kinds an unpopulated namespace's first population lists: those of the Enforce objects of
 * templates with two or more writes, whose all-or-nothing rests on seeing their objects absent
 * (templatesToDryRun: an existing one makes the template dry-run first, since a rollback cannot
 * undo an update). A single write is its own dry run and a CreateOnly create never changes an
 * object, so their kinds need no list.
 */
export function kindsAbsenceDecides(desired: Pick<DesiredState, 'objects'>): string[] {
  // The templates that would be dry-run were every object already there (existing: null).
  const guarded = new Set(templatesToDryRun(desired.objects, { existing: null, unreadableKinds: [], failedBefore: [] }));
  return sortedUnique(desired.objects.filter((o) => o.mode !== 'CreateOnly' && guarded.has(o.template)).map((o) => o.groupKind));
}

/**
 * Whether templates held from before (listed at `heldAt`) may be older than what the namespace
 * was last reconciled with: its ApplySet parent or an object Furnish owns there was written after
 * that list. A message that arrives late (a redelivery, or overtaken by a later template's
 * fan-out) would otherwise apply a template's older version over its newer one. Every reconcile
 * that changes what a namespace holds writes an object or the parent (a release rewrites the
 * parent's list of templates), so a namespace untouched since the list is safe to plan from it: a
 * new namespace always is.
 */
export function heldSnapshotOutdated(heldAt: string, parent: KubeObject | null, observed: readonly KubeObject[]): boolean {
  const written = [...(parent ? [parent] : []), ...ownedObjects(observed).values()];
  return written.some((o) => writtenAfter(o.metadata.resourceVersion, heldAt));
}

/** Whether a live object must be written again: absent, another version of the template, or drifted since the recorded apply. */
export function needsApply(want: DesiredObject, live: KubeObject | undefined, recorded: Pick<RecordedObject, 'observed'> | undefined): boolean {
  return !live || !unchangedSinceApply(want.object, want.hash, live, recorded?.observed);
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
  /** Planned from the record alone and something may have to be released: read the objects and plan again. */
  needsObservation: boolean;
}

export interface PlanInput {
  namespace: KubeObject;
  desired: DesiredState;
  /**
   * Live objects of every kind in kindsToObserve (ownership is judged here, ownedByFurnish);
   * null when they were not read: then the record stands for them (a fan-out, drift being
   * reported by the relay's drift watch, which asks for a full reconcile).
   */
  observed: readonly KubeObject[] | null;
  /** Kinds that could not be listed for a permanent reason: what the record says of them stays. */
  unreadableKinds?: readonly string[];
  record: AppliedRecord;
  /** The live ApplySet parent when it was read (null: absent); undefined: not read, the record stands for it. */
  parent?: KubeObject | null;
  /** Every existing template, to read the current deletionPolicy of a template that still exists. */
  templates: readonly NamespaceTemplate[];
  /**
   * A fan-out's word on the template that changed: what this namespace holds of it (object key →
   * furnish.dev/hash, read cluster-wide once per fan-out). With it, planning without reading the
   * objects is possible.
   */
  held?: HeldObjects;
}

export interface HeldObjects {
  template: string;
  hashes: Readonly<Record<string, string>>;
  /** The group-kinds `hashes` covers (the fan-out read those whose entries changed); absent: every kind. */
  kinds?: readonly string[];
}

/** Policy for an object nobody wants any more: its template's current one, else what was recorded on it. */
export function pruneDecision(ref: ObjectRef, live: KubeObject, templates: readonly NamespaceTemplate[]): DeletionPolicy {
  const template = liveTemplates(templates).find((t) => t.metadata.name === ref.template);
  const recorded = live.metadata.annotations?.[KEY.deletionPolicy];
  return template?.spec.deletionPolicy ?? (recorded === 'Orphan' ? 'Orphan' : 'Delete');
}

/** The merge patch that releases an object: Furnish's label and annotations off, so that neither they nor its field manager claim it any more. */
export function orphanPatch(): MetadataPatch {
  return { metadata: { labels: { [KEY.template]: null, [KEY.applySetPartOf]: null }, annotations: { [KEY.appliedHash]: null, [KEY.deletionPolicy]: null, [KEY.observedHash]: null } } };
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

/** Parent content as it stands before this reconcile: the live parent when read, else what the record says it holds. */
function parentBase(input: PlanInput): ParentContent | null {
  if (input.parent !== undefined) {
    if (!input.parent) return null;
    return {
      groupKinds: parentGroupKinds(input.parent),
      applied: splitList(input.parent.metadata.annotations?.[KEY.appliedTemplates]),
      failed: splitList(input.parent.metadata.annotations?.[KEY.failedTemplates]),
    };
  }
  const r = input.record;
  const empty = r.groupKinds.length === 0 && r.applied.length === 0 && r.failed.length === 0 && Object.keys(r.objects).length === 0;
  return empty ? null : { groupKinds: r.groupKinds, applied: r.applied, failed: r.failed };
}

/**
 * Unread: the fan-out's word on its template's objects of the kinds it read (held at this very
 * hash; CreateOnly: held at all); for the other templates and kinds, which did not change, the
 * record (an object recorded as applied by this template, which did not fail here, is in place;
 * one recorded as another's, which overrode it and no longer does, is not).
 */
function inPlaceUnread(want: DesiredObject, record: AppliedRecord, held: HeldObjects | undefined): boolean {
  if (held && want.template === held.template && (!held.kinds || held.kinds.includes(want.groupKind))) return want.mode === 'CreateOnly' ? want.key in held.hashes : held.hashes[want.key] === want.hash;
  return record.objects[want.key]?.template === want.template && !record.failed.includes(want.template);
}

/** What the dry-run decision knows of the namespace before writing. */
export interface DryRunContext {
  /** Keys of every object listed (anyone's); null when the objects were not read (a fan-out planned from the record). */
  existing: ReadonlySet<string> | null;
  /** Kinds that could not be listed: nothing is known absent there. */
  unreadableKinds: readonly string[];
  /** Templates that failed here before (record, parent). */
  failedBefore: readonly string[];
}

/** Whether a write may change an object that already exists: an Enforce apply over a live object, or one not known absent. A CreateOnly create never changes one (409). */
function mayUpdate(w: Pick<DesiredObject, 'key' | 'groupKind' | 'mode'>, ctx: DryRunContext, unreadable: ReadonlySet<string>): boolean {
  if (w.mode === 'CreateOnly') return false;
  return ctx.existing === null || ctx.existing.has(w.key) || unreadable.has(w.groupKind);
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

/** The dry-run decision's view of a plan input. */
function dryRunContext(input: PlanInput): DryRunContext {
  return {
    existing: input.observed ? new Set(input.observed.map(keyOf)) : null,
    unreadableKinds: input.unreadableKinds ?? [],
    failedBefore: sortedUnique([...input.record.failed, ...(parentBase(input)?.failed ?? [])]),
  };
}

export function planNamespace(input: PlanInput): NamespacePlan {
  const { desired, namespace, record } = input;
  const none: NamespacePlan = { parentBefore: null, apply: [], create: [], keep: [], prune: [], orphan: [], setReady: false, dryRun: [], needsObservation: false };
  if (desired.skip) return none;
  const live = input.observed ? ownedObjects(input.observed) : null;
  const plan = { ...none, setReady: namespace.metadata.labels?.[KEY.phase] !== PHASE.ready };
  const wanted = new Set<string>();
  for (const want of desired.objects) {
    wanted.add(want.key);
    const inPlace = !live ? inPlaceUnread(want, record, input.held) : want.mode === 'CreateOnly' ? live.has(want.key) : !needsApply(want, live.get(want.key), record.objects[want.key]);
    if (inPlace) plan.keep.push(want.key);
    else if (want.mode === 'CreateOnly') plan.create.push(want);
    else plan.apply.push(want);
  }
  const unrenderable = new Set(desired.problems.map((p) => p.template));
  const keptForProblems = (template: string) => unrenderable.has(template) || (template === '' && unrenderable.size > 0);
  if (!live) {
    // Releasing needs the live object (ownership, policy): anything recorded or held that is no longer wanted means reading.
    const held = input.held ? Object.keys(input.held.hashes).map((key) => [key, input.held!.template] as const) : [];
    const known = [...Object.entries(record.objects).map(([key, r]) => [key, r.template] as const), ...held];
    plan.needsObservation = known.some(([key, template]) => !wanted.has(key) && !keptForProblems(template));
  } else {
    for (const [key, obj] of live) {
      if (wanted.has(key)) continue;
      const ref = { ...refOf(obj, KEY.template) };
      if (!ref.template) ref.template = record.objects[key]?.template ?? '';
      if (keptForProblems(ref.template)) continue;
      if (pruneDecision(ref, obj, input.templates) === 'Orphan') plan.orphan.push({ ...ref, patch: orphanPatch() });
      else plan.prune.push(ref);
    }
  }
  plan.dryRun = templatesToDryRun([...plan.apply, ...plan.create], dryRunContext(input));
  const base = parentBase(input);
  const before = base?.groupKinds ?? [];
  const grown = sortedUnique([...before, ...record.groupKinds, ...desired.groupKinds]);
  if (grown.length !== before.length || (!base && grown.length > 0)) {
    plan.parentBefore = parentObject(namespace.metadata.name ?? '', { groupKinds: grown, ...expectedTemplates(desired, base) });
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

/** Plans with nothing to write, used to assert that a resync is a no-op. */
export function planWrites(plan: NamespacePlan): number {
  return (plan.parentBefore ? 1 : 0) + plan.apply.length + plan.create.length + plan.prune.length + plan.orphan.length + (plan.setReady ? 1 : 0);
}

/** What the writes did. */
export interface WriteResults {
  /** Keys applied, with the hash of what the server stored (observed.ts). */
  applied: ReadonlyMap<string, string>;
  created: ReadonlySet<string>;
  /** Keys pruned or orphaned (or found already gone). */
  released: ReadonlySet<string>;
  failures: readonly ObjectFailure[];
}

export interface AfterWrites {
  record: AppliedRecord;
  parent: KubeObject;
  /** Write `parent` now: it differs from what the namespace's parent holds. */
  parentWrite: boolean;
  appliedTemplates: string[];
  failedTemplates: string[];
  phase: PhaseDecision;
  /** The one namespace write: phase and record together; null when the namespace already says all this. */
  namespacePatch: MetadataPatch | null;
}

/**
 * What is recorded as applied here afterwards: objects written now, kept ones as recorded, and
 * what stays of before (not released). Read objects settle it: an object no longer there, or no
 * longer Furnish's, leaves the record unless its kind could not be read.
 */
export function finalRecordObjects(input: PlanInput, plan: NamespacePlan, results: WriteResults): Record<string, RecordedObject> {
  const live = input.observed ? ownedObjects(input.observed) : null;
  const unreadable = new Set(input.unreadableKinds ?? []);
  const objects: Record<string, RecordedObject> = {};
  for (const [key, r] of Object.entries(input.record.objects)) {
    if (results.released.has(key)) continue;
    if (live && !live.has(key) && !unreadable.has(groupKindOfKey(key))) continue;
    objects[key] = r;
  }
  if (live) {
    for (const [key, obj] of live) {
      if (results.released.has(key) || objects[key]) continue;
      objects[key] = { template: obj.metadata.labels?.[KEY.template] ?? '', observed: '' };
    }
  }
  const kept = new Set(plan.keep);
  for (const want of input.desired.objects) {
    const observed = results.applied.get(want.key);
    if (observed !== undefined) objects[want.key] = { template: want.template, observed: observedException(want.object, want.hash, observed) };
    else if (results.created.has(want.key) || (kept.has(want.key) && !objects[want.key])) objects[want.key] = { template: want.template, observed: '' };
  }
  return objects;
}

/**
 * The decisions after the writes: the record, the ApplySet parent (group-kinds of everything
 * still ours, templates applied and failed) and the namespace's phase (phase.ts), as one
 * namespace patch.
 */
export function afterWrites(input: PlanInput, plan: NamespacePlan, results: WriteResults, opts: { readyDespiteFailures?: boolean } = {}): AfterWrites {
  const { desired, namespace } = input;
  const failedTemplates = sortedUnique(results.failures.map((f) => f.template).filter((t) => t !== PARENT_FAILURE));
  const appliedTemplates = desired.matched.filter((t) => !failedTemplates.includes(t));
  const objects = finalRecordObjects(input, plan, results);
  const groupKinds = sortedUnique([...desired.groupKinds, ...Object.keys(objects).map(groupKindOfKey)]);
  const record: AppliedRecord = { objects, groupKinds, applied: appliedTemplates, failed: failedTemplates };
  const name = namespace.metadata.name ?? '';
  const parent = parentObject(name, { groupKinds, applied: appliedTemplates, failed: failedTemplates });
  const base = plan.parentBefore ?? (input.parent !== undefined ? input.parent : parentBaseObject(input));
  const parentWanted = Boolean(base) || groupKinds.length > 0 || failedTemplates.length > 0;
  const parentWrite = parentWanted && parentNeedsWrite(base, parent) && !results.failures.some((f) => f.template === PARENT_FAILURE);
  const phase = decideAfterReconcile(namespace, results.failures, opts.readyDespiteFailures);
  const recordText = recordChange(namespace, record);
  return { record, parent, parentWrite, appliedTemplates, failedTemplates, phase, namespacePatch: withRecord(phase.patch, recordText) };
}

function parentBaseObject(input: PlanInput): KubeObject | null {
  const base = parentBase(input);
  return base ? parentObject(input.namespace.metadata.name ?? '', base) : null;
}

/** The phase patch with the record's new text folded in (one write of the namespace). */
export function withRecord(patch: MetadataPatch | null, recordText: string | null): MetadataPatch | null {
  if (recordText === null) return patch;
  const metadata = patch?.metadata ?? {};
  return { ...patch, metadata: { ...metadata, annotations: { ...metadata.annotations, [KEY.applied]: recordText } } };
}
