// reconcile-template's executor: on a template's creation, change or deletion, publish one
// reconcile message per namespace that matches now or carries the template from before (on the
// namespace's own ordering key, naming the revision the fan-out read: docs/adr/0009), with bounded
// concurrency and a client-side rate limit, reporting progress in the template status; on every
// message (resync included, and the STATUS messages namespaces send when they change), recount
// and write the status only if it changed. It is the one writer of template status, and decides
// nothing from it.
import { FIELD_MANAGER, KEY, LEGACY_KEY } from '../keys.ts';
import type { Bus } from '../bus/types.ts';
import { listEach, mergePatch, NAMESPACES, TEMPLATES } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { TokenBucket } from '../kube/ratelimit.ts';
import { resourcePath, type ResourceResolver } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { APPLYSET_PARENT_NAME, type NamespaceInfo, type NamespaceTemplate, type NamespaceTemplateStatus } from '../render/index.ts';
import { mapLimit } from './concurrency.ts';
import { apiError, TransientError } from '../kube/errors.ts';
import { chunk, fanoutTargets, parentRecord, type ParentRecord } from './fanout.ts';
import type { Logger } from '../log.ts';
import { encodeMessage, type ReconcileMessage } from '../bus/envelope.ts';
import { namespaceInfo } from './plan.ts';
import { groupKindOf, parseGroupKind, sortedUnique } from './objects.ts';
import { statusDiffers, templateStatus, withProgress } from './report.ts';
import { addLive, tallyTemplate, type LiveHashes } from './template-status.ts';

