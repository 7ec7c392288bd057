// The decisions about one namespace's initializers, pure: reading the list, judging a change of
// it, who may write into the namespace while it is initializing, when an initializer has timed
// out, and what phase follows. The webhook rules and the reconciler ask these.
import type { StringMap, UserInfo } from '../kube/types.ts';
import type { Initializer } from './config.ts';
import { describePrincipals, principalOf } from './config.ts';
import { stillFurnishing } from '../webhooks/rules/guard-initializing.ts';
import { KEY } from '../keys.ts';
import { FURNISH_INITIALIZER, INIT_PHASE, INITIALIZER_KEY } from './keys.ts';

const KEY_PHASE = KEY.phase;

/** The pending initializers recorded on a namespace; undefined when it has no list (not initialized this way). */
export function pendingInitializers(annotations: StringMap): string[] | undefined {
  const value: unknown = annotations[INITIALIZER_KEY.initializers];
  // The API server only passes strings; anything else is judged as no list rather than crashing.
  if (typeof value !== 'string') return undefined;
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

export function formatInitializers(names: readonly string[]): string {
  return names.join(',');
}

export type ListChange =
  | { kind: 'unchanged' }
  /** The first entry removed, the rest kept in order: the only change an initializer may make. */
  | { kind: 'completed'; initializer: string; rest: string[] }
  /** One entry removed while an earlier one is still pending. */
  | { kind: 'out-of-order'; initializer: string; current: string }
  | { kind: 'edited' };

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** What an UPDATE does to the list. An absent list after a present one is an empty one. */
export function listChange(before: StringMap, after: StringMap): ListChange {
  const old = pendingInitializers(before);
  const now = pendingInitializers(after);
  if (old === undefined) return now === undefined ? { kind: 'unchanged' } : { kind: 'edited' };
  const next = now ?? [];
  if (sameList(old, next)) return { kind: 'unchanged' };
  if (next.length !== old.length - 1) return { kind: 'edited' };
  const removed = old.findIndex((x, i) => x !== next[i]);
  if (!sameList([...old.slice(0, removed), ...old.slice(removed + 1)], next)) return { kind: 'edited' };
  if (removed === 0) return { kind: 'completed', initializer: old[0]!, rest: next };
  return { kind: 'out-of-order', initializer: old[removed]!, current: old[0]! };
}

/**
 * The phase Furnish gives a namespace because of what an UPDATE does to its annotations, or
 * undefined: `ready` when the last initializer removed itself, `failed` when the working one
 * reported failure (both from `pending`), `pending` when a failed namespace's failure record was
 * removed (a repair: the reconciler and the initializers take it from there). mutate-namespace
 * sets it; validate-namespace lets nobody but the reconciler set any other (whoever may make the
 * annotation change is judged by the rules on those annotations).
 */
export function phaseFromUpdate(before: { labels: StringMap; annotations: StringMap }, after: StringMap): string | undefined {
  const phase = before.labels[KEY_PHASE];
  if (phase === INIT_PHASE.pending) {
    const change = listChange(before.annotations, after);
    if (change.kind === 'completed' && change.rest.length === 0) return INIT_PHASE.ready;
    if (newFailureReport(before.annotations, after)?.report) return INIT_PHASE.failed;
  }
  if (phase === INIT_PHASE.failed && before.annotations[INITIALIZER_KEY.failure] !== undefined && after[INITIALIZER_KEY.failure] === undefined) return INIT_PHASE.pending;
  return undefined;
}

export interface FailureReport {
  initializer: string;
  reason: string;
}

/** `vault-injector: vault unreachable` → initializer and reason; undefined when malformed. */
export function parseFailureReport(value: unknown): FailureReport | undefined {
  if (typeof value !== 'string') return undefined;
  const at = value.indexOf(':');
  if (at <= 0) return undefined;
  const initializer = value.slice(0, at).trim();
  const reason = value.slice(at + 1).trim();
  return initializer && reason ? { initializer, reason } : undefined;
}

/** An initializer-failed report newly set (or changed) by this UPDATE. */
export function newFailureReport(before: StringMap, after: StringMap): { value: string; report: FailureReport | undefined } | undefined {
  const value: unknown = after[INITIALIZER_KEY.initializerFailed];
  if (value === undefined || value === before[INITIALIZER_KEY.initializerFailed]) return undefined;
  return { value: String(value), report: parseFailureReport(value) };
}

export function failureValue(f: FailureReport): string {
  return `${f.initializer}: ${f.reason}`;
}

/** Finds a configured initializer (or the built-in one) by name. */
export function findInitializer(name: string, known: readonly Initializer[]): Initializer | undefined {
  return known.find((i) => i.name === name);
}

export type GuardDecision = { allow: string } | { deny: string };


/**
 * A write into a namespace whose initializers are pending: only the principals of the current one
 * may write; everyone else waits until the list is empty.
 */
export function guardWhileInitializing(user: UserInfo, namespace: string, pending: readonly string[], known: readonly Initializer[]): GuardDecision {
  const current = pending[0]!;
  const init = findInitializer(current, known);
  const p = init && principalOf(user, init);
  if (p !== undefined) return { allow: `${p} is a principal of initializer "${current}", which is working now` };
  const whose = init ? `only its principals may (${describePrincipals(init)})` : 'no configuration defines it any more: only an administrator can finish it';
  return { deny: `${stillFurnishing(namespace)} (user "${user.username ?? ''}" may not write into it while initializer "${current}" is working (pending: ${formatInitializers(pending)}): ${whose})` };
}

/**
 * An initializer that has not finished `timeoutSeconds` after the namespace was created has timed
 * out (the deadline counts from creation: what the user waits for is the whole namespace).
 */
export function timedOut(creationTimestamp: string | undefined, pending: readonly string[], known: readonly Initializer[], now: Date): FailureReport | undefined {
  const current = pending[0];
  const init = current === undefined ? undefined : findInitializer(current, known);
  if (!init?.timeoutSeconds || !creationTimestamp) return undefined;
  const created = Date.parse(creationTimestamp);
  if (Number.isNaN(created) || now.getTime() < created + init.timeoutSeconds * 1000) return undefined;
  return { initializer: init.name, reason: `did not finish within ${init.timeoutSeconds}s of the namespace's creation` };
}

/** A merge patch for a namespace's metadata. */
export interface MetadataPatch {
  metadata: { resourceVersion?: string; labels?: Record<string, string | null>; annotations?: Record<string, string | null> };
}

/**
 * What the reconciler writes once Furnish's templates are in place: `furnish` removed from the
 * front of the list (with `ready` when it was the last), or, for a namespace created before
 * initializers (no list), `ready` as before. Nothing when Furnish is not the working initializer
 * any more or the namespace failed. The resourceVersion makes the removal a compare-and-swap.
 */
export function furnishCompletion(meta: { resourceVersion?: string; labels?: StringMap; annotations?: StringMap }): MetadataPatch | undefined {
  const labels = meta.labels ?? {};
  if (labels[KEY_PHASE] === INIT_PHASE.failed) return undefined;
  const pending = pendingInitializers(meta.annotations ?? {});
  if (pending === undefined) return { metadata: { labels: { [KEY_PHASE]: INIT_PHASE.ready } } };
  if (pending[0] !== FURNISH_INITIALIZER) return undefined;
  const rest = pending.slice(1);
  return {
    metadata: {
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      annotations: { [INITIALIZER_KEY.initializers]: formatInitializers(rest) },
      ...(rest.length === 0 ? { labels: { [KEY_PHASE]: INIT_PHASE.ready } } : {}),
    },
  };
}

/** The write that marks a namespace failed. */
export function failurePatch(f: FailureReport): MetadataPatch {
  return { metadata: { labels: { [KEY_PHASE]: INIT_PHASE.failed }, annotations: { [INITIALIZER_KEY.failure]: failureValue(f) } } };
}
