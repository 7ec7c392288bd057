// reconcile-namespace's writes, thin: carry out a plan (plan.ts) and say what each write did.
// Each template applies all or nothing. A template the plan dry-runs (one of its writes may change
// an object that exists) has every write dry-run first, and one the server refuses sends none. The
// others (a single write, or writes that all create absent objects: a new namespace) are written
// at once; when one fails, every object of that template this reconcile created (the server
// answered 201) is deleted again, by uid. A template with a failed write prunes nothing either.
import { applyObject, createObject, deleteObject, EVENTS, mergePatch, patchNamespaceStatus } from '../kube/api.ts';
import type { KubeClient, KubeResponse } from '../kube/client.ts';
import { classifyApiError, TransientError } from '../kube/errors.ts';
import { resourcePath, type ResourceInfo, type ResourceResolver } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import { APPLYSET_PARENT_NAME } from '../render/index.ts';
import { mapLimit } from './concurrency.ts';
import type { ObjectRef } from './objects.ts';
import type { NamespacePatch } from './phase.ts';
import { PARENT_FAILURE, type DesiredObject, type NamespacePlan, type OrphanRef, type WriteResults } from './plan.ts';
import { eventObject, type namespaceEvent, type ObjectFailure } from './report.ts';

export const EVENT_COMPONENT = 'furnish-reconciler';

export interface WriteDeps {
  kube: KubeClient;
  resolver: ResourceResolver;
  applyConcurrency?: number;
  log: Logger;
}

export interface Execution extends WriteResults {
  applied: Set<string>;
  created: Set<string>;
  released: Set<string>;
  failures: ObjectFailure[];
  writes: number;
  transient: string[];
  counts: { applied: number; created: number; pruned: number; orphaned: number };
}

export function newExecution(): Execution {
  return { applied: new Set(), created: new Set(), released: new Set(), failures: [], writes: 0, transient: [], counts: { applied: 0, created: 0, pruned: 0, orphaned: 0 } };
}

function recordFailure(exec: Execution, template: string, key: string, hash: string, res: KubeResponse<unknown>): void {
  const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
  if (c.class === 'transient') exec.transient.push(`${key}: ${c.why}`);
  else exec.failures.push({ template, key, hash, status: res.status, reason: res.reason ?? c.why, message: res.error ?? '' });
}

type WriteHow = 'apply' | 'create';

const alreadyExists = (how: WriteHow, res: KubeResponse<unknown>): boolean => how === 'create' && res.status === 409 && res.reason === 'AlreadyExists';

/** A write that made a new object (201, both for a create and a server-side apply): what deleting exactly it takes. */
interface Made {
  want: DesiredObject;
  how: WriteHow;
  info: ResourceInfo;
  uid: string;
}

/** What one write did: refused (or failed), done, or done by creating the object. */
type Written = { ok: false } | { ok: true; made?: Made };

/**
 * The resource of an object to write; undefined when discovery failed for a reason a retry may
 * mend, recorded as transient (the writes settle, the template is rolled back, the delivery is
 * retried), null when the server does not serve it.
 */
async function resolve(deps: WriteDeps, exec: Execution, ref: { apiVersion: string; kind: string }, key: string): Promise<ResourceInfo | null | undefined> {
  try {
    return await deps.resolver.forObject(ref.apiVersion, ref.kind);
  } catch (e) {
    if (!(e instanceof TransientError)) throw e;
    exec.transient.push(`${key}: ${e.message}`);
    return undefined;
  }
}

