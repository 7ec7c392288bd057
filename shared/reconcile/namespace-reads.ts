// reconcile-namespace's reads, thin: the namespace, the templates (a list recent enough is shared
// by the reconciles of one instance), the ApplySet parent, the live objects of the kinds Furnish
// may have applied, and the creator's `use` of require-permission templates. No decisions here beyond
// classifying a failed read: transient ones throw TransientError (redelivery), permanent ones
// are answered as a reason.
import { creatorIdentityOf } from '../auth/creator.ts';
import { templateUse } from '../auth/template-use.ts';
import { listAll, NAMESPACES, TEMPLATES } from '../kube/api.ts';
import type { KubeClient, KubeResponse } from '../kube/client.ts';
import { classifyApiError, TransientError } from '../kube/errors.ts';
import { resourcePath, type ResourceResolver } from '../kube/resources.ts';
import { refusal, type Authorizer } from '../kube/sar.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import { APPLYSET_PARENT_NAME, type NamespaceTemplate } from '../render/index.ts';
import { writtenAfter } from '../kube/revisions.ts';
import { parseGroupKind } from './objects.ts';
import { namespaceInfo, parentGroupKinds } from './plan.ts';

export interface ReadDeps {
  kube: KubeClient;
  resolver: ResourceResolver;
  authorizer?: Authorizer;
  systemNamespaces?: readonly string[];
  log: Logger;
}

/** A failed read: transient ones throw (redelivery), permanent ones are answered with the reason. */
export function failRead(what: string, res: Pick<KubeResponse<unknown>, 'status' | 'reason' | 'error'>): string {
  const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
  if (c.class === 'transient') throw new TransientError(`${what}: ${c.why}: ${res.error ?? ''}`, { status: res.status, reason: res.reason, message: res.error });
  return `${what}: ${c.why}: ${res.error ?? ''}`;
}

export type Read<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The object at `path`, null when absent. */
async function getOrNull(kube: KubeClient, what: string, path: string): Promise<Read<KubeObject | null>> {
  const res = await kube.call<KubeObject>({ method: 'GET', path });
  if (res.ok) return { ok: true, value: res.data! };
  if (res.status === 404) return { ok: true, value: null };
  return { ok: false, reason: failRead(what, res) };
}

export function readNamespace(kube: KubeClient, name: string): Promise<Read<KubeObject | null>> {
  return getOrNull(kube, `get namespace ${name}`, resourcePath(NAMESPACES, undefined, name));
}

export function readParent(kube: KubeClient, namespace: string): Promise<Read<KubeObject | null>> {
  return getOrNull(kube, `get applyset parent in ${namespace}`, `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${APPLYSET_PARENT_NAME}`);
}

/** A list of the templates and the revision it shows the API at. */
export interface TemplatesRead {
  templates: NamespaceTemplate[];
  /** The list's resourceVersion: every template written before it is in the list as written. */
  listedAt: string;
}

/** Per client: the last list of the templates, and a list in flight that concurrent reconciles share. */
const snapshots = new WeakMap<KubeClient, { last?: TemplatesRead; inflight?: Promise<Read<TemplatesRead>> }>();

async function listTemplatesNow(kube: KubeClient): Promise<Read<TemplatesRead>> {
  const { result, items } = await listAll(kube, resourcePath(TEMPLATES));
  if (!result.ok) return { ok: false, reason: failRead('list namespacetemplates', result) };
  return { ok: true, value: { templates: items as NamespaceTemplate[], listedAt: result.resourceVersion } };
}

const recentEnough = (read: TemplatesRead | undefined, atLeast: string): read is TemplatesRead => read !== undefined && !writtenAfter(atLeast, read.listedAt);

/**
 * The templates as listed at or after revision `atLeast` (the change a message names, or a write
 * Furnish made in the namespace: plan.ts templatesOutdated), so that a fan-out of 1,000 namespaces
 * lists them a few times, not 1,000: the last list, or one in flight, when recent enough; else a
 * new list, which concurrent reconciles share. Without `atLeast`, always a new list.
 */
