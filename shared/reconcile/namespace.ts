// reconcile-namespace's executor: read the namespace, the templates and what we applied before;
// let the pure planner decide; carry out exactly the planned writes; report. Level-triggered:
// the message only names the namespace. Transient failures throw TransientError (the delivery
// fails, Pub/Sub redelivers); permanent ones are reported once and the delivery is acknowledged.
// Each template applies all or nothing: every object is dry-run first (admission, validation,
// the server's normalisation), and a template with an object the server refuses sends none.
import { creatorIdentityOf } from '../auth/creator.ts';
import { templateUse } from '../auth/template-use.ts';
import { KEY } from '../keys.ts';
import { applyObject, createObject, deleteObject, EVENTS, listAll, mergePatch, NAMESPACES, TEMPLATES } from '../kube/api.ts';
import type { KubeClient, KubeResponse } from '../kube/client.ts';
import { resourcePath, type ResourceResolver } from '../kube/resources.ts';
import type { Authorizer } from '../kube/sar.ts';
import { refusal } from '../webhooks/rules/outcome.ts';
import type { KubeObject } from '../kube/types.ts';
import { APPLYSET_PARENT_NAME, type NamespaceTemplate } from '../render/index.ts';
import { mapLimit } from './concurrency.ts';
import { classifyApiError, TransientError } from '../kube/errors.ts';
import type { Logger } from '../log.ts';
import { keyOf, parseGroupKind, parseKey, sortedUnique, splitList, type ObjectRef } from './objects.ts';
import { desiredState, namespaceInfo, parentNeedsWrite, parentObject, planNamespace, toObserve, type DesiredObject, type NamespacePlan, type Observation } from './plan.ts';
import { markTimedOutInitializer } from './initializers.ts';
import { observedHash, withObservedHash } from './observed.ts';
import { decideAfterReconcile } from './phase.ts';
import { eventObject, namespaceEvent, warningEvents, type NamespaceOutcome, type ObjectFailure } from './report.ts';

export const EVENT_COMPONENT = 'furnish-reconciler';
/** The template name failures of the ApplySet parent are recorded under. */
const PARENT_FAILURE = '(applyset)';

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

export interface NamespaceResult {
  result: 'converged' | 'failed' | 'skipped' | 'gone';
  namespace: string;
  /** Write requests issued (objects, parent, status, events, phase). */
  writes: number;
  outcome?: NamespaceOutcome;
  reason?: string;
}

/** A failed read: transient ones throw (redelivery), permanent ones end the reconcile as failed. */
function failRead(what: string, res: KubeResponse<unknown>): never | string {
  const c = classifyApiError({ status: res.status, reason: res.reason });
  if (c.class === 'transient') throw new TransientError(`${what}: ${c.why}: ${res.error ?? ''}`, { status: res.status, reason: res.reason, message: res.error });
  return `${what}: ${c.why}: ${res.error ?? ''}`;
}

export async function listTemplates(kube: KubeClient): Promise<{ ok: true; templates: NamespaceTemplate[] } | { ok: false; res: KubeResponse<unknown> }> {
  const { result, items } = await listAll(kube, resourcePath(TEMPLATES));
  if (!result.ok) return { ok: false, res: { ok: false, status: result.status, data: undefined, reason: result.reason, error: result.error, attempts: 1 } };
  return { ok: true, templates: items as NamespaceTemplate[] };
}

/**
 * The require-permission templates the creator may use, asked with the identity admission recorded
 * (the one rule of admission, the reconciler and the CLI: shared/auth/template-use.ts); each refused one is a failure to report.
 */
async function grantedTemplates(deps: NamespaceDeps, ns: KubeObject, templates: readonly NamespaceTemplate[]): Promise<{ granted: Set<string>; refused: { template: string; message: string }[] }> {
  const granted = new Set<string>();
  const refused: { template: string; message: string }[] = [];
  const needing = templateUse({ namespace: namespaceInfo(ns), templates, systemNamespaces: deps.systemNamespaces, identity: creatorIdentityOf(ns.metadata.annotations) });
  if (!deps.authorizer || needing.length === 0) return { granted, refused };
  await Promise.all(needing.map(async (u) => {
    const name = u.template;
    if (!('check' in u)) return void refused.push({ template: name, message: u.deny });
    const d = await deps.authorizer!.check(u.check);
    if (d.error) throw new TransientError(`SubjectAccessReview for template ${name}: ${d.error}`, { status: 0, message: d.error });
    if (d.allowed) granted.add(name);
    else refused.push({ template: name, message: refusal(u.check.user, u.refused, u.check) });
  }));
  return { granted, refused };
}

interface Observed {
  objects: KubeObject[];
  /**
   * Inventoried keys that could not be read for a permanent reason (403, a kind no longer
   * served): kept in the inventory, so that a failed read never makes Furnish forget an object
   * it must prune later.
   */
  unreadable: string[];
}

