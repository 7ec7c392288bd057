// What each reconciler reads of an object, as a short hash: the relay skips a change whose hash
// did not move (a template's status, the reconciler's own phase=ready write), and reconcile-template
// records the hash it fanned out. One home for both, so neither borrows the other's logic.
import { createHash } from 'node:crypto';
import { KEY, PHASE } from '../keys.ts';
import { INITIALIZER_KEY } from '../initializers/keys.ts';
import type { KubeObject } from '../kube/types.ts';
import type { NamespaceTemplate } from '../render/types.ts';
import { groupKindOf } from './objects.ts';

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
 * What reconcile-template records (furnish.dev/fanout-hash) once a fan-out is published: the
 * fingerprint, bound to the template's uid. An exported template applied again after a delete is
 * a new object carrying the old record among its annotations: it fans out as the new template it is.
 */
export function fanoutRecord(t: NamespaceTemplate): string {
  return `${templateFingerprint(t)}/${t.metadata.uid ?? ''}`;
}


/**
 * What a fan-out propagated, entry by entry: `g`, the template's generation; `s`, the fingerprint
 * of everything templateFingerprint covers but the entries (selector, mode, policy annotations: a
 * change there may change every object); `e`, one fingerprint per entry under `<group-kind>/<name>`.
 */
export interface FanoutEntries {
  g: number;
  s: string;
  e: Record<string, string>;
}

export function fanoutEntries(t: NamespaceTemplate): FanoutEntries {
  const e: Record<string, string> = {};
  for (const entry of t.spec.templates ?? []) e[entryId(entry)] = digest(entry, 16);
  return { g: t.metadata.generation ?? 0, s: digest({ ...relevantOf(t), spec: { ...t.spec, templates: null } }, 32), e };
}

/** An entry's identity: its group-kind and name (what one object of each namespace is keyed by). */
export function entryId(entry: { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } }): string {
  return `${groupKindOf(String(entry.apiVersion ?? ''), String(entry.kind ?? ''))}/${String(entry.metadata?.name ?? '')}`;
}

/** The group-kind of an entry's identity: a group-kind (`Kind.group`) has no slash, a name may (a token such as `$(ANNOTATION:example.com/tier)`). */
export const entryKind = (id: string): string => id.slice(0, id.indexOf('/'));

/** The annotation's record, or null when absent or unreadable (the next fan-out then reads every kind). */
export function parseFanoutEntries(raw: string | undefined): FanoutEntries | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Partial<FanoutEntries>;
    const e = v?.e;
    if (!Number.isInteger(v?.g) || typeof v?.s !== 'string' || !e || typeof e !== 'object' || Array.isArray(e) || !Object.values(e).every((h) => typeof h === 'string')) return null;
    return { g: v.g!, s: v.s, e };
  } catch {
    return null;
  }
}

/** Annotations Furnish writes on a namespace as its own bookkeeping: its reconciler's record and verdict, the initializers' progress. */
const BOOKKEEPING_ANNOTATIONS: ReadonlySet<string> = new Set([KEY.applied, KEY.failure, INITIALIZER_KEY.initializers, INITIALIZER_KEY.initializerFailed]);

/**
 * What the namespace reconciler sees of a namespace: labels (phase aside), annotations (a template
 * renders any of them, $(ANNOTATION:key|default); opt-out, creator) but Furnish's own bookkeeping,
 * deletion. The reconciler's own writes (phase=ready, its record) leave it unchanged, so the relay
 * does not send the namespace straight back (see namespaceChangeMatters).
 */
export function namespaceFingerprint(ns: KubeObject): string {
  const { [KEY.phase]: _phase, ...labels } = ns.metadata.labels ?? {};
  const annotations = Object.entries(ns.metadata.annotations ?? {}).filter(([k]) => !BOOKKEEPING_ANNOTATIONS.has(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const relevant = { labels, annotations, deleting: Boolean(ns.metadata.deletionTimestamp) };
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
}

/**
 * A namespace change is worth a reconcile when what it sees moved, or while it is not ready and
 * not being deleted (each step of a deletion is a change: the start, which moves the fingerprint, is enough).
 */
export function namespaceChangeMatters(ns: KubeObject, before: string | undefined, now: string): boolean {
  return before !== now || (ns.metadata.labels?.[KEY.phase] !== PHASE.ready && !ns.metadata.deletionTimestamp);
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
