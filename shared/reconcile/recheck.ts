// A reconcile in flight on a ready namespace against a template change. A fan-out finds the
// namespaces a template touches by their labels (it selects them now) and by their ApplySet
// parents (they hold it from before), and it lists the templates before it reads either. A
// reconcile that names a template in the namespace's parent for the first time (a label change
// made the template select it, a template was created) may write that parent after a fan-out of
// the template's next version read the parents, having planned from the version before: the
// fan-out passes the namespace by, or its batch writes first and this reconcile's older objects
// land after it. The same holds for any reconcile that writes or prunes objects of a template it
// planned from its version before (a drift repair, an organization transfer re-rendering, another
// fan-out batch of the same namespace running at the same time): a batch of the next version may
// have written in between. So such a reconcile lists the templates once more after its writes
// and fails the delivery when they moved; the redelivery plans from them as they are then. Either
// the fan-out read the parent (and its batch comes after this reconcile's list), or this list
// sees the change (lists are linearizable). A reconcile that writes nothing lists nothing more. A
// pending namespace needs no second list: every fan-out messages it alone, after the reconcile in
// flight (fanout.ts notFurnishedYet). A fan-out batch lists the templates once for all its
// namespaces. Only the templates the writes concern are compared (plannedFrom).
import { KEY, PHASE } from '../keys.ts';
import { TransientError } from '../kube/errors.ts';
import type { KubeClient } from '../kube/client.ts';
import type { KubeObject } from '../kube/types.ts';
import type { Logger } from '../log.ts';
import type { NamespaceTemplate } from '../render/index.ts';
import type { AppliedRecord } from './record.ts';
import { templateFingerprint } from './fingerprints.ts';
import { readTemplates } from './namespace-reads.ts';
import { splitList } from './objects.ts';

const parentNames = (parent: KubeObject): string[] => [...splitList(parent.metadata.annotations?.[KEY.appliedTemplates]), ...splitList(parent.metadata.annotations?.[KEY.failedTemplates])];

/** The templates the namespace's parent named before this reconcile: the live parent when read (null: none), else the record's word for it. */
export function namedBefore(parent: KubeObject | null | undefined, record: Pick<AppliedRecord, 'applied' | 'failed'>): string[] {
  if (parent !== undefined) return parent ? parentNames(parent) : [];
  return [...record.applied, ...record.failed];
}

/** Templates the parents written (null: not written) name, applied or failed, that `before` did not. */
export function newlyNamed(before: readonly string[], written: readonly (KubeObject | null)[]): string[] {
  const had = new Set(before);
  return [...new Set(written.flatMap((p) => (p ? parentNames(p) : [])))].filter((t) => t !== '' && !had.has(t)).sort();
}

/**
 * Whether the templates must be listed again after the writes: in a namespace that is not pending,
 * a template newly named, or objects written or released (applied, created, pruned, orphaned).
 */
export function recheckNeeded(ns: KubeObject, done: { newlyNamed: readonly string[]; objectsChanged: boolean }): boolean {
  return (done.newlyNamed.length > 0 || done.objectsChanged) && ns.metadata.labels?.[KEY.phase] !== PHASE.pending;
}

/**
 * What a reconcile planned from, for the templates its writes concern (those it wrote, released or
 * newly named): `<name> <fingerprint>`, the fingerprint empty for a template that was not there. A
 * change to another template (one that does not select the namespace) fails nothing: a batch
 * re-applies its objects at every redelivery, and would fail again at every unrelated edit.
 */
export function plannedFrom(templates: readonly NamespaceTemplate[], concerned: Iterable<string>): string[] {
  const fingerprints = new Map(templates.map((t) => [t.metadata.name ?? '', templateFingerprint(t)]));
  return [...new Set(concerned)].filter((n) => n !== '').map((n) => `${n} ${fingerprints.get(n) ?? ''}`);
}

/** Whether one of the templates planned from (plannedFrom) is another now, or gone, or new. */
export function templatesMoved(planned: Iterable<string>, now: readonly NamespaceTemplate[]): boolean {
  const current = new Set(plannedFrom(now, [...planned].map((p) => p.slice(0, p.indexOf(' ')))));
  return [...planned].some((p) => !current.has(p));
}

/**
 * Lists the templates and fails the delivery (TransientError: redelivered) when one of those
 * `planned` from moved. A list refused for good is logged and let be: the resync repairs
 * what it would have caught, and a redelivery could not list them either.
 */
export async function confirmTemplates(deps: { kube: KubeClient; log: Logger }, planned: ReadonlySet<string>, what: string): Promise<void> {
  if (planned.size === 0) return;
  const listed = await readTemplates(deps.kube);
  if (!listed.ok) {
    deps.log.log('WARNING', 'could not list the templates again after writing', { what, reason: listed.reason });
    return;
  }
  if (templatesMoved(planned, listed.value.templates)) {
    throw new TransientError(`${what}: the templates changed while it wrote; planned again from them as they are now`, { status: 503 });
  }
}