/** Reads what the plan needs: each inventoried or desired object by name, or (no inventory) every labelled object of the kinds. */
async function observe(deps: NamespaceDeps, namespace: string, what: Observation): Promise<Observed> {
  if (what.by === 'inventory') {
    const unreadable: string[] = [];
    const found = await mapLimit(what.keys, deps.applyConcurrency ?? 8, async (key) => {
      const { group, kind, name } = parseKey(key);
      const info = await deps.resolver.forGroupKind(group, kind);
      if (!info) {
        unreadable.push(key);
        return null;
      }
      const res = await deps.kube.call<KubeObject>({ method: 'GET', path: resourcePath(info, namespace, name) });
      if (res.ok) return { ...res.data!, apiVersion: res.data!.apiVersion ?? (info.group ? `${info.group}/${info.version}` : info.version), kind: res.data!.kind ?? kind };
      if (res.status !== 404) {
        deps.log.log('WARNING', 'inventoried object not readable, kept in the inventory', { namespace, key, why: failRead(`get ${key}`, res) });
        unreadable.push(key);
      }
      return null;
    });
    return { objects: found.filter((o): o is KubeObject => o !== null), unreadable: sortedUnique(unreadable) };
  }
  return { objects: await observeKinds(deps, namespace, what.groupKinds), unreadable: [] };
}

async function observeKinds(deps: NamespaceDeps, namespace: string, kinds: readonly string[]): Promise<KubeObject[]> {
  const observed: KubeObject[] = [];
  for (const gk of kinds) {
    const { group, kind } = parseGroupKind(gk);
    const info = await deps.resolver.forGroupKind(group, kind);
    if (!info) {
      deps.log.log('WARNING', 'unknown group-kind, not observed', { namespace, groupKind: gk });
      continue;
    }
    const { result, items } = await listAll(deps.kube, resourcePath(info, namespace), { labelSelector: KEY.template });
    if (!result.ok) {
      if (result.status === 404) continue;
      failRead(`list ${gk} in ${namespace}`, { ok: false, status: result.status, data: undefined, reason: result.reason, error: result.error, attempts: 1 });
      continue;
    }
    for (const item of items) observed.push({ ...item, apiVersion: item.apiVersion ?? (info.group ? `${info.group}/${info.version}` : info.version), kind: item.kind ?? kind });
  }
  return observed;
}

interface Execution {
  writes: number;
  failures: ObjectFailure[];
  transient: string[];
  counts: { applied: number; created: number; pruned: number; orphaned: number };
}

function recordFailure(exec: Execution, template: string, key: string, hash: string, res: KubeResponse<unknown>): void {
  const c = classifyApiError({ status: res.status, reason: res.reason });
  if (c.class === 'transient') exec.transient.push(`${key}: ${c.why}`);
  else exec.failures.push({ template, key, hash, status: res.status, reason: res.reason ?? c.why, message: res.error ?? '' });
}

type WriteHow = 'apply' | 'create';

/**
 * The dry run of one write: undefined when the server would take it (with the hash of what it
 * would store, for an apply), else the failure is recorded. A create of an object that exists
 * is fine: CreateOnly never touches it.
 */
async function dryRun(deps: NamespaceDeps, exec: Execution, want: DesiredObject, how: WriteHow): Promise<{ ok: boolean; observed?: string }> {
  const info = await deps.resolver.forObject(want.object.apiVersion, want.object.kind);
  if (!info) {
    exec.failures.push({ template: want.template, key: want.key, hash: want.hash, status: 404, reason: 'NotFound', message: `the API server does not serve ${want.object.apiVersion} ${want.object.kind}` });
    return { ok: false };
  }
  const res = how === 'apply' ? await applyObject(deps.kube, info, want.object, { dryRun: true }) : await createObject(deps.kube, info, want.object, { dryRun: true });
  if (res.ok) return { ok: true, ...(how === 'apply' && res.data ? { observed: observedHash(want.object, res.data) } : {}) };
  if (how === 'create' && res.status === 409 && res.reason === 'AlreadyExists') return { ok: true };
  recordFailure(exec, want.template, want.key, want.hash, res);
  return { ok: false };
}

async function writeDesired(deps: NamespaceDeps, exec: Execution, want: DesiredObject, how: WriteHow, observed: string | undefined): Promise<void> {
  const info = await deps.resolver.forObject(want.object.apiVersion, want.object.kind);
  if (!info) return;
  exec.writes += 1;
  const res = how === 'apply' ? await applyObject(deps.kube, info, observed ? withObservedHash(want.object, observed) : want.object) : await createObject(deps.kube, info, want.object);
  if (res.ok) exec.counts[how === 'apply' ? 'applied' : 'created'] += 1;
  else if (how === 'create' && res.status === 409 && res.reason === 'AlreadyExists') return;
  else recordFailure(exec, want.template, want.key, want.hash, res);
}

