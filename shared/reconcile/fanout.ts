// reconcile-template's decisions: whether a template change must fan out, to which namespaces,
// and the counts its status reports. Namespaces are carried as NamespaceInfo (names and labels),
// never as whole objects.
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { matchTemplates } from '../render/index.ts';
import type { NamespaceInfo, NamespaceTemplate } from '../render/types.ts';
import { splitList } from './objects.ts';
import { templateFingerprint } from './fingerprints.ts';


/** A deleted template always fans out; otherwise only when its fingerprint moved since the last fan-out. */
export function fanoutNeeded(t: NamespaceTemplate | null): boolean {
  if (!t) return true;
  return t.metadata.annotations?.[KEY.fanoutHash] !== templateFingerprint(t);
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

/** Namespaces to reconcile: those that match now, and those that carry the template from before. */
export function fanoutTargets(name: string, t: NamespaceTemplate | null, namespaces: readonly NamespaceInfo[], parents: readonly ParentRecord[], systemNamespaces: readonly string[] = []): string[] {
  const targets = new Set<string>();
  if (t && !t.metadata.deletionTimestamp) for (const ns of namespaces) if (matchesNow(t, ns, systemNamespaces)) targets.add(ns.name);
  const existing = new Set(namespaces.map((n) => n.name));
  for (const p of parents) if (existing.has(p.namespace) && (p.applied.includes(name) || p.failed.includes(name))) targets.add(p.namespace);
  return [...targets].sort();
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