/** Sends one write (or its dry run); a create of an object that exists is fine: CreateOnly never touches it. */
async function write(deps: WriteDeps, exec: Execution, want: DesiredObject, how: WriteHow, dryRun: boolean): Promise<Written> {
  const info = await resolve(deps, exec, want.object, want.key);
  if (info === undefined) return { ok: false };
  if (!info) {
    exec.failures.push({ template: want.template, key: want.key, hash: want.hash, status: 404, reason: 'NotFound', message: `the API server does not serve ${want.object.apiVersion} ${want.object.kind}` });
    return { ok: false };
  }
  if (!dryRun) exec.writes += 1;
  const res = how === 'apply' ? await applyObject(deps.kube, info, want.object, { dryRun }) : await createObject(deps.kube, info, want.object, { dryRun });
  if (res.ok && !dryRun) {
    if (how === 'apply') {
      exec.applied.add(want.key);
      exec.counts.applied += 1;
    } else {
      exec.created.add(want.key);
      exec.counts.created += 1;
    }
    return res.status === 201 ? { ok: true, made: { want, how, info, uid: res.data?.metadata.uid ?? '' } } : { ok: true };
  }
  if (res.ok || alreadyExists(how, res)) return { ok: true };
  recordFailure(exec, want.template, want.key, want.hash, res);
  return { ok: false };
}

/** The object is no longer there as this reconcile wrote it: nothing of it is recorded or counted. */
function forget(exec: Execution, m: Made): void {
  if (m.how === 'apply' && exec.applied.delete(m.want.key)) exec.counts.applied -= 1;
  if (m.how === 'create' && exec.created.delete(m.want.key)) exec.counts.created -= 1;
}

/**
 * Deletes one object this reconcile created, with its uid as precondition so that an object
 * someone else made under the same name since is never touched (409: not ours, left alone). One
 * that cannot be deleted stays recorded and is reported with its template's failure; a transient
 * failure fails the delivery so that the next one tries again.
 */
async function unmake(deps: WriteDeps, exec: Execution, m: Made): Promise<void> {
  const { want } = m;
  const leftBehind = (status: number, reason: string, message: string) => exec.failures.push({ template: want.template, key: want.key, hash: want.hash, status, reason, message: `created, then not rolled back after its template failed: ${message}` });
  if (!m.uid) {
    leftBehind(0, 'RollbackFailed', 'the API server\'s answer named no uid to delete it by');
    return;
  }
  exec.writes += 1;
  const res = await deleteObject(deps.kube, m.info, want.object.metadata.namespace ?? '', want.object.metadata.name ?? '', { uid: m.uid });
  if (res.ok || res.status === 404 || res.status === 409) {
    forget(exec, m);
    return;
  }
  const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
  if (c.class === 'transient') exec.transient.push(`${want.key}: roll back template ${want.template}: ${c.why}`);
  else leftBehind(res.status, res.reason ?? c.why, res.error ?? c.why);
}

/** The real writes, in parallel; a template one of whose writes fails (refused or transient) has what they created of it deleted again. Returns those templates. */
async function writeOrRollBack(deps: WriteDeps, exec: Execution, writes: readonly (readonly [WriteHow, DesiredObject])[], limit: number): Promise<ReadonlySet<string>> {
  const made = new Map<string, Made[]>();
  const failed = new Set<string>();
  await mapLimit(writes, limit, async ([how, w]) => {
    // A template one of whose writes failed is rolled back: its writes not yet sent are not sent.
    if (failed.has(w.template)) return;
    const done = await write(deps, exec, w, how, false);
    if (!done.ok) failed.add(w.template);
    else if (done.made) made.set(w.template, [...(made.get(w.template) ?? []), done.made]);
  });
  const undo = [...failed].flatMap((t) => made.get(t) ?? []);
  if (undo.length > 0) deps.log.log('INFO', 'rolling back templates that could not be applied in full', { templates: [...failed].sort(), objects: undo.map((m) => m.want.key) });
  await mapLimit(undo, limit, (m) => unmake(deps, exec, m));
  return failed;
}

async function release(deps: WriteDeps, exec: Execution, ref: ObjectRef | OrphanRef, how: 'prune' | 'orphan'): Promise<void> {
  const info = await resolve(deps, exec, ref, ref.key);
  if (!info) return;
  exec.writes += 1;
  const res = how === 'prune'
    ? await deleteObject(deps.kube, info, ref.namespace, ref.name)
    : await mergePatch(deps.kube, resourcePath(info, ref.namespace, ref.name), (ref as OrphanRef).patch);
  if (res.ok || res.status === 404) {
    exec.released.add(ref.key);
    if (res.ok) exec.counts[how === 'prune' ? 'pruned' : 'orphaned'] += 1;
  } else recordFailure(exec, ref.template, ref.key, '', res);
}

