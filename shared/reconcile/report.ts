// What the reconcilers tell humans: the Event on the namespace and the NamespaceTemplate status.
// Pure and bounded: an Event's name is derived from what failed, so the same failure is
// reported once however often it recurs; status lists are capped.
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';
import { canonicalJson } from '../render/index.ts';
import type { NamespaceTemplateStatus, TemplateCondition, TemplateFailure } from '../render/types.ts';

export const MAX_RECENT_FAILURES = 10;
export const MAX_MESSAGE = 1024;

export interface ObjectFailure {
  template: string;
  key: string;
  /** Hash of the desired object: a new template version failing again is a new failure. */
  hash: string;
  status: number;
  reason: string;
  message: string;
}

export interface NamespaceOutcome {
  namespace: string;
  uid: string;
  matched: string[];
  applied: number;
  created: number;
  pruned: number;
  orphaned: number;
  unchanged: number;
  failures: ObjectFailure[];
  warnings: string[];
  /** The namespace is becoming ready with this reconcile (its first population). */
  firstPopulation: boolean;
}

export interface EventDraft {
  name: string;
  type: 'Normal' | 'Warning';
  reason: 'Populated' | 'PopulateFailed' | 'TemplateOverride';
  message: string;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export function clip(text: string, max = MAX_MESSAGE): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function writesOf(o: NamespaceOutcome): number {
  return o.applied + o.created + o.pruned + o.orphaned;
}

/**
 * The Event a reconcile leaves on the namespace, if any: a failure (once per distinct failure), or
 * the first population. Later convergence (a template edited, drift repaired) is logged and counted
 * in the template's status but leaves no Event, so a template change costs exactly one write per
 * object that really changed.
 */
export function namespaceEvent(o: NamespaceOutcome, now: Date): EventDraft | null {
  if (o.failures.length > 0) {
    const identity = o.failures.map((f) => `${f.template}|${f.key}|${f.hash}|${f.status}|${f.reason}`).sort().join('\n');
    const first = o.failures[0]!;
    const more = o.failures.length > 1 ? ` (and ${o.failures.length - 1} more)` : '';
    return {
      name: `${o.namespace}.furnish-failed.${shortHash(`${o.uid}\n${identity}`)}`,
      type: 'Warning',
      reason: 'PopulateFailed',
      message: clip(`template ${first.template}: ${first.key}: ${first.reason} (HTTP ${first.status}): ${first.message}${more}`),
    };
  }
  if (!o.firstPopulation || writesOf(o) === 0) return null;
  return {
    name: `${o.namespace}.furnish-populated.${now.getTime().toString(36)}${shortHash(`${o.uid}${Math.random()}`).slice(0, 4)}`,
    type: 'Normal',
    reason: 'Populated',
    message: clip(`applied ${o.applied}, created ${o.created}, pruned ${o.pruned}, orphaned ${o.orphaned}, unchanged ${o.unchanged} from templates ${o.matched.join(', ') || '(none)'}`),
  };
}

/** Override warnings are Events too, named by content so they appear once. */
export function warningEvents(o: NamespaceOutcome): EventDraft[] {
  return o.warnings.map((w) => ({ name: `${o.namespace}.furnish-override.${shortHash(`${o.uid}\n${w}`)}`, type: 'Warning', reason: 'TemplateOverride', message: clip(w) }));
}

export function eventObject(draft: EventDraft, ns: KubeObject, now: Date, component: string): KubeObject {
  const time = now.toISOString();
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: draft.name, namespace: ns.metadata.name ?? '' },
    // In the namespace itself, so its users see it (`kubectl get events -n <ns>`); the API server
    // requires involvedObject.namespace to equal the Event's namespace. `kubectl describe namespace`
    // searches every namespace by involvedObject name, kind and uid, so it finds it too.
    involvedObject: { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata.name, namespace: ns.metadata.name, uid: ns.metadata.uid },
    type: draft.type,
    reason: draft.reason,
    message: draft.message,
    source: { component },
    reportingComponent: component,
    reportingInstance: component,
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}

