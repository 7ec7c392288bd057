// reconcile-namespace: read (namespace-reads.ts), let the pure planner decide (plan.ts), carry
// out exactly the planned writes (namespace-writes.ts), let the planner decide what to leave
// behind, report. Level-triggered: the message names the namespace and the revision of the change
// (docs/adr/0009). Reconciles of one namespace run one at a time (the ordering key of its
// messages), so this reads, plans and writes without rechecking: it plans from templates listed
// at or after that revision and after anything Furnish wrote in the namespace (templatesOutdated).
// Transient failures throw TransientError (the delivery fails, Pub/Sub redelivers, the next
// messages of the namespace wait); permanent ones are reported once and the delivery is acknowledged.
//
// Calls: the namespace, the templates (a recent list shared: namespace-reads.ts readTemplates),
// the ApplySet parent beside the lists of every kind the parent names or the templates render;
// then each object that changed, the parent when what it says changed, the namespace when its
// phase or Ready condition changed, and one Event when something happened.
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import type { ResourceResolver } from '../kube/resources.ts';
import type { Authorizer } from '../kube/sar.ts';
import type { Logger } from '../log.ts';
import { TransientError } from '../kube/errors.ts';
import { markTimedOutInitializer } from './initializers.ts';
import { grantedTemplates, observeNamespace, readNamespace, readParent, readTemplates, type Grants, type Read } from './namespace-reads.ts';
import { applyParent, execute, patchNamespace, postEvent, type Execution } from './namespace-writes.ts';
import { sortedUnique } from './objects.ts';
import { afterWrites, desiredState, namespaceInfo, namespaceSkip, PARENT_FAILURE, parentTemplates, planNamespace, templatesOutdated, type DesiredState, type PlanInput } from './plan.ts';
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
  log: Logger;
  now?: () => Date;
}

/** What the message says: the namespace, and the revision of the change it names. */
export interface NamespaceRequest {
  /** Plan from templates listed at or after this resourceVersion (the change the message names); absent: list them now. */
  resourceVersion?: string;
}

export interface NamespaceResult {
  result: 'converged' | 'failed' | 'skipped' | 'gone';
  namespace: string;
  /** Write requests issued (objects, parent, status, events, phase). */
  writes: number;
  outcome?: NamespaceOutcome;
  reason?: string;
}

/** A namespace being deleted: the templates whose status it may hold back recount without it (heldBackBy). */
async function notifyLeaving(deps: NamespaceDeps, ns: KubeObject): Promise<void> {
  if (!deps.notifyTemplates) return;
  const info = namespaceInfo(ns);
  // Best effort, as every notice: the resync recounts anyway (a failed read fails no delivery).
  const [listed, parent] = await Promise.all([maybeCountedPending(info) ? readTemplates(deps.kube).catch(() => null) : null, readParent(deps.kube, info.name).catch(() => null)]);
  const templates: NamespaceTemplate[] | null = listed?.ok ? listed.value.templates : null;
  const held = heldBackBy(info, parent?.ok ? parentTemplates(parent.value).failed : [], templates, deps.systemNamespaces);
  if (held.length === 0) return;
  deps.log.log('INFO', 'namespace being deleted: its templates recount without it', { namespace: info.name, templates: held });
  await deps.notifyTemplates(held).catch((e: unknown) => deps.log.log('WARNING', 'could not notify reconcile-template', { namespace: info.name, error: String(e) }));
}

interface Planned {
  input: PlanInput;
  desired: DesiredState;
  refused: Grants['refused'];
}

/**
 * The templates listed recently enough, what they want here, and what is here. When the parent or
 * an object of Furnish's was written after that list (templatesOutdated), once more from a list at
 * least that recent: a write Furnish made from a newer template is never undone from an older one.
 */