async function release(deps: NamespaceDeps, exec: Execution, ref: ObjectRef, how: 'prune' | 'orphan'): Promise<void> {
  const info = await deps.resolver.forObject(ref.apiVersion, ref.kind);
  if (!info) return;
  exec.writes += 1;
  const res = how === 'prune'
    ? await deleteObject(deps.kube, info, ref.namespace, ref.name)
    : await mergePatch(deps.kube, resourcePath(info, ref.namespace, ref.name), { metadata: { labels: { [KEY.template]: null, [KEY.applySetPartOf]: null }, annotations: { [KEY.appliedHash]: null, [KEY.deletionPolicy]: null } } });
  if (res.ok || res.status === 404) exec.counts[how === 'prune' ? 'pruned' : 'orphaned'] += res.ok ? 1 : 0;
  else recordFailure(exec, ref.template, ref.key, '', res);
}

async function applyParent(deps: NamespaceDeps, exec: Execution, parent: KubeObject): Promise<void> {
  exec.writes += 1;
  const res = await applyObject(deps.kube, { group: '', version: 'v1', plural: 'configmaps', namespaced: true }, parent);
  if (!res.ok) recordFailure(exec, PARENT_FAILURE, `/ConfigMap/${parent.metadata.namespace}/${APPLYSET_PARENT_NAME}`, '', res);
}

/**
 * Dry-runs every write, then carries out those of the templates the server accepted in full: a
 * template with one refused object writes (and prunes) nothing, so a namespace never holds half
 * a template. `blocked` are templates that could not render here: their live objects stay as
 * they are too.
 */
async function execute(deps: NamespaceDeps, plan: NamespacePlan, blocked: ReadonlySet<string>): Promise<Execution> {
  const exec: Execution = { writes: 0, failures: [], transient: [], counts: { applied: 0, created: 0, pruned: 0, orphaned: 0 } };
  const limit = deps.applyConcurrency ?? 8;
  const writes = [...plan.apply.map((w) => ['apply', w] as const), ...plan.create.map((w) => ['create', w] as const)];
  const tried = await mapLimit(writes, limit, async ([how, w]) => ({ how, w, ...(await dryRun(deps, exec, w, how)) }));
  if (exec.transient.length > 0) return exec;
  const refused = new Set([...blocked, ...exec.failures.map((f) => f.template)]);
  if (plan.parentBefore) {
    await applyParent(deps, exec, plan.parentBefore);
    if (exec.transient.length > 0 || exec.failures.some((f) => f.template === PARENT_FAILURE)) return exec;
  }
  await mapLimit(tried.filter((t) => !refused.has(t.w.template)), limit, (t) => writeDesired(deps, exec, t.w, t.how, t.observed));
  const releases = [...plan.prune.map((r) => ['prune', r] as const), ...plan.orphan.map((r) => ['orphan', r] as const)].filter(([, r]) => !refused.has(r.template));
  await mapLimit(releases, limit, ([how, r]) => release(deps, exec, r, how));
  return exec;
}

async function postEvent(deps: NamespaceDeps, ns: KubeObject, draft: ReturnType<typeof namespaceEvent>, now: Date): Promise<number> {
  if (!draft) return 0;
  const res = await createObject(deps.kube, EVENTS, eventObject(draft, ns, now, EVENT_COMPONENT));
  if (!res.ok && !(res.status === 409)) deps.log.log('WARNING', 'could not record event', { namespace: ns.metadata.name, reason: draft.reason, status: res.status, error: res.error });
  return 1;
}