export interface TemplateCounts {
  generation: number;
  matched: number;
  applied: number;
  failed: number;
}

/** A condition, keeping lastTransitionTime while the status does not flip. */
export function condition(prev: readonly TemplateCondition[] | undefined, next: Omit<TemplateCondition, 'lastTransitionTime'>, now: Date): TemplateCondition {
  const old = prev?.find((c) => c.type === next.type);
  const lastTransitionTime = old && old.status === next.status ? old.lastTransitionTime : now.toISOString();
  return { ...next, message: clip(next.message), lastTransitionTime };
}

/** `list` with `c` in place of its condition of the same type, sorted by type. */
export function upsert(list: readonly TemplateCondition[], c: TemplateCondition): TemplateCondition[] {
  return [...list.filter((x) => x.type !== c.type), c].sort((a, b) => a.type.localeCompare(b.type));
}

/**
 * Status after a count: Ready is True when every matched namespace holds this generation's
 * objects. `failures` replaces the list (they are recounted from the namespaces each time);
 * without it the previous list is kept.
 */
export function templateStatus(prev: NamespaceTemplateStatus | undefined, counts: TemplateCounts, now: Date, failures?: TemplateFailure[]): NamespaceTemplateStatus {
  const ready = counts.failed === 0 && counts.applied >= counts.matched;
  const readyCondition = condition(prev?.conditions, {
    type: 'Ready',
    status: ready ? 'True' : 'False',
    reason: counts.failed > 0 ? 'ApplyFailed' : ready ? 'Applied' : 'Progressing',
    message: `${counts.applied} of ${counts.matched} matching namespaces populated at generation ${counts.generation}, ${counts.failed} failed`,
    observedGeneration: counts.generation,
  }, now);
  return {
    observedGeneration: counts.generation,
    matched: counts.matched,
    applied: counts.applied,
    failed: counts.failed,
    conditions: upsert(prev?.conditions ?? [], readyCondition).slice(0, 8),
    recentFailures: (failures ?? prev?.recentFailures ?? []).slice(0, MAX_RECENT_FAILURES),
  };
}

/**
 * A fan-out's progress on the status as it is (its counts are the recounts'): the Propagated
 * condition, and while it publishes Ready False, since namespaces it has not reached cannot be
 * counted yet. Done, Ready is left to the recount that follows.
 */
export function withProgress(prev: NamespaceTemplateStatus | undefined, generation: number, progress: { published: number; total: number; done: boolean }, now: Date): NamespaceTemplateStatus {
  const published = `published ${progress.published} of ${progress.total} reconcile messages`;
  let conditions = upsert(prev?.conditions ?? [], condition(prev?.conditions, {
    type: 'Propagated', status: progress.done ? 'True' : 'False', reason: progress.done ? 'Published' : 'Publishing', message: published, observedGeneration: generation,
  }, now));
  if (!progress.done) {
    conditions = upsert(conditions, condition(prev?.conditions, { type: 'Ready', status: 'False', reason: 'Progressing', message: `generation ${generation} is being published: ${published}`, observedGeneration: generation }, now));
  }
  return { ...prev, conditions: conditions.slice(0, 8) };
}

/**
 * Whether two statuses differ in anything but timestamps: an unchanged count writes nothing.
 * Compared as values (canonical JSON): the API server returns custom resources with their keys
 * sorted, so the order a status was written in must not matter.
 */
export function statusDiffers(a: NamespaceTemplateStatus | undefined, b: NamespaceTemplateStatus): boolean {
  const strip = (s: NamespaceTemplateStatus | undefined) => canonicalJson({
    ...s,
    conditions: (s?.conditions ?? []).map((c) => ({ ...c, lastTransitionTime: undefined })),
    recentFailures: (s?.recentFailures ?? []).map((f) => ({ ...f, time: undefined })),
  });
  return strip(a) !== strip(b);
}
