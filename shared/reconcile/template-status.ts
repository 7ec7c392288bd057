// The truth a NamespaceTemplate's status tells, decided purely from what reconcile-template reads:
// the namespaces, their ApplySet parents (which templates each applied or failed), and the
// template's objects as they are in the cluster (label furnish.dev/template, hash annotation).
// A namespace counts as applied only when it holds the objects of the template's current
// generation, so Ready never says True while a spec edit is still on its way; failures are
// counted and listed with the reason the namespace itself records.
import { KEY, PHASE } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { isOptedOut, renderNamespace, type NamespaceInfo, type NamespaceTemplate, type TemplateFailure } from '../render/index.ts';
import { matchesNow, type ParentRecord } from './fanout.ts';
import { keyOf } from './objects.ts';
import { failureLineFor } from './phase.ts';
import { renderContextOfInfo } from './plan.ts';
import { MAX_RECENT_FAILURES, type TemplateCounts } from './report.ts';

/** What a template's objects hold in the cluster: object key → its furnish.dev/hash. */
export type LiveHashes = ReadonlyMap<string, string>;

/** Counts one of the template's objects into `live` (its key as render makes it, its furnish.dev/hash). */
export function addLive(live: Map<string, string>, obj: KubeObject): void {
  live.set(keyOf(obj), obj.metadata.annotations?.[KEY.appliedHash] ?? '');
}

/** Whether `ns` holds every object `t` renders for it, as this generation renders it. */
export function holdsCurrent(t: NamespaceTemplate, ns: NamespaceInfo, live: LiveHashes): boolean {
  // The same context the namespace's own reconcile renders from, annotations included.
  const rendered = renderNamespace([t], renderContextOfInfo(ns));
  if (rendered.problems.length > 0) return false;
  const createOnly = t.spec.mode === 'CreateOnly';
  return rendered.objects.every((o) => live.has(o.key) && (createOnly || live.get(o.key) === o.hash));
}

export interface TemplateTally extends TemplateCounts {
  failures: TemplateFailure[];
}

/**
 * Counts for `t`: matched (selected now), applied (the parent says so and, when `live` is given,
 * the objects are this generation's), failed (the parent says so), with the failures' reasons.
 */
/**
 * The templates a namespace being deleted may still hold back, counted by tallyTemplate as failed
 * (its parent says so) or, while it is not ready, as pending (every template matching it): told when its
 * deletion starts, their recount leaves it out (reconcile-template counts no namespace being
 * deleted) rather than waiting for the resync. `templates` is null when it is ready: none to match.
 * An opted-out namespace matches none.
 */
export function heldBackBy(ns: NamespaceInfo, failed: readonly string[], templates: readonly NamespaceTemplate[] | null, systemNamespaces: readonly string[] = []): string[] {
  const matching = (templates ?? []).filter((t) => matchesNow(t, ns, systemNamespaces)).map((t) => t.metadata.name ?? '');
  return [...new Set([...failed, ...matching])].sort();
}

/** Whether a namespace being deleted may be counted pending by a template it matches (its phase is not ready, and it is not opted out). */
export function maybeCountedPending(ns: NamespaceInfo): boolean {
  return ns.labels[KEY.phase] !== PHASE.ready && !isOptedOut(ns);
}

export function tallyTemplate(t: NamespaceTemplate, namespaces: readonly NamespaceInfo[], parents: readonly ParentRecord[], live: LiveHashes | null, systemNamespaces: readonly string[] = []): TemplateTally {
  const name = t.metadata.name ?? '';
  const byNamespace = new Map(parents.map((p) => [p.namespace, p]));
  const tally: TemplateTally = { generation: t.metadata.generation ?? 0, matched: 0, applied: 0, failed: 0, failures: [] };
  for (const ns of namespaces) {
    if (!matchesNow(t, ns, systemNamespaces)) continue;
    tally.matched += 1;
    const p = byNamespace.get(ns.name);
    if (p?.failed.includes(name)) {
      tally.failed += 1;
      const line = failureLineFor(ns.annotations[KEY.failure], name) ?? `template ${name}: (reason not recorded)`;
      const [, object = '', reason = line] = /^template [^:]+: ([^:]+): (.*)$/s.exec(line) ?? [];
      tally.failures.push({ namespace: ns.name, object, reason });
    } else if (p?.applied.includes(name) && (live === null || holdsCurrent(t, ns, live))) tally.applied += 1;
  }
  tally.failures.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
  tally.failures = tally.failures.slice(0, MAX_RECENT_FAILURES);
  return tally;
}