export interface TemplateDeps {
  kube: KubeClient;
  /** Finds the template's kinds, to check that namespaces hold its current objects. Without it, the parents' word is taken. */
  resolver?: ResourceResolver;
  bus: Bus;
  cluster: string;
  namespaceTopic: string;
  systemNamespaces?: readonly string[];
  concurrency?: number;
  messagesPerSecond?: number;
  /** Messages published between two progress reports in the template's status. */
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

interface ClusterState {
  namespaces: NamespaceInfo[];
  parents: ParentRecord[];
  deleting: Set<string>;
  /** The revision the namespaces were listed at: every template change before it is in what the fan-out read. */
  listedAt: string;
}

/** The namespaces and their ApplySet parents, both lists at once (each a page at a time). */
async function readState(deps: TemplateDeps): Promise<ClusterState> {
  const namespaces: NamespaceInfo[] = [];
  const deleting = new Set<string>();
  const parents: ParentRecord[] = [];
  const [nsList, parentList] = await Promise.all([
    listEach(deps.kube, resourcePath(NAMESPACES), { limit: deps.pageSize }, (ns) => {
      const info = namespaceInfo(ns);
      namespaces.push(info);
      if (ns.metadata.deletionTimestamp) deleting.add(info.name);
    }),
    listEach(deps.kube, '/api/v1/configmaps', { labelSelector: KEY.applySetId, limit: deps.pageSize }, (cm: KubeObject) => {
      if (cm.metadata.name === APPLYSET_PARENT_NAME) parents.push(parentRecord(cm));
    }),
  ]);
  if (!nsList.ok) transientOr('list namespaces', nsList.status, nsList.reason, nsList.error);
  if (!parentList.ok) transientOr('list applyset parents', parentList.status, parentList.reason, parentList.error);
  return { namespaces, parents, deleting, listedAt: nsList.resourceVersion };
}

/** The template's objects across the cluster (by label, a page at a time, only keys and hashes kept); null without a resolver. */
async function readLive(deps: TemplateDeps, t: NamespaceTemplate): Promise<LiveHashes | null> {
  if (!deps.resolver) return null;
  const name = t.metadata.name ?? '';
  const kinds = sortedUnique((t.spec.templates ?? []).map((o) => groupKindOf(String(o.apiVersion ?? ''), String(o.kind ?? ''))));
  const live = new Map<string, string>();
  // Every kind at once: the recount waits for the slowest list, not for their sum.
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
 * One message per namespace, on its own ordering key, naming the revision the fan-out read: the
 * namespace reconciles after whatever reconcile of it is in flight, from templates at least that
 * recent. It carries nothing the receiver trusts.
 */
export function fanoutMessage(cluster: string, namespace: string, cause: string, resourceVersion: string): ReconcileMessage {
  return { v: 1, cluster, kind: 'Namespace', name: namespace, type: 'FANOUT', cause, ...(resourceVersion ? { resourceVersion } : {}) };
}

/**
 * Writes a status computed from the template at `resourceVersion` (and from what was read after
 * it): refused with 409 once anyone wrote the template since, so that a recount that read earlier
 * never lands over a later one's (recounts of one template run side by side: STATUS messages take
 * their cause's ordering key). The template's new resourceVersion, 'conflict', or null when the
 * template is gone.
 */
async function patchStatus(deps: TemplateDeps, name: string, status: NamespaceTemplateStatus, resourceVersion: string | undefined): Promise<string | 'conflict' | null> {
  const res = await deps.kube.call<NamespaceTemplate>({
    method: 'PATCH', path: `${resourcePath(TEMPLATES, undefined, name)}/status`, query: { fieldManager: FIELD_MANAGER }, contentType: 'application/merge-patch+json',
    body: { metadata: { resourceVersion }, status }, expected: (r) => r.status === 409,
  });
  if (res.status === 409) return 'conflict';
  if (res.status === 404) return null;
  if (!res.ok) transientOr(`update status of template ${name}`, res.status, res.reason, res.error);
  return res.data?.metadata.resourceVersion ?? '';
}

async function readTemplate(deps: TemplateDeps, name: string): Promise<NamespaceTemplate | null> {
  const got = await deps.kube.call<NamespaceTemplate>({ method: 'GET', path: resourcePath(TEMPLATES, undefined, name) });
  if (!got.ok && got.status !== 404) transientOr(`get template ${name}`, got.status, got.reason, got.error);
  return got.ok ? got.data! : null;
}

/** The annotations earlier versions kept on a template (LEGACY_KEY), as the merge patch that removes them; null when it has none. */
export function legacyTemplateKeys(t: NamespaceTemplate): { metadata: { annotations: Record<string, null> } } | null {
  const found = [LEGACY_KEY.fanoutHash, LEGACY_KEY.fanoutEntries].filter((k) => t.metadata.annotations?.[k] !== undefined);
  return found.length > 0 ? { metadata: { annotations: Object.fromEntries(found.map((k) => [k, null])) } } : null;
}

/** Attempts at writing a fan-out's progress onto a template that recounts keep writing. */
const PROGRESS_WRITES = 5;

/**
 * Writes a fan-out's progress (withProgress) onto the template as it is now, keeping the counts
 * recounts wrote: read, then written with its
 * resourceVersion, read again on a conflict. Never onto a newer generation (its own fan-out
 * reports that one). The template as last read or written (null once gone); a progress report
 * that loses every race is skipped, not fatal.
 */
async function writeProgress(deps: TemplateDeps, name: string, generation: number, progress: { published: number; total: number; done: boolean }): Promise<NamespaceTemplate | null> {
  const now = deps.now?.() ?? new Date();
  let t: NamespaceTemplate | null = null;
  for (let attempt = 1; attempt <= PROGRESS_WRITES; attempt += 1) {
    t = await readTemplate(deps, name);
    if (!t || (t.metadata.generation ?? 0) !== generation) return t;
    const next = withProgress(t.status, generation, progress, now);
    if (!statusDiffers(t.status, next)) return t;
    const written = await patchStatus(deps, name, next, t.metadata.resourceVersion);
    if (written === null) return null;
    if (written !== 'conflict') return { ...t, metadata: { ...t.metadata, resourceVersion: written }, status: next };
  }
  deps.log.log('WARNING', 'fan-out progress not written: the template status changed at each attempt', { template: name, published: progress.published, total: progress.total });
  return t;
}

/**
 * Publishes one message per target, paced, reporting progress in the status; the delivery fails if
 * one publish failed (the fan-out runs again: harmless). The template as the last progress report
 * left it.
 */
async function fanOut(deps: TemplateDeps, name: string, t: NamespaceTemplate | null, state: ClusterState, result: TemplateResult): Promise<NamespaceTemplate | null> {
  const targets = fanoutTargets(name, t, state.namespaces, state.parents, deps.systemNamespaces, state.deleting);
  result.targets = targets.length;
  result.fannedOut = true;
  const perSecond = deps.messagesPerSecond ?? 2000;
  const bucket = new TokenBucket(perSecond, Math.max(1, Math.ceil(perSecond / 10)));
  const cause = `template/${name}@${t?.metadata.resourceVersion ?? 'deleted'}`;
  const generation = t?.metadata.generation ?? 0;
  let failed = 0;
  for (const group of chunk(targets, Math.max(1, deps.progressEvery ?? 2000))) {
    const sent = await mapLimit(group, deps.concurrency ?? 64, async (ns) => {
      await bucket.take((ms) => new Promise((r) => setTimeout(r, ms)));
      return (await deps.bus.publish(deps.namespaceTopic, encodeMessage(fanoutMessage(deps.cluster, ns, cause, state.listedAt)))).ok;
    });
    result.published += sent.filter(Boolean).length;
    failed += sent.filter((ok) => !ok).length;
    if (t && result.published < targets.length) t = await writeProgress(deps, name, generation, { published: result.published, total: targets.length, done: false }) ?? t;
  }
  await deps.bus.flush();
  deps.log.log(failed ? 'WARNING' : 'INFO', 'template fan-out', { template: name, deleted: t === null, targets: targets.length, published: result.published, failed });
  if (failed > 0) throw new TransientError(`template ${name}: ${failed} of ${targets.length} publishes failed`, { status: 503 });
  return t && writeProgress(deps, name, generation, { published: result.published, total: targets.length, done: true });
}

/** Recounts after a status write refused for a conflict, before giving up (then Pub/Sub redelivers a recount; a fan-out is not run again for it). */
const RECOUNTS = 3;

/**
 * `fanOut` (a create, change or deletion: fanout.ts fanoutNeeded): publish to the namespaces it
 * concerns. Always: recount, and write the status when it changed; when someone wrote the
 * template since it was read (409), read and recount again.
 */
export async function reconcileTemplate(deps: TemplateDeps, name: string, opts: { fanOut?: boolean } = {}): Promise<TemplateResult> {
  const now = () => deps.now?.() ?? new Date();
  let t = await readTemplate(deps, name);
  const result: TemplateResult = { template: name, deleted: t === null, fannedOut: false, published: 0, targets: 0, statusWritten: false };
  if (t && legacyTemplateKeys(t)) {
    const res = await mergePatch(deps.kube, resourcePath(TEMPLATES, undefined, name), legacyTemplateKeys(t));
    if (!res.ok && res.status !== 404) transientOr(`remove earlier versions' annotations from template ${name}`, res.status, res.reason, res.error);
    if (res.ok) t = res.data as NamespaceTemplate;
  }
  // The namespaces, their parents and the template's objects, read side by side.
  let [state, live] = await Promise.all([readState(deps), t ? readLive(deps, t) : null]);
  if (opts.fanOut) t = await fanOut(deps, name, t, state, result);
  for (let recount = 1; t; recount += 1) {
    const tally = tallyTemplate(t, presentOf(state), state.parents, live, deps.systemNamespaces);
    const next = templateStatus(t.status, tally, now(), tally.failures);
    if (!statusDiffers(t.status, next)) return result;
    const written = await patchStatus(deps, name, next, t.metadata.resourceVersion);
    if (written !== 'conflict') {
      result.statusWritten = written !== null;
      return result;
    }
    if (recount === RECOUNTS) {
      const why = `written by someone else during each of ${RECOUNTS} recounts`;
      if (!result.fannedOut) throw new TransientError(`template ${name}: ${why}; its status is left for the redelivery`, { status: 409 });
      // The namespaces' own STATUS messages recount it: a fan-out is not published again for this.
      deps.log.log('WARNING', `template status left to the namespaces' recounts: ${why}`, { template: name });
      return result;
    }
    t = await readTemplate(deps, name);
    if (!t) return result;
    [state, live] = await Promise.all([readState(deps), readLive(deps, t)]);
  }
  return result;
}

/** A namespace being deleted no longer counts: one still pending or failed would hold Ready back until it is gone (heldBackBy). */
function presentOf(state: ClusterState): NamespaceInfo[] {
  return state.namespaces.filter((ns) => !state.deleting.has(ns.name));
}
