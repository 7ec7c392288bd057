// reconcile-template's executor: on a template's creation, change or deletion, publish one
// reconcile message per namespace that matches now or carries the template from before, with
// bounded concurrency and a client-side rate limit, reporting progress in the template status;
// on every message (resync included, and the STATUS messages namespaces send when they change),
// recount and write the status only if it changed. It is the one writer of template status.
import { KEY } from '../keys.ts';
import type { Bus } from '../bus/types.ts';
import { listAll, listEach, mergePatch, NAMESPACES, TEMPLATES } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { TokenBucket } from '../kube/ratelimit.ts';
import { resourcePath, type ResourceResolver } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { APPLYSET_PARENT_NAME, type NamespaceInfo, type NamespaceTemplate, type NamespaceTemplateStatus } from '../render/index.ts';
import { mapLimit } from './concurrency.ts';
import { apiError, TransientError } from '../kube/errors.ts';
import { batchesList, changedKinds, chunk, fanoutBase, fanoutNeeded, NAMES_PER_LIST, fanoutTargets, notFurnishedYet, parentRecord, parentsMissed, type FanoutTargets, type NamespaceWrite, type ParentRecord } from './fanout.ts';
import { fanoutEntries, fanoutRecord, parseFanoutEntries, templatesDigest } from './fingerprints.ts';
import type { Logger } from '../log.ts';
import { DEFAULT_FANOUT_BATCH, encodeMessage, MAX_FANOUT_TARGETS, statusMessage, type ReconcileMessage } from '../bus/envelope.ts';
import { namespaceInfo } from './plan.ts';
import { groupKindOf, parseGroupKind, sortedUnique } from './objects.ts';
import { statusDiffers, templateStatus, upsert } from './report.ts';
import { addLive, emptyLive, tallyTemplate, type LiveObjects } from './template-status.ts';


export interface TemplateDeps {
  kube: KubeClient;
  /** Finds the template's kinds, to check that namespaces hold its current objects. Without it, the parents' word is taken. */
  resolver?: ResourceResolver;
  bus: Bus;
  cluster: string;
  namespaceTopic: string;
  /** The relay's topic for pending namespaces (FURNISH_TOPIC_PENDING): a namespace not furnished yet is messaged on its lane. */
  pendingTopic?: string;
  /** reconcile-template's own topic: a STATUS message there asks for a recount of every kind. */
  templateTopic?: string;
  systemNamespaces?: readonly string[];
  concurrency?: number;
  messagesPerSecond?: number;
  /** Namespaces per fan-out message. */
  batch?: number;
  progressEvery?: number;
  pageSize?: number;
  log: Logger;
  now?: () => Date;
}

export interface TemplateResult {
  template: string;
  deleted: boolean;
  fannedOut: boolean;
  published: number;
  targets: number;
  statusWritten: boolean;
  /** A STATUS message answered by a recount already queued. */
  coalesced?: boolean;
}

/** A failed call ends the reconcile: redelivered when transient, acknowledged and reported when permanent. */
function transientOr(what: string, status: number, reason: string | undefined, error: string | undefined): never {
  throw apiError(what, { status, reason, message: error });
}

/**
 * The namespaces and their ApplySet parents, both lists at once (each a page at a time). A
 * namespace furnished after the parents list was taken wrote its parent after it too: when a
 * namespace seen furnished was written after that list and has no parent in it, the parents are
 * listed again (then after the namespaces), so that it is seen with its parent (a namespace not
 * furnished yet is messaged anyway). A quiet fan-out lists them once.
 */
async function readState(deps: TemplateDeps): Promise<{ namespaces: NamespaceInfo[]; parents: ParentRecord[]; deleting: Set<string> }> {
  const namespaces: NamespaceInfo[] = [];
  const deleting = new Set<string>();
  const written: NamespaceWrite[] = [];
  const [nsList, first] = await Promise.all([
    listEach(deps.kube, resourcePath(NAMESPACES), { limit: deps.pageSize }, (ns) => {
      const info = namespaceInfo(ns);
      namespaces.push(info);
      if (ns.metadata.deletionTimestamp) deleting.add(info.name);
      if (!notFurnishedYet(info, deps.systemNamespaces)) written.push({ name: info.name, resourceVersion: ns.metadata.resourceVersion });
    }),
    readParents(deps),
  ]);
  if (!nsList.ok) transientOr('list namespaces', nsList.status, nsList.reason, nsList.error);
  const { parents } = parentsMissed(written, first.parents, first.resourceVersion) ? await readParents(deps) : first;
  return { namespaces, parents, deleting };
}