async function readAndPlan(deps: NamespaceDeps, ns: KubeObject, atLeast: string | undefined, again = true): Promise<Read<Planned>> {
  const name = ns.metadata.name ?? '';
  const listed = await readTemplates(deps.kube, atLeast);
  if (!listed.ok) return listed;
  const { templates, listedAt } = listed.value;
  const { granted, refused } = await grantedTemplates(deps, ns, templates);
  const desired = desiredState(ns, templates, { systemNamespaces: deps.systemNamespaces, granted: (t) => granted.has(t) });
  if (desired.skip) return { ok: true, value: { desired, refused, input: { namespace: ns, desired, observed: [], parent: null, templates } } };
  const read = await observeNamespace(deps, name, desired.groupKinds);
  if (!read.ok) return read;
  const { parent, seen } = read.value;
  const newer = templatesOutdated(listedAt, atLeast, parent, seen.objects);
  if (newer !== null && again) return readAndPlan(deps, ns, newer, false);
  return { ok: true, value: { desired, refused, input: { namespace: ns, desired, observed: seen.objects, unreadableKinds: seen.unreadableKinds, parent, templates } } };
}

/** Transient failures fail the delivery (TransientError): Pub/Sub redelivers, and the namespace's next messages wait for it. */
function failOnTransient(name: string, exec: Execution): void {
  if (exec.transient.length === 0) return;
  throw new TransientError(`namespace ${name}: ${exec.transient.length} transient failure(s): ${exec.transient.slice(0, 3).join('; ')}`, { status: 503 });
}

export async function reconcileNamespace(deps: NamespaceDeps, name: string, request: NamespaceRequest = {}): Promise<NamespaceResult> {
  const now = deps.now?.() ?? new Date();
  const failed = (reason: string): NamespaceResult => ({ result: 'failed', namespace: name, writes: 0, reason });
  const got = await readNamespace(deps.kube, name);
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
  const planned = await readAndPlan(deps, ns, request.resourceVersion);
  if (!planned.ok) return failed(planned.reason);
  const { input, desired, refused } = planned.value;
  if (desired.skip) return { result: 'skipped', namespace: name, writes: 0, reason: desired.skip };

  const plan = planNamespace(input);
  const exec = await execute(deps, plan, new Set(desired.problems.map((p) => p.template)));
  failOnTransient(name, exec);
  for (const p of desired.problems) exec.failures.push({ template: p.template, key: p.path, hash: '', status: 422, reason: 'RenderFailed', message: p.message });
  for (const r of refused) exec.failures.push({ template: r.template, key: '(permission)', hash: '', status: 403, reason: 'Forbidden', message: r.message });

  let after = afterWrites(input, plan, exec, { readyDespiteFailures: deps.readyDespiteFailures });
  if (after.parentWrite) {
    await applyParent(deps, exec, after.parent);
    // The parent is how a later prune finds these objects: a write of it that failed is never
    // left behind a namespace called ready. Transient: the delivery fails, and the next one writes
    // it. Refused: the namespace fails, decided again with that failure (readyDespiteFailures or not).
    failOnTransient(name, exec);
    if (exec.failures.some((f) => f.template === PARENT_FAILURE)) after = afterWrites(input, plan, exec, { readyDespiteFailures: false });
  }
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
  if (writes > 0 && deps.notifyTemplates) {
    const before = parentTemplates(input.parent);
    const released = [...plan.prune, ...plan.orphan].map((r) => r.template);
    const touched = sortedUnique([...desired.matched, ...after.failedTemplates, ...released, ...before.applied, ...before.failed].filter((t) => t !== ''));
    await deps.notifyTemplates(touched).catch((e: unknown) => deps.log.log('WARNING', 'could not notify reconcile-template', { namespace: name, error: String(e) }));
  }
  if (why) return { result: 'failed', namespace: name, writes, outcome, reason: `set phase: ${why}` };
  deps.log.log(hasFailures ? 'WARNING' : 'INFO', hasFailures ? 'namespace reconciled with failures' : 'namespace reconciled', {
    namespace: name, phase: phase.phase, matched: desired.matched, applied: outcome.applied, created: outcome.created, pruned: outcome.pruned, orphaned: outcome.orphaned, unchanged: outcome.unchanged, failures: outcome.failures.length, writes,
  });
  return { result: hasFailures ? 'failed' : 'converged', namespace: name, writes, outcome, reason: hasFailures ? `${outcome.failures.length} object(s) failed` : undefined };
}