export async function applyParent(deps: WriteDeps, exec: Execution, parent: KubeObject): Promise<void> {
  exec.writes += 1;
  const res = await applyObject(deps.kube, { group: '', version: 'v1', plural: 'configmaps', namespaced: true }, parent);
  if (!res.ok) recordFailure(exec, PARENT_FAILURE, `/ConfigMap/${parent.metadata.namespace}/${APPLYSET_PARENT_NAME}`, '', res);
}

const failedTemplates = (exec: Execution, blocked: ReadonlySet<string>): Set<string> => new Set([...blocked, ...exec.failures.map((f) => f.template)]);

/**
 * Carries out a plan: dry runs, the parent when its group-kinds grow, the writes of the templates
 * the server accepted in full (what a template with a failed write created is deleted again), then
 * the releases of templates with no failed write. `blocked`: templates that could not render here
 * (their live objects stay as they are).
 */
export async function execute(deps: WriteDeps, plan: NamespacePlan, blocked: ReadonlySet<string>): Promise<Execution> {
  const exec = newExecution();
  const limit = deps.applyConcurrency ?? 8;
  const writes = [...plan.apply.map((w) => ['apply', w] as const), ...plan.create.map((w) => ['create', w] as const)];
  const dryRun = new Set(plan.dryRun);
  await mapLimit(writes.filter(([, w]) => dryRun.has(w.template)), limit, ([how, w]) => write(deps, exec, w, how, true));
  if (exec.transient.length > 0) return exec;
  if (plan.parentBefore) {
    await applyParent(deps, exec, plan.parentBefore);
    if (exec.transient.length > 0 || exec.failures.some((f) => f.template === PARENT_FAILURE)) return exec;
  }
  const refused = failedTemplates(exec, blocked);
  const failedWrites = await writeOrRollBack(deps, exec, writes.filter(([, w]) => !refused.has(w.template)), limit);
  // A template with a failed write (refused or transient) releases nothing.
  const afterWrites = new Set([...failedTemplates(exec, blocked), ...failedWrites]);
  const releases = [...plan.prune.map((r) => ['prune', r] as const), ...plan.orphan.map((r) => ['orphan', r] as const)].filter(([, r]) => !afterWrites.has(r.template));
  await mapLimit(releases, limit, ([how, r]) => release(deps, exec, r, how));
  return exec;
}

export async function postEvent(deps: WriteDeps, ns: KubeObject, draft: ReturnType<typeof namespaceEvent>, now: Date): Promise<number> {
  if (!draft) return 0;
  const res = await createObject(deps.kube, EVENTS, eventObject(draft, ns, now, EVENT_COMPONENT));
  if (!res.ok && !(res.status === 409)) deps.log.log('WARNING', 'could not record event', { namespace: ns.metadata.name, reason: draft.reason, status: res.status, error: res.error });
  return 1;
}

/** The namespace's one write after a reconcile (phase, record, Ready condition). Transient failures throw; a permanent one is answered as a reason. */
export async function patchNamespace(deps: WriteDeps, name: string, patch: NamespacePatch): Promise<string | null> {
  const res = await patchNamespaceStatus(deps.kube, name, patch);
  if (res.ok) return null;
  const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
  if (c.class === 'transient') throw new TransientError(`write namespace ${name}: ${c.why}`, { status: res.status, reason: res.reason });
  deps.log.log('ERROR', 'could not write namespace', { namespace: name, keys: Object.keys(patch.metadata.annotations ?? {}).concat(Object.keys(patch.metadata.labels ?? {})), status: res.status, error: res.error });
  return c.why;
}