async function readParents(deps: TemplateDeps): Promise<{ parents: ParentRecord[]; resourceVersion: string }> {
  const parents: ParentRecord[] = [];
  const listed = await listEach(deps.kube, '/api/v1/configmaps', { labelSelector: KEY.applySetId, limit: deps.pageSize }, (cm: KubeObject) => {
    if (cm.metadata.name === APPLYSET_PARENT_NAME) parents.push(parentRecord(cm));
  });
  if (!listed.ok) transientOr('list applyset parents', listed.status, listed.reason, listed.error);
  return { parents, resourceVersion: listed.resourceVersion };
}

/**
 * The template's objects across the cluster (by label, a page at a time, only keys and hashes
 * kept), of `only` these kinds when given; null without a resolver.
 */
async function readLive(deps: TemplateDeps, t: NamespaceTemplate, only: readonly string[] | null): Promise<LiveObjects | null> {
  if (!deps.resolver) return null;
  const name = t.metadata.name ?? '';
  const kinds = only ?? sortedUnique((t.spec.templates ?? []).map((o) => groupKindOf(String(o.apiVersion ?? ''), String(o.kind ?? ''))));
  const live = emptyLive();
  // Every kind at once: the fan-out waits for the slowest list, not for their sum.
  await Promise.all(kinds.map(async (gk) => {
    const { group, kind } = parseGroupKind(gk);
    const info = await deps.resolver!.forGroupKind(group, kind);
    if (!info) return;
    const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
    const result = await listEach(deps.kube, resourcePath(info), { labelSelector: `${KEY.template}=${name}`, limit: deps.pageSize }, (item: KubeObject) => addLive(live, { ...item, apiVersion, kind }));
    if (!result.ok) transientOr(`list ${gk} of template ${name}`, result.status, result.reason, result.error);
  }));
  return live;
}

/**
 * The fan-out's messages: the batched targets in batches, each namespace with what it holds of the
 * template (when read); a namespace not furnished yet alone, named by the message (its ordering
 * key is the namespace's own), without the digest.
 */
export function fanoutMessages(opts: { cluster: string; template: string; cause: string; digest: string; batch: number; namespacesInCluster?: number; heldKinds?: readonly string[] | null }, targets: FanoutTargets, live: LiveObjects | null): ReconcileMessage[] {
  const batches = chunk(targets.batched, opts.batch).map((names, i): ReconcileMessage => ({
    v: 1,
    cluster: opts.cluster,
    kind: 'Namespace',
    name: `${opts.template.slice(0, 200)}#${i}`,
    type: 'FANOUT',
    cause: opts.cause,
    templates: opts.digest,
    template: opts.template,
    targets: names.map((n) => (live ? { n, h: live.byNamespace.get(n) ?? {} } : { n })),
    // The kinds `h` covers (changedKinds); the others are judged by each namespace's record.
    ...(live && opts.heldKinds ? { heldKinds: [...opts.heldKinds] } : {}),
    // Each list costs the cluster's size: decided by the names one list carries, not the batch size.
    ...(opts.namespacesInCluster !== undefined && batchesList(opts.namespacesInCluster, Math.min(names.length, NAMES_PER_LIST)) ? { listTargets: true } : {}),
  }));
  const alone = targets.alone.map((n): ReconcileMessage => ({ v: 1, cluster: opts.cluster, kind: 'Namespace', name: n, type: 'FANOUT', cause: opts.cause }));
  return [...batches, ...alone];
}

async function patchStatus(deps: TemplateDeps, name: string, status: NamespaceTemplateStatus): Promise<void> {
  const res = await mergePatch(deps.kube, `${resourcePath(TEMPLATES, undefined, name)}/status`, { status });
  if (!res.ok && res.status !== 404) transientOr(`update status of template ${name}`, res.status, res.reason, res.error);
}

