// reconcile-namespace: read (namespace-reads.ts), let the pure planner decide (plan.ts), carry
// out exactly the planned writes (namespace-writes.ts), let the planner decide what to leave
// behind, report. Level-triggered: the message only names the namespace. Transient failures throw
// TransientError (the delivery fails, Pub/Sub redelivers); permanent ones are reported once and
// the delivery is acknowledged.
//
// Calls: a fan-out reconcile reads the namespace (in its batch's list in a small cluster, by a GET
// in a large one: namespace-batch.ts) and, per batch, the templates; the message
// says what the namespace holds of the template that changed (read cluster-wide once), its record
// says the rest; it writes each object that changed, and the namespace only when its record or
// phase changed (a clean apply changes neither). Anything else (a new namespace, drift the relay
// reported, a resync, or a fan-out that may have to release an object) also lists the kinds
// Furnish may have applied (the ApplySet parent comes with the ConfigMaps, or by a GET beside the
// lists), and judges ownership on the objects; a first population lists only the kinds whose
// absence lets a template skip its dry run (plan.ts unpopulated, kindsAbsenceDecides), then
// writes each object, the parent once, the namespace once, and posts one Event. Naming a template
// in a ready namespace's parent for the first time, or writing objects there, costs one more list
// of the templates, after the writes (recheck.ts); a batch makes it once for all its namespaces.
import { KEY } from '../keys.ts';
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ResourceResolver } from '../kube/resources.ts';
import type { Authorizer } from '../kube/sar.ts';
import type { Logger } from '../log.ts';
import { TransientError } from '../kube/errors.ts';
import { markTimedOutInitializer } from './initializers.ts';
import { grantedTemplates, observeNamespace, readNamespace, readTemplates } from './namespace-reads.ts';
import { applyParent, execute, patchNamespace, postEvent } from './namespace-writes.ts';
import { sortedUnique, splitList } from './objects.ts';
import { afterWrites, desiredState, heldSnapshotOutdated, kindsAbsenceDecides, kindsToObserve, namespaceInfo, namespaceSkip, planNamespace, unpopulated, type HeldObjects, type PlanInput } from './plan.ts';
import { confirmTemplates, namedBefore, newlyNamed, plannedFrom, recheckNeeded } from './recheck.ts';
import { EMPTY_RECORD, readRecord } from './record.ts';
import { namespaceEvent, warningEvents, type NamespaceOutcome } from './report.ts';
import { withReadyCondition } from './phase.ts';
import { heldBackBy, maybeCountedPending } from './template-status.ts';
import type { NamespaceTemplate } from '../render/types.ts';

export { EVENT_COMPONENT } from './namespace-writes.ts';

export interface NamespaceDeps {
  kube: KubeClient;
  resolver: ResourceResolver;
  /** Answers `use` on namespacetemplates/<name> for templates with require-permission. */
  authorizer?: Authorizer;
  systemNamespaces?: readonly string[];
  applyConcurrency?: number;
  readyDespiteFailures?: boolean;
  /**
   * Tells reconcile-template, the one writer of template status, that these templates' state in
   * this namespace changed (applied, failed, pruned), so that their status is recounted now
   * rather than at the next resync.
   */
  notifyTemplates?: (templates: string[]) => Promise<void>;
  /**
   * Set by a fan-out batch: takes what a reconcile planned from (recheck.ts plannedFrom) when it
   * must list the templates again after its writes, so that the batch lists them once for all its
   * namespaces. Absent: the reconcile lists them itself.
   */
  recheckTemplates?: (planned: readonly string[]) => void;
  log: Logger;
  now?: () => Date;
}

/** What the message says about why this namespace is reconciled. */
export interface NamespaceRequest {
  /**
   * A template fan-out: nothing but templates changed, so the namespace's record stands for its
   * objects (drift is reported by the relay's drift watch, which asks for a full reconcile).
   */
  fanout?: boolean;
  /** The fan-out's digest of every template (templatesDigest): templates held with it are not read again. */
  templates?: string;
  /** The fan-out's word on what this namespace holds of the template that changed; without it the objects are read. */
  held?: HeldObjects;
  /** The namespace as read just now (its batch's list, or a reconcile that starts again with fresher templates); absent: read here. */
  namespace?: KubeObject;
  /** Set by the reconcile itself when it lists the templates again (heldSnapshotOutdated): not a second time. */
  relisted?: boolean;
}

