// reconcile-template's decisions: whether a template change must fan out, to which namespaces,
// and the counts its status reports. Namespaces are carried as NamespaceInfo (names and labels),
// never as whole objects.
import { KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { isSystemNamespace, matchTemplates } from '../render/index.ts';
import type { NamespaceInfo, NamespaceTemplate } from '../render/types.ts';
import { sortedUnique, splitList } from './objects.ts';
import { entryKind, fanoutRecord, templateFingerprint, type FanoutEntries } from './fingerprints.ts';
import { writtenAfter } from '../kube/revisions.ts';


/**
 * A deleted template always fans out; otherwise only when its fingerprint moved since the last
 * fan-out, or that fan-out was another object's (an exported template applied again after a delete
 * is a new object carrying the old record). A record from before it named the uid (the fingerprint
 * alone: an upgrade) is taken as this object's while its status says Ready at its generation, so a
 * rolled-out template is not fanned out again. A record of another uid is never taken: it may come
 * from another cluster, beside an annotation change (apply, require-permission) no generation counts.
 */
export function fanoutNeeded(t: NamespaceTemplate | null): boolean {
  if (!t) return true;
  const recorded = t.metadata.annotations?.[KEY.fanoutHash];
  if (recorded === fanoutRecord(t)) return false;
  return !(recorded === templateFingerprint(t) && readyGeneration(t) === t.metadata.generation);
}

/** The generation the template's status says is rolled out everywhere (Ready, decided by a recount of every kind); undefined while not Ready. */
function readyGeneration(t: NamespaceTemplate): number | undefined {
  const ready = t.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? ready.observedGeneration : undefined;
}

/** Bookkeeping a namespace's ApplySet parent records for the templates. */
export interface ParentRecord {
  namespace: string;
  applied: string[];
  failed: string[];
}

export function parentRecord(parent: KubeObject): ParentRecord {
  return {
    namespace: parent.metadata.namespace ?? '',
    applied: splitList(parent.metadata.annotations?.[KEY.appliedTemplates]),
    failed: splitList(parent.metadata.annotations?.[KEY.failedTemplates]),
  };
}

/** Whether a namespace matches a template now. Permission is the namespace reconciler's to check. */
export function matchesNow(t: NamespaceTemplate, ns: NamespaceInfo, systemNamespaces: readonly string[] = []): boolean {
  return matchTemplates(ns, [t], { systemNamespaces, granted: () => true }).matched.length === 1;
}

/**
 * A namespace Furnish has not furnished yet (phase `pending`), system namespaces aside. Its first
 * reconcile may be in flight, planned from the templates as they were before this change, and
 * write its ApplySet parent after the fan-out read the parents: only a reconcile after that one,
 * listing the templates afresh, is sure to see the change. Not a namespace without the phase:
 * opted out (a CI principal's, possibly thousands) or older than Furnish's webhook, it would be
 * messaged alone by every fan-out; the older ones' first reconcile races only an install, and the
 * resync repairs that.
 */
export function notFurnishedYet(ns: NamespaceInfo, systemNamespaces: readonly string[] = []): boolean {
  return ns.labels[KEY.phase] === PHASE.pending && !isSystemNamespace(ns.name, systemNamespaces);
}

/** A namespace seen furnished (or never to be), with the resourceVersion of its last write. */
export interface NamespaceWrite {
  name: string;
  resourceVersion?: string;
}

/**
 * Whether a parents list taken at `parentsAt` may lack a namespace's parent: a namespace seen
 * furnished, written after that list, with no parent in it (it was furnished in between: its
 * parent came first, after the list). Namespaces written before it are in it as they were.
 */
export function parentsMissed(namespaces: readonly NamespaceWrite[], parents: readonly ParentRecord[], parentsAt: string): boolean {
  const have = new Set(parents.map((p) => p.namespace));
  return namespaces.some((n) => !have.has(n.name) && writtenAfter(n.resourceVersion, parentsAt));
}

export interface FanoutTargets {
  /** Namespaces converged in batches: those that match now, and those that carry the template from before. */
  batched: string[];
  /**
   * Namespaces not furnished yet (notFurnishedYet), matching or not: each is sent alone, on the
   * relay's topic for pending namespaces and under its own ordering key (so after the reconcile in
   * flight: one ordering key orders messages on one topic only), without the digest (so it lists
   * the templates afresh).
   */
  alone: string[];
}

/**
 * `deleting`: namespaces being deleted, never messaged: their reconcile would skip them, and what
 * Furnish put there goes with them.
 */
export function fanoutTargets(name: string, t: NamespaceTemplate | null, namespaces: readonly NamespaceInfo[], parents: readonly ParentRecord[], systemNamespaces: readonly string[] = [], deleting: ReadonlySet<string> = new Set()): FanoutTargets {
  const live = namespaces.filter((ns) => !deleting.has(ns.name));
  const alone = new Set(live.filter((ns) => notFurnishedYet(ns, systemNamespaces)).map((ns) => ns.name));
  const targets = new Set<string>();
  if (t && !t.metadata.deletionTimestamp) for (const ns of live) if (matchesNow(t, ns, systemNamespaces)) targets.add(ns.name);
  const existing = new Set(live.map((n) => n.name));
  for (const p of parents) if (existing.has(p.namespace) && (p.applied.includes(name) || p.failed.includes(name))) targets.add(p.namespace);
  return { batched: [...targets].filter((n) => !alone.has(n)).sort(), alone: [...alone].sort() };
}

/**
 * The kinds whose objects a fan-out reads cluster-wide: those of the entries added, changed or
 * removed since the base (fanoutBase). An unchanged entry renders what it rendered, so the objects
 * of its kind are judged by each namespace's record (an object recorded as applied by a template
 * that did not fail is in place); drift is the drift watch's and the resync's. Null (every kind)
 * without a base, or when anything around the entries changed, which may change every object.
 */
export function changedKinds(now: FanoutEntries, before: FanoutEntries | null): string[] | null {
  if (!before || before.s !== now.s) return null;
  const moved = [...Object.entries(now.e).filter(([id, hash]) => before.e[id] !== hash), ...Object.entries(before.e).filter(([id]) => !(id in now.e))];
  // An entry without a kind is not one (validate-template refuses it): nothing to read for it.
  return sortedUnique(moved.map(([id]) => entryKind(id)).filter((k) => k !== ''));
}

/**
 * What the last fan-out recorded, as the base of the next one's reads, only while the template's
 * status vouches that it was rolled out: Ready at the recorded generation, which a recount of every
 * kind decides. A rollout not seen complete (a batch dead-lettered, a namespace that failed), a
 * record from another generation (an exported template applied again, a downgrade that left it) or
 * none: every kind is read, as a fan-out always did.
 */
export function fanoutBase(t: NamespaceTemplate, recorded: FanoutEntries | null): FanoutEntries | null {
  return recorded && readyGeneration(t) === recorded.g ? recorded : null;
}

/** Names per list of a batch's namespaces: a selector of a hundred names of at most 63 characters stays well inside any URL limit. */
export const NAMES_PER_LIST = 100;

/**
 * Namespaces in the cluster per namespace of a list up to which the batch reads its namespaces by
 * one labelled list rather than a GET each. The API server reads such a list whole from etcd and
 * filters it afterwards, so the list costs the cluster's size and the GETs the batch's: 22 batches
 * of 50 on kube-apiserver 1.26.3 (2 cores) cost the server and etcd 200-440 ms of CPU by lists
 * against 390-750 ms by GETs (and the client 170-240 ms more) with 1,100 namespaces, and
 * 980-1,400 ms against 580-980 ms with 5,000.
 */
export const LIST_WHILE_NAMESPACES_PER_TARGET = 50;

/** Whether a list of `names` namespaces (NAMES_PER_LIST at most) costs less than a GET each in a cluster of this size. */
export function batchesList(namespacesInCluster: number, names: number): boolean {
  return namespacesInCluster <= names * LIST_WHILE_NAMESPACES_PER_TARGET;
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

