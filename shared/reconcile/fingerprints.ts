// What each reconciler reads of an object, as a short hash: the relay skips a change whose hash
// did not move (a template's status, the reconciler's own phase=ready write), and reconcile-template
// records the hash it fanned out. One home for both, so neither borrows the other's logic.
import { createHash } from 'node:crypto';
import { KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NamespaceTemplate } from '../render/types.ts';

/** What namespaces see of a template: its spec and the annotations that change matching. */
export function templateFingerprint(t: NamespaceTemplate): string {
  const a = t.metadata.annotations ?? {};
  const relevant = { spec: t.spec, apply: a[KEY.apply] ?? null, requirePermission: a[KEY.requirePermission] ?? null, deleting: Boolean(t.metadata.deletionTimestamp) };
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 32);
}

/**
 * What the namespace reconciler sees of a namespace: labels (phase aside), the annotations it
 * reads, deletion. The reconciler's own phase=ready write leaves it unchanged, so the relay does
 * not send the namespace straight back (see namespaceChangeMatters).
 */
export function namespaceFingerprint(ns: KubeObject): string {
  const { [KEY.phase]: _phase, ...labels } = ns.metadata.labels ?? {};
  const a = ns.metadata.annotations ?? {};
  const relevant = { labels, creator: a[KEY.creator] ?? null, optOut: a[KEY.optOut] ?? null, deleting: Boolean(ns.metadata.deletionTimestamp) };
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
}

/** A namespace change is worth a reconcile when what it sees moved, or while it is not ready. */
export function namespaceChangeMatters(ns: KubeObject, before: string | undefined, now: string): boolean {
  return before !== now || ns.metadata.labels?.[KEY.phase] !== PHASE.ready;
}

/**
 * One digest of every template as a namespace reconcile sees them (name and fingerprint). The
 * namespaces of a fan-out batch plan with the digest of the batch's own list of the templates, so
 * that they share that list (namespace-batch.ts): once per batch, not once per namespace.
 */
export function templatesDigest(templates: readonly NamespaceTemplate[]): string {
  const lines = templates.map((t) => `${t.metadata.name ?? ''} ${templateFingerprint(t)}`).sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 32);
}
