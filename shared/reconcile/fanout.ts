// reconcile-template's decisions: to which namespaces a template change fans out. Namespaces are
// carried as NamespaceInfo (names and labels), never as whole objects.
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { matchTemplates } from '../render/index.ts';
import type { NamespaceInfo, NamespaceTemplate } from '../render/types.ts';
import { splitList } from './objects.ts';

/**
 * Whether a template message asks for a fan-out: a create, change or deletion the relay saw. A
 * resync (SYNC) or a namespace's notice (STATUS) only recounts: what a resync would repair, the
 * namespaces' own resync repairs.
 */
export function fanoutNeeded(type: string): boolean {
  return type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED';
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
 * The namespaces a change of template `name` concerns: those it selects now, and those whose
 * ApplySet parent names it (they hold it from before). A namespace whose reconcile is in flight,
 * planned from the template's version before, is one of them or names it in a parent written
 * after these were read; that write is itself a change the relay sends on, and the reconcile it
 * causes plans from templates at least that recent (docs/adr/0009). `deleting`: namespaces being
 * deleted, never messaged (what Furnish put there goes with them).
 */
export function fanoutTargets(name: string, t: NamespaceTemplate | null, namespaces: readonly NamespaceInfo[], parents: readonly ParentRecord[], systemNamespaces: readonly string[] = [], deleting: ReadonlySet<string> = new Set()): string[] {
  const live = namespaces.filter((ns) => !deleting.has(ns.name));
  const targets = new Set<string>();
  if (t && !t.metadata.deletionTimestamp) for (const ns of live) if (matchesNow(t, ns, systemNamespaces)) targets.add(ns.name);
  const existing = new Set(live.map((n) => n.name));
  for (const p of parents) if (existing.has(p.namespace) && (p.applied.includes(name) || p.failed.includes(name))) targets.add(p.namespace);
  return [...targets].sort();
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