export async function reconcileNamespace(deps: NamespaceDeps, name: string): Promise<NamespaceResult> {
  const now = deps.now?.() ?? new Date();
  const got = await deps.kube.call<KubeObject>({ method: 'GET', path: resourcePath(NAMESPACES, undefined, name) });
  if (!got.ok) {
    if (got.status === 404) return { result: 'gone', namespace: name, writes: 0 };
    return { result: 'failed', namespace: name, writes: 0, reason: failRead(`get namespace ${name}`, got) };
  }
  const ns = got.data!;
  const listed = await listTemplates(deps.kube);
  if (!listed.ok) return { result: 'failed', namespace: name, writes: 0, reason: failRead('list namespacetemplates', listed.res) };
  const { templates } = listed;

  const { granted, refused } = await grantedTemplates(deps, ns, templates);
  const desired = desiredState(ns, templates, { systemNamespaces: deps.systemNamespaces, granted: (t) => granted.has(t) });
  if (desired.skip) return { result: 'skipped', namespace: name, writes: 0, reason: desired.skip };

  const parentRes = await deps.kube.call<KubeObject>({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(name)}/configmaps/${APPLYSET_PARENT_NAME}` });
  if (!parentRes.ok && parentRes.status !== 404) return { result: 'failed', namespace: name, writes: 0, reason: failRead(`get applyset parent in ${name}`, parentRes) };
  const parent = parentRes.ok ? parentRes.data! : null;
  const { objects: observed, unreadable } = await observe(deps, name, toObserve(parent, desired));
  const plan = planNamespace({ namespace: ns, desired, observed, parent, templates });
  const exec = await execute(deps, plan, new Set(desired.problems.map((p) => p.template)));
  if (exec.transient.length > 0) {
    throw new TransientError(`namespace ${name}: ${exec.transient.length} transient failure(s): ${exec.transient.slice(0, 3).join('; ')}`, { status: 503 });
  }

  for (const p of desired.problems) exec.failures.push({ template: p.template, key: p.path, hash: '', status: 422, reason: 'RenderFailed', message: p.message });
  for (const r of refused) exec.failures.push({ template: r.template, key: '(permission)', hash: '', status: 403, reason: 'Forbidden', message: r.message });
  const failedTemplates = sortedUnique(exec.failures.map((f) => f.template).filter((t) => t !== PARENT_FAILURE));
  const appliedTemplates = desired.matched.filter((t) => !failedTemplates.includes(t));
  // Still ours afterwards: everything desired, and live objects kept because their template could not render here.
  const released = new Set([...plan.prune, ...plan.orphan].map((r) => r.key));
  const inventory = sortedUnique([...desired.objects.map((o) => o.key), ...unreadable, ...observed.filter((o) => o.metadata.labels?.[KEY.template] && !released.has(keyOf(o))).map(keyOf)]);
  const groupKinds = sortedUnique([...desired.groupKinds, ...inventory.map((k) => { const p = parseKey(k); return p.group ? `${p.kind}.${p.group}` : p.kind; })]);
  const finalParent = parentObject(name, { groupKinds, inventory, applied: appliedTemplates, failed: failedTemplates });
  let writes = exec.writes;
  const parentWanted = Boolean(parent ?? plan.parentBefore) || groupKinds.length > 0 || failedTemplates.length > 0;
  if (parentWanted && parentNeedsWrite(plan.parentBefore ?? parent, finalParent) && !exec.failures.some((f) => f.template === PARENT_FAILURE)) {
    await applyParent(deps, exec, finalParent);
    writes += 1;
  }

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
  const failed = exec.failures.length > 0;
  // Pluggable initializers (./initializers.ts): a working initializer past its timeout fails the namespace.
  writes += await markTimedOutInitializer(deps.kube, ns, now, deps.log);
  const phase = decideAfterReconcile(ns, exec.failures, deps.readyDespiteFailures);
  if (phase.newFailure || (!failed && plan.setReady)) writes += await postEvent(deps, ns, namespaceEvent(outcome, now), now);
  if (changed) for (const w of warningEvents(outcome)) writes += await postEvent(deps, ns, w, now);

  if (phase.patch) {
    writes += 1;
    const res = await mergePatch(deps.kube, resourcePath(NAMESPACES, undefined, name), phase.patch);
    if (!res.ok) {
      const c = classifyApiError({ status: res.status, reason: res.reason });
      if (c.class === 'transient') throw new TransientError(`set phase of ${name}: ${c.why}`, { status: res.status, reason: res.reason });
      deps.log.log('ERROR', 'could not set phase', { namespace: name, phase: phase.phase, status: res.status, error: res.error });
      return { result: 'failed', namespace: name, writes, outcome, reason: `set phase: ${c.why}` };
    }
  }
  if (writes > 0 && deps.notifyTemplates) {
    const touched = sortedUnique([...desired.matched, ...failedTemplates, ...[...plan.prune, ...plan.orphan].map((r) => r.template), ...splitList(parent?.metadata.annotations?.[KEY.appliedTemplates])]);
    await deps.notifyTemplates(touched).catch((e: unknown) => deps.log.log('WARNING', 'could not notify reconcile-template', { namespace: name, error: String(e) }));
  }
  deps.log.log(failed ? 'WARNING' : 'INFO', failed ? 'namespace reconciled with failures' : 'namespace reconciled', {
    namespace: name, phase: phase.phase, matched: desired.matched, applied: outcome.applied, created: outcome.created, pruned: outcome.pruned, orphaned: outcome.orphaned, unchanged: outcome.unchanged, failures: outcome.failures.length, writes,
  });
  return { result: failed ? 'failed' : 'converged', namespace: name, writes, outcome, reason: failed ? `${outcome.failures.length} object(s) failed` : undefined };
}