export interface NamespaceResult {
  result: 'converged' | 'failed' | 'skipped' | 'gone';
  namespace: string;
  /** Write requests issued (objects, parent, status, events, phase). */
  writes: number;
  outcome?: NamespaceOutcome;
  reason?: string;
}

/**
 * The objects to plan from: `all` kinds, or, for an unpopulated namespace (plan.ts), only `first`
 * (kindsAbsenceDecides) while its ApplySet parent is absent; with a parent there, something of
 * Furnish's is too (a first population cut short): then every kind.
 */
async function observeFor(deps: NamespaceDeps, name: string, first: readonly string[] | null, all: readonly string[]): ReturnType<typeof observeNamespace> {
  if (first === null) return observeNamespace(deps, name, all);
  const read = await observeNamespace(deps, name, first);
  return read.ok && read.value.parent ? observeNamespace(deps, name, all) : read;
}

/** A namespace being deleted: the templates whose status it may hold back recount without it (heldBackBy). */
async function notifyLeaving(deps: NamespaceDeps, ns: KubeObject): Promise<void> {
  if (!deps.notifyTemplates) return;
  const info = namespaceInfo(ns);
  let templates: NamespaceTemplate[] | null = null;
  if (maybeCountedPending(info)) {
    // Best effort, as every notice: the resync recounts anyway (a failed list fails no delivery).
    const listed = await readTemplates(deps.kube).catch(() => null);
    if (listed?.ok) templates = listed.value.templates;
  }
  const held = heldBackBy(info, readRecord(ns)?.failed ?? [], templates, deps.systemNamespaces);
  if (held.length === 0) return;
  deps.log.log('INFO', 'namespace being deleted: its templates recount without it', { namespace: info.name, templates: held });
  await deps.notifyTemplates(held).catch((e: unknown) => deps.log.log('WARNING', 'could not notify reconcile-template', { namespace: info.name, error: String(e) }));
}

/** Writes in a ready namespace: the templates they concern are checked after them (recheck.ts), by the batch when there is one. */
async function recheck(deps: NamespaceDeps, name: string, planned: string[]): Promise<void> {
  if (deps.recheckTemplates) deps.recheckTemplates(planned);
  else await confirmTemplates(deps, new Set(planned), `namespace ${name}`);
}

