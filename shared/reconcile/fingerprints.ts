// What each reconciler reads of an object, as a short hash: the relay skips a change whose hash
// did not move (a template's status, the reconciler's own phase=ready write).
import { createHash } from 'node:crypto';
import { FURNISH_INITIALIZER, INITIALIZER_KEY } from '../initializers/keys.ts';
import { KEY, LEGACY_KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NamespaceTemplate } from '../render/types.ts';

/** What namespaces see of a template: its spec and the annotations that change matching. */
function relevantOf(t: NamespaceTemplate): { spec: NamespaceTemplate['spec']; apply: string | null; requirePermission: string | null; deleting: boolean } {
  const a = t.metadata.annotations ?? {};
  return { spec: t.spec, apply: a[KEY.apply] ?? null, requirePermission: a[KEY.requirePermission] ?? null, deleting: Boolean(t.metadata.deletionTimestamp) };
}

const digest = (value: unknown, length: number) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, length);

export function templateFingerprint(t: NamespaceTemplate): string {
  return digest(relevantOf(t), 32);
}

/**
 * Annotations the reconciler writes on a namespace and reads nothing from: its verdict (and the
 * record earlier versions kept, which it removes). The initializers' progress is not among them: the
 * phase and the Ready condition follow it, so the last initializer removing itself must reach the
 * reconciler (its phase=ready is set by mutate-namespace; the condition only the reconciler writes).
 * Except its own turn: `furnish` removing itself is the reconciler's write, Ready condition included.
 */
const BOOKKEEPING_ANNOTATIONS: ReadonlySet<string> = new Set([LEGACY_KEY.applied, KEY.failure]);

/** The initializer list without `furnish`: the reconciler's own progress is no change to it. */
function othersInitializing(list: string): string {
  return list.split(',').map((s) => s.trim()).filter((s) => s !== '' && s !== FURNISH_INITIALIZER).join(',');
}

/**
 * What the namespace reconciler sees of a namespace: labels (phase aside), annotations (a template
 * renders any of them, $(ANNOTATION:key|default); opt-out, creator) but Furnish's own bookkeeping,
 * deletion. The reconciler's own writes (phase=ready, `furnish` off the initializer list, its
 * verdict) leave it unchanged, so the relay does not send the namespace straight back (see
 * namespaceChangeMatters).
 */
export function namespaceFingerprint(ns: KubeObject): string {
  const { [KEY.phase]: _phase, ...labels } = ns.metadata.labels ?? {};
  const annotations = Object.entries(ns.metadata.annotations ?? {}).filter(([k]) => !BOOKKEEPING_ANNOTATIONS.has(k))
    .map(([k, value]) => [k, k === INITIALIZER_KEY.initializers ? othersInitializing(value) : value] as const)
    .filter(([k, value]) => k !== INITIALIZER_KEY.initializers || value !== '').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Once its deletion started, nothing but the deletion concerns the reconciler (it skips the namespace).
  const relevant = ns.metadata.deletionTimestamp ? { deleting: true } : { labels, annotations, deleting: false };
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
}

/**
 * A namespace change is worth a reconcile when what it sees moved, or while it is not furnished and
 * not being deleted (each step of a deletion is a change: the start, which moves the fingerprint, is
 * enough). Furnished is phase `ready` with the Ready condition True, which the reconciler writes
 * together: a namespace made ready otherwise (`furnish` taken off its initializer list by someone
 * impersonating the reconciler, as troubleshooting a stuck one may) still reaches it.
 */
export function namespaceChangeMatters<F>(ns: KubeObject, before: F | undefined, now: F): boolean {
  if (before !== now || ns.metadata.deletionTimestamp) return before !== now;
  const conditions = (ns.status as { conditions?: Array<{ type?: string; status?: string }> } | undefined)?.conditions ?? [];
  return ns.metadata.labels?.[KEY.phase] !== PHASE.ready || !conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}
