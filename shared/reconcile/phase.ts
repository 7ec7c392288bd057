// What a namespace says about itself after a reconcile, decided purely: phase `ready` when every
// matching template is applied, `failed` with the reason in an annotation when one could not be
// (visible in `kubectl get ns --show-labels`, `kubectl get ns x -o yaml`, and to the guard), and
// no write at all when that is what the namespace already says.
import { KEY, PHASE } from '../keys.ts';
import type { KubeObject, StringMap } from '../kube/types.ts';
import { furnishCompletion, pendingInitializers, type MetadataPatch } from '../initializers/decide.ts';
import { clip, type ObjectFailure } from './report.ts';

export const MAX_FAILURE_TEXT = 2048;

/** One line per failed template, its first failure: `template T: key: Reason (HTTP n): message`. */
export function failureText(failures: readonly ObjectFailure[]): string {
  const first = new Map<string, ObjectFailure>();
  for (const f of failures) if (!first.has(f.template)) first.set(f.template, f);
  const lines = [...first.values()].sort((a, b) => (a.template < b.template ? -1 : a.template > b.template ? 1 : 0))
    .map((f) => `template ${f.template}: ${f.key}: ${f.reason} (HTTP ${f.status}): ${clip(f.message.replace(/\s+/g, ' '), 400)}`);
  return clip(lines.join('\n'), MAX_FAILURE_TEXT);
}

/** The lines of a namespace's failure annotation that name `template`. */
export function failureLineFor(text: string | undefined, template: string): string | undefined {
  return (text ?? '').split('\n').find((l) => l.startsWith(`template ${template}: `));
}

export interface PhaseDecision {
  phase: string;
  /** The failure annotation wanted, null to remove it. */
  failure: string | null;
  /** The merge patch to send, null when the namespace already says all this. */
  patch: MetadataPatch | null;
  /** The failure is new (not what the namespace already records): worth an Event. */
  newFailure: boolean;
}

export function decidePhase(ns: KubeObject, failures: readonly ObjectFailure[], readyDespiteFailures = false): PhaseDecision {
  const failure = failures.length > 0 ? failureText(failures) : null;
  const phase = failure === null || readyDespiteFailures ? PHASE.ready : PHASE.failed;
  const hadPhase = ns.metadata.labels?.[KEY.phase];
  const hadFailure = ns.metadata.annotations?.[KEY.failure] ?? null;
  const newFailure = failure !== null && failure !== hadFailure;
  if (hadPhase === phase && hadFailure === failure) return { phase, failure, patch: null, newFailure };
  return { phase, failure, newFailure, patch: { metadata: { labels: { [KEY.phase]: phase }, annotations: { [KEY.failure]: failure } } } };
}

/**
 * The namespace write after a reconcile, with pluggable initializers (shared/initializers): a
 * failure marks the namespace `failed` as decidePhase says; success ends Furnish's own initializer
 * (`furnish` removed from the front of the list, compare-and-swap on the resourceVersion, `ready`
 * only when it was the last, a Furnish failure recorded earlier cleared). While another
 * initializer is working, or failed, Furnish writes nothing: that phase is the other one's.
 */
export function decideAfterReconcile(ns: KubeObject, failures: readonly ObjectFailure[], readyDespiteFailures = false): PhaseDecision {
  const pending = pendingInitializers(ns.metadata.annotations ?? {});
  const succeeded = failures.length === 0 || readyDespiteFailures;
  if (!succeeded || pending === undefined || pending.length === 0) return decidePhase(ns, failures, readyDespiteFailures);
  const current = ns.metadata.labels?.[KEY.phase] ?? '';
  // The phase is decided here (a Furnish failure recovers), so the completion is asked without it.
  const completion = furnishCompletion({ resourceVersion: ns.metadata.resourceVersion, annotations: ns.metadata.annotations });
  if (!completion) return { phase: current, failure: ns.metadata.annotations?.[KEY.failure] ?? null, patch: null, newFailure: false };
  const phase = completion.metadata.labels?.[KEY.phase] ?? PHASE.pending;
  // Failures here are readyDespiteFailures': their reason is recorded all the same, as decidePhase does.
  const failure = failures.length > 0 ? failureText(failures) : null;
  const hadFailure = ns.metadata.annotations?.[KEY.failure] ?? null;
  const annotations = { ...completion.metadata.annotations, ...(failure !== hadFailure ? { [KEY.failure]: failure } : {}) };
  const labels = current === phase ? undefined : { [KEY.phase]: phase };
  const { resourceVersion } = completion.metadata;
  return { phase, failure, newFailure: failure !== null && failure !== hadFailure, patch: { metadata: { ...(resourceVersion ? { resourceVersion } : {}), annotations, ...(labels ? { labels } : {}) } } };
}