async function readTemplate(deps: TemplateDeps, name: string): Promise<NamespaceTemplate | null> {
  const got = await deps.kube.call<NamespaceTemplate>({ method: 'GET', path: resourcePath(TEMPLATES, undefined, name) });
  if (!got.ok && got.status !== 404) transientOr(`get template ${name}`, got.status, got.reason, got.error);
  return got.ok ? got.data! : null;
}

/**
 * Every template, not only this one: the fan-out tells namespaces which templates it saw (one
 * digest, templatesDigest). A batch lists them again when it runs (namespace-batch.ts), and logs
 * when it finds them changed since; a message without targets that carries the digest is planned
 * from templates held with it.
 */
async function readAllTemplates(deps: TemplateDeps, name: string): Promise<{ t: NamespaceTemplate | null; all: NamespaceTemplate[] }> {
  const listed = await listAll(deps.kube, resourcePath(TEMPLATES));
  if (!listed.result.ok) transientOr('list namespacetemplates', listed.result.status, listed.result.reason, listed.result.error);
  const all = listed.items as NamespaceTemplate[];
  return { t: all.find((x) => x.metadata.name === name) ?? null, all };
}

/**
 * `recountOnly` (STATUS messages): never fan out. A namespace converging during a fan-out would
 * otherwise find the fan-out not yet recorded and start a second one.
 */
export async function reconcileTemplate(deps: TemplateDeps, name: string, opts: { recountOnly?: boolean } = {}): Promise<TemplateResult> {
  const now = () => deps.now?.() ?? new Date();
  const started = performance.now();
  const { t, all } = opts.recountOnly ? { t: await readTemplate(deps, name), all: [] } : await readAllTemplates(deps, name);
  const result: TemplateResult = { template: name, deleted: t === null, fannedOut: false, published: 0, targets: 0, statusWritten: false };
  const fanningOut = !opts.recountOnly && fanoutNeeded(t);
  // A fan-out reads the objects of the kinds whose entries changed since a rollout seen complete; a recount, every kind.
  const kinds = fanningOut && t ? changedKinds(fanoutEntries(t), fanoutBase(t, parseFanoutEntries(t.metadata.annotations?.[KEY.fanoutEntries]))) : null;
  // The namespaces, their parents and the template's objects, read side by side.
  const [{ namespaces, parents, deleting }, live] = await Promise.all([readState(deps), t ? readLive(deps, t, kinds) : null]);
  // A namespace being deleted no longer counts: one still pending or failed would hold Ready back until it is gone (heldBackBy).
  const present = namespaces.filter((ns) => !deleting.has(ns.name));
  const readMs = Math.round(performance.now() - started);
  let status = t?.status;

  if (fanningOut) {
    const targets = fanoutTargets(name, t, namespaces, parents, deps.systemNamespaces, deleting);
    result.targets = targets.batched.length + targets.alone.length;
    result.fannedOut = true;
    const bucket = new TokenBucket(deps.messagesPerSecond ?? 2000, Math.max(1, Math.ceil((deps.messagesPerSecond ?? 2000) / 10)));
    const cause = `template/${name}@${t?.metadata.resourceVersion ?? 'deleted'}`;
    const batch = Math.max(1, Math.min(deps.batch ?? DEFAULT_FANOUT_BATCH, MAX_FANOUT_TARGETS));
    const every = Math.max(batch, deps.progressEvery ?? 2000);
    const counts0 = t ? tallyTemplate(t, present, parents, null, deps.systemNamespaces) : null;
    const messages = fanoutMessages({ cluster: deps.cluster, template: name, cause, digest: templatesDigest(all), batch, namespacesInCluster: namespaces.length, heldKinds: kinds }, targets, live);
    const total = result.targets;
    // A batch takes the namespaces topic; a namespace messaged alone is pending: the relay's pending lane.
    const topicOf = (msg: ReconcileMessage): string => (msg.targets ? deps.namespaceTopic : deps.pendingTopic ?? deps.namespaceTopic);
    let failed = 0;
    for (const group of chunk(messages, Math.max(1, Math.floor(every / batch)))) {
      const results = await mapLimit(group, deps.concurrency ?? 64, async (msg) => {
        await bucket.take((ms) => new Promise((r) => setTimeout(r, ms)));
        const sent = await deps.bus.publish(topicOf(msg), encodeMessage(msg));
        return { ok: sent.ok, namespaces: msg.targets?.length ?? 1 };
      });
      for (const r of results) {
        if (r.ok) result.published += r.namespaces;
        else failed += r.namespaces;
      }
      if (t && counts0 && result.published < total) {
        status = templateStatus(status, counts0, now(), { published: result.published, total, done: false });
        await patchStatus(deps, name, status);
      }
    }
    await deps.bus.flush();
    // How long the reads before the first publish took, and the publishes: a fan-out's fixed part.
    deps.log.log(failed ? 'WARNING' : 'INFO', 'template fan-out', { template: name, deleted: t === null, targets: total, alone: targets.alone.length, published: result.published, failed, kindsRead: kinds ?? 'all', readMs, publishMs: Math.round(performance.now() - started) - readMs });
    // Failing the delivery makes Pub/Sub redeliver: the whole fan-out runs again, which is harmless.
    if (failed > 0) throw new TransientError(`template ${name}: ${failed} of ${total} publishes failed`, { status: 503 });
    if (t) {
      const record = (entries: string | null) => mergePatch(deps.kube, resourcePath(TEMPLATES, undefined, name), { metadata: { annotations: { [KEY.fanoutHash]: fanoutRecord(t), [KEY.fanoutEntries]: entries } } });
      let res = await record(entriesAnnotation(t));
      // Refused (the annotations would pass 256 KiB beside the others): the hash alone, so that the next fan-out reads every kind rather than this one repeating.
      if (res.status === 422) res = await record(null);
      if (!res.ok && res.status !== 404) transientOr(`record fan-out of template ${name}`, res.status, res.reason, res.error);
    }
  }
  if (!t) return result;
  const tally = tallyTemplate(t, present, parents, live?.hashes ?? null, deps.systemNamespaces, kinds);
  const counted = templateStatus(status, tally, now(), result.fannedOut ? { published: result.published, total: result.targets, done: true } : undefined, tally.failures);
  const next = kinds === null ? counted : readyUnraised(status, counted);
  if (statusDiffers(t.status, next)) {
    await patchStatus(deps, name, next);
    result.statusWritten = true;
  }
  // A tally of some kinds that finds nothing pending cannot vouch for the others, and no batch will
  // write (and tell): a recount of every kind decides Ready. One that finds namespaces pending is
  // answered by the batches that write them.
  if (kinds !== null && tally.pending.length === 0) await askRecount(deps, name);
  return result;
}