export async function readTemplates(kube: KubeClient, atLeast?: string): Promise<Read<TemplatesRead>> {
  let slot = snapshots.get(kube);
  if (!slot) snapshots.set(kube, (slot = {}));
  if (atLeast !== undefined) {
    if (recentEnough(slot.last, atLeast)) return { ok: true, value: slot.last };
    // A shared list that failed (another delivery's deadline, a 503) is this one's to send again.
    const shared = slot.inflight ? await slot.inflight.catch(() => undefined) : undefined;
    if (shared?.ok && recentEnough(shared.value, atLeast)) return shared;
  }
  const listing = listTemplatesNow(kube);
  slot.inflight = listing;
  const got = await listing.finally(() => { if (slot.inflight === listing) slot.inflight = undefined; });
  if (got.ok && (!slot.last || writtenAfter(got.value.listedAt, slot.last.listedAt))) slot.last = got.value;
  return got;
}

export interface Observed {
  /** Every object of the kinds listed (ownership is the planner's to judge). */
  objects: KubeObject[];
  /** Kinds that could not be listed for a permanent reason (403, not served): nothing is forgotten about them. */
  unreadableKinds: string[];
}

/** Lists each kind in the namespace (all at once), every object (a label taken off does not hide one). */
export async function observeKinds(deps: ReadDeps, namespace: string, kinds: readonly string[]): Promise<Observed> {
  const perKind = await Promise.all(kinds.map(async (gk): Promise<{ objects: KubeObject[]; unreadable: boolean }> => {
    const { group, kind } = parseGroupKind(gk);
    const info = await deps.resolver.forGroupKind(group, kind);
    if (!info) return { objects: [], unreadable: true };
    if (!info.namespaced) return { objects: [], unreadable: false };
    const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
    const { result, items } = await listAll(deps.kube, resourcePath(info, namespace));
    if (!result.ok) {
      deps.log.log('WARNING', 'kind not readable; what Furnish recorded of it is kept', { namespace, groupKind: gk, why: failRead(`list ${gk} in ${namespace}`, result) });
      return { objects: [], unreadable: true };
    }
    return { objects: items.map((item) => ({ ...item, apiVersion: item.apiVersion ?? apiVersion, kind: item.kind ?? kind })), unreadable: false };
  }));
  // In the order of `kinds`, whatever order the lists answered in.
  return { objects: perKind.flatMap((k) => k.objects), unreadableKinds: kinds.filter((_, i) => perKind[i]!.unreadable) };
}

/** The ApplySet parent is a ConfigMap: a namespace whose ConfigMaps are listed anyway needs no read of its own for it. */
const PARENT_KIND = 'ConfigMap';

const isParent = (o: KubeObject): boolean => o.kind === PARENT_KIND && o.metadata.name === APPLYSET_PARENT_NAME;

/**
 * The ApplySet parent and the live objects of `kinds`, read side by side: the parent comes with
 * the ConfigMaps when they are listed (one call less), else by its own GET at the same time. Kinds
 * the parent names that `kinds` lacks are listed afterwards (its group-kinds outgrow the templates'
 * only when a template dropped a kind).
 */
export async function observeNamespace(deps: ReadDeps, namespace: string, kinds: readonly string[]): Promise<Read<{ parent: KubeObject | null; seen: Observed }>> {
  const listsParent = kinds.includes(PARENT_KIND);
  const [seen, got] = await Promise.all([observeKinds(deps, namespace, kinds), listsParent ? null : readParent(deps.kube, namespace)]);
  const parent = got ?? (seen.unreadableKinds.includes(PARENT_KIND) ? await readParent(deps.kube, namespace) : { ok: true as const, value: seen.objects.find(isParent) ?? null });
  if (!parent.ok) return parent;
  const more = parentGroupKinds(parent.value).filter((k) => !kinds.includes(k));
  if (more.length === 0) return { ok: true, value: { parent: parent.value, seen } };
  const extra = await observeKinds(deps, namespace, more);
  return { ok: true, value: { parent: parent.value, seen: { objects: [...seen.objects, ...extra.objects], unreadableKinds: [...seen.unreadableKinds, ...extra.unreadableKinds] } } };
}

export interface Grants {
  granted: Set<string>;
  refused: { template: string; message: string }[];
}

/**
 * The require-permission templates the creator may use, asked with the identity admission recorded
 * (the same rule as admission, shared/auth/creator.ts); each refused one is a failure to report.
 */
export async function grantedTemplates(deps: ReadDeps, ns: KubeObject, templates: readonly NamespaceTemplate[]): Promise<Grants> {
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