/** The namespace condition `kubectl wait --for=condition=Ready namespace/x` waits for. */
export interface ReadyCondition {
  type: 'Ready';
  status: 'True' | 'False';
  reason: 'Ready' | 'Pending' | 'Failed';
  message: string;
  lastTransitionTime?: string;
}

/** A strategic-merge directive that removes every Ready condition the namespace has (the server deletes all the matches, before it merges the rest). */
export interface DeleteReadyConditions {
  type: 'Ready';
  $patch: 'delete';
}

/** A phase patch that may also set the Ready condition (written through `namespaces/status`). */
export interface NamespacePatch extends MetadataPatch {
  status?: { conditions: Array<DeleteReadyConditions | ReadyCondition> };
}

/** Conditions are short: the full failure stays in the furnish.dev/failure annotation. */
const MAX_CONDITION_MESSAGE = 1024;

/**
 * The Ready condition a namespace's phase, failure and initializers call for; undefined for a
 * namespace Furnish gives no phase (system, created before Furnish).
 */
export function readyCondition(labels: StringMap, annotations: StringMap): Omit<ReadyCondition, 'lastTransitionTime'> | undefined {
  switch (labels[KEY.phase]) {
    case PHASE.ready:
      return { type: 'Ready', status: 'True', reason: 'Ready', message: 'every matching NamespaceTemplate is applied and every initializer is done' };
    case PHASE.failed:
      return { type: 'Ready', status: 'False', reason: 'Failed', message: clip(annotations[KEY.failure] || 'failed (no furnish.dev/failure annotation says why)', MAX_CONDITION_MESSAGE) };
    case PHASE.pending: {
      const [working, ...rest] = pendingInitializers(annotations) ?? [];
      const waiting = working === undefined ? 'being furnished' : `waiting for initializer ${working}${rest.length > 0 ? ` (then ${rest.join(', ')})` : ''}`;
      return { type: 'Ready', status: 'False', reason: 'Pending', message: waiting };
    }
    default:
      return undefined;
  }
}

function applied(current: StringMap | undefined, changes: Record<string, string | null> | undefined): StringMap {
  const next = new Map(Object.entries(current ?? {}));
  for (const [k, v] of Object.entries(changes ?? {})) {
    if (v === null) next.delete(k);
    else next.set(k, v);
  }
  return Object.fromEntries(next);
}

/**
 * `patch` (null: nothing to write) with the Ready condition the namespace will call for once it is
 * applied, when that is not the one condition it has: one write carries both. The transition time
 * moves only when the condition's status does. Several Ready conditions (written before
 * furnish-phase-and-ready judged every one of them) are collapsed into that one, transitioned now:
 * a merge by `type` would change only the first.
 */
export function withReadyCondition(ns: KubeObject, patch: MetadataPatch | null, now: Date): NamespacePatch | null {
  const wanted = readyCondition(applied(ns.metadata.labels, patch?.metadata.labels), applied(ns.metadata.annotations, patch?.metadata.annotations));
  if (!wanted) return patch;
  const conditions = (ns.status as { conditions?: ReadyCondition[] } | undefined)?.conditions;
  const readies = Array.isArray(conditions) ? conditions.filter((c) => c?.type === 'Ready') : [];
  const current = readies[0];
  const said = current && current.status === wanted.status && current.reason === wanted.reason && current.message === wanted.message;
  if (said && readies.length === 1) return patch;
  // Of several, none is known to be Furnish's (any could be the forged one): the collapse is the transition.
  const kept = readies.length === 1 && current!.status === wanted.status ? current!.lastTransitionTime : undefined;
  const lastTransitionTime = kept ?? now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const collapse: DeleteReadyConditions[] = readies.length > 1 ? [{ type: 'Ready', $patch: 'delete' }] : [];
  return { ...(patch ?? { metadata: {} }), status: { conditions: [...collapse, { ...wanted, lastTransitionTime }] } };
}