export async function reconcileNamespace(deps: NamespaceDeps, name: string, request: NamespaceRequest = {}): Promise<NamespaceResult> {
  const now = deps.now?.() ?? new Date();
  const failed = (reason: string): NamespaceResult => ({ result: 'failed', namespace: name, writes: 0, reason });
  const got = request.namespace ? { ok: true as const, value: request.namespace } : await readNamespace(deps.kube, name);
  if (!got.ok) return failed(got.reason);
  const ns = got.value;
  if (!ns) return { result: 'gone', namespace: name, writes: 0 };
  // A namespace being deleted (each step of its deletion is an event) costs no template list,
  // unless templates may count it pending: they are told it is leaving.
  const skip = namespaceSkip(ns, deps.systemNamespaces);
  if (skip) {
    if (ns.metadata.deletionTimestamp) await notifyLeaving(deps, ns);
    return { result: 'skipped', namespace: name, writes: 0, reason: skip };
  }
  const listed = await readTemplates(deps.kube, request.fanout ? request.templates : undefined);
  if (!listed.ok) return failed(listed.reason);
  const { templates, listedAt } = listed.value;

  const { granted, refused } = await grantedTemplates(deps, ns, templates);
  const desired = desiredState(ns, templates, { systemNamespaces: deps.systemNamespaces, granted: (t) => granted.has(t) });
  if (desired.skip) return { result: 'skipped', namespace: name, writes: 0, reason: desired.skip };

  const record = readRecord(ns);
  let input: PlanInput = { namespace: ns, desired, observed: null, record: record ?? EMPTY_RECORD, templates, held: request.held };
  let plan = request.fanout && record && request.held ? planNamespace(input) : null;
  if (!plan || plan.needsObservation) {
    const read = await observeFor(deps, name, !request.fanout && unpopulated(ns, record) ? kindsAbsenceDecides(desired) : null, kindsToObserve(desired, record, null, templates));
    if (!read.ok) return failed(read.reason);
    const { parent, seen } = read.value;
    if (!request.relisted && heldSnapshotOutdated(listedAt, parent, seen.objects)) {
      // Written since the templates were listed (held from before, or a fan-out's batch wrote while
      // this reconcile was between its list and its reads): plan from a fresh list, once.
      return reconcileNamespace(deps, name, { ...request, templates: undefined, namespace: ns, relisted: true });
    }
    input = { ...input, observed: seen.objects, unreadableKinds: seen.unreadableKinds, parent };
    plan = planNamespace(input);
  }
  const exec = await execute(deps, plan, new Set(desired.problems.map((p) => p.template)));
  if (exec.transient.length > 0) {
    throw new TransientError(`namespace ${name}: ${exec.transient.length} transient failure(s): ${exec.transient.slice(0, 3).join('; ')}`, { status: 503 });
  }
  for (const p of desired.problems) exec.failures.push({ template: p.template, key: p.path, hash: '', status: 422, reason: 'RenderFailed', message: p.message });
  for (const r of refused) exec.failures.push({ template: r.template, key: '(permission)', hash: '', status: 403, reason: 'Forbidden', message: r.message });

  const after = afterWrites(input, plan, exec, { readyDespiteFailures: deps.readyDespiteFailures });
  if (after.parentWrite) await applyParent(deps, exec, after.parent);
  const newly = newlyNamed(namedBefore(input.parent, input.record), [plan.parentBefore, after.parentWrite ? after.parent : null]);
  let writes = exec.writes;

  const outcome: NamespaceOutcome = {
    namespace: name,
    uid: ns.metadata.uid ?? '',
    matched: desired.matched,
    ...exec.counts,
    unchanged: plan.keep.length,
    failures: exec.failures,
    warnings: desired.warnings,
    firstPopulation: plan.setReady,
  };
  const changed = exec.counts.applied + exec.counts.created + exec.counts.pruned + exec.counts.orphaned > 0;
  const hasFailures = exec.failures.length > 0;
  // Pluggable initializers (./initializers.ts): a working initializer past its timeout fails the namespace.
  const timedOut = await markTimedOutInitializer(deps.kube, ns, now, deps.log);
  if (timedOut) writes += 1;
  // The Ready condition follows the phase in the same write, judged on the namespace as it now is (kubectl wait --for=condition=Ready).
  const namespacePatch = withReadyCondition(timedOut ?? ns, after.namespacePatch, now);
  const { phase } = after;
  const events = [...(phase.newFailure || (!hasFailures && plan.setReady) ? [namespaceEvent(outcome, now)] : []), ...(changed ? warningEvents(outcome) : [])];
  // The events and the namespace's write side by side: neither needs the other (one round trip off a first population).
  const [posted, why] = await Promise.all([
    Promise.all(events.map((e) => postEvent(deps, ns, e, now))),
    namespacePatch ? patchNamespace(deps, name, namespacePatch) : null,
  ]);
  writes += posted.reduce((a, n) => a + n, 0) + (namespacePatch ? 1 : 0);
  const released = [...plan.prune, ...plan.orphan].map((r) => r.template);
  if (writes > 0 && deps.notifyTemplates) {
    const touched = sortedUnique([...desired.matched, ...after.failedTemplates, ...released, ...input.record.applied, ...input.record.failed, ...splitList(input.parent?.metadata.annotations?.[KEY.appliedTemplates])].filter((t) => t !== ''));
    await deps.notifyTemplates(touched).catch((e: unknown) => deps.log.log('WARNING', 'could not notify reconcile-template', { namespace: name, error: String(e) }));
  }
  // After every write, the record and the notice included: a redelivery planned from the record
  // must know what is there, and one that finds nothing left to write would notify nobody.
  if (recheckNeeded(ns, { newlyNamed: newly, objectsChanged: changed })) await recheck(deps, name, plannedFrom(templates, [...desired.matched, ...newly, ...released]));
  if (why) return { result: 'failed', namespace: name, writes, outcome, reason: `set phase: ${why}` };
  deps.log.log(hasFailures ? 'WARNING' : 'INFO', hasFailures ? 'namespace reconciled with failures' : 'namespace reconciled', {
    namespace: name, phase: phase.phase, matched: desired.matched, applied: outcome.applied, created: outcome.created, pruned: outcome.pruned, orphaned: outcome.orphaned, unchanged: outcome.unchanged, failures: outcome.failures.length, writes,
    observed: input.observed !== null,
  });
  return { result: hasFailures ? 'failed' : 'converged', namespace: name, writes, outcome, reason: hasFailures ? `${outcome.failures.length} object(s) failed` : undefined };
}