/**
 * A tally of some kinds cannot say that every namespace holds the others: it never raises Ready,
 * which keeps what it said before (at its generation), so that the next fan-out does not take this
 * one as seen complete (fanoutBase) until a recount of every kind says so.
 */
export function readyUnraised(prev: NamespaceTemplateStatus | undefined, next: NamespaceTemplateStatus): NamespaceTemplateStatus {
  const raised = next.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  if (!raised) return next;
  const before = prev?.conditions?.find((c) => c.type === 'Ready');
  const kept = before ?? { ...raised, status: 'False' as const, reason: 'Verifying', message: 'a recount of every kind decides' };
  return { ...next, conditions: upsert(next.conditions ?? [], kept) };
}

/** The record of this fan-out, or null (removed: the next reads every kind) when too large to keep beside the template's other annotations. */
export function entriesAnnotation(t: NamespaceTemplate): string | null {
  const text = JSON.stringify(fanoutEntries(t));
  return text.length <= MAX_ENTRIES_ANNOTATION ? text : null;
}

/** Annotations of an object share 256 KiB: the fan-out's record takes a quarter at most. */
const MAX_ENTRIES_ANNOTATION = 64 * 1024;

/** Best effort: a lost recount costs a status that waits for the next message or the resync. */
async function askRecount(deps: TemplateDeps, name: string): Promise<void> {
  if (!deps.templateTopic) return;
  const sent = await deps.bus.publish(deps.templateTopic, encodeMessage(statusMessage(deps.cluster, name, `fanout/${name}`)));
  if (!sent.ok) deps.log.log('WARNING', 'could not ask for a recount after a fan-out', { template: name, error: sent.error });
}
