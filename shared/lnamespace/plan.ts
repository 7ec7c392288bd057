// The LNamespace planner: from the LNamespace, what is live and the organization's billing map, the
// exact writes that converge them, and the status to record. Pure. Nothing that already matches is
// written, so a resync with nothing changed plans no write at all.
import { isSubset } from '../reconcile/objects.ts';
import type { KubeObject } from '../kube/types.ts';
import { canonicalJson } from '../render/hash.ts';
import { billingFieldError, effectiveBilling, exclusiveObjects, holderManager, lnsIdentity, namespaceObject, sharedObjects, subjectsOf, type LnsSettings } from './desired.ts';
import { LNS_KEY, sudoersGroup, sudoStandIn, type LNamespace, type LNamespaceStatus } from './types.ts';

export interface LnsObservation {
  lns: LNamespace;
  /** The namespace of the same name, or null. */
  namespace: KubeObject | null;
  /** Live objects labelled `lns.furnish.dev/<name>` (its RoleBindings, ClusterRoles, ClusterRoleBindings). */
  held: readonly KubeObject[];
  /** Live shared self-impersonation objects it wants but does not hold yet (another LNamespace made them). */
  shared: readonly KubeObject[];
  /** spec.billing of the LNamespace's Organization, when there is one. */
  organizationBilling?: Record<string, unknown>;
}

export type LnsWrite =
  | { op: 'apply'; key: string; object: KubeObject; manager?: string; why: string }
  | { op: 'delete'; key: string; object: KubeObject; resourceVersion?: string; why: string };

export type NamespaceState = 'create' | 'owned' | 'adopt' | 'conflict' | 'terminating';

export interface LnsPlan {
  namespace: NamespaceState;
  /** In order: the namespace first (the RoleBindings need it), then the rest. */
  writes: LnsWrite[];
  status: LNamespaceStatus;
  /** Billing fields that cannot become annotation keys (left out, said in the status). */
  skippedBilling: string[];
}

/**
 * Does the live object carry everything we want? Like isSubset, except that ownerReferences are
 * matched by uid, so other holders' references on a shared object are not a difference.
 */
export function carries(want: KubeObject, have: KubeObject): boolean {
  const { ownerReferences: wantRefs = [], ...wantMeta } = want.metadata;
  if (!isSubset({ ...want, metadata: wantMeta }, have)) return false;
  const haveRefs = (have.metadata.ownerReferences ?? []) as Array<{ uid?: string }>;
  return (wantRefs as Array<{ uid?: string }>).every((w) => haveRefs.some((h) => h.uid === w.uid && isSubset(w, h)));
}

export function keyOf(o: KubeObject): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

function ownerUids(o: KubeObject): string[] {
  return ((o.metadata.ownerReferences ?? []) as Array<{ uid?: string }>).map((r) => r.uid ?? '');
}

/**
 * Whose is the namespace of the same name? Ours when it is the very namespace we created or
 * adopted: its uid recorded in our status (which only Furnish writes). A sudoer, cluster-admin
 * inside, can remove the ownerReference (the reconciler puts it back), and anyone who may create
 * namespaces can write one naming us; neither decides. Only before a uid is recorded (an
 * LNamespace reconciled by an older Furnish, or a status write that failed after the create) does
 * our ownerReference count.
 */
export function namespaceState(lns: LNamespace, ns: KubeObject | null): NamespaceState {
  if (!ns) return 'create';
  if (ns.metadata.deletionTimestamp) return 'terminating';
  const recorded = lns.status?.namespaceUID;
  if (recorded ? ns.metadata.uid === recorded : ownerUids(ns).includes(lns.metadata.uid ?? '')) return 'owned';
  return lns.metadata.annotations?.[LNS_KEY.adopt] === 'true' ? 'adopt' : 'conflict';
}

/**
 * The namespace uid to record: the live one once it is ours; else what was recorded before (a
 * status merge patch cannot drop a field, and a stale uid never matches another namespace). A
 * namespace being created gets its uid from the create's answer (the executor).
 */
export function recordedNamespaceUid(lns: LNamespace, ns: KubeObject | null, state: NamespaceState): { namespaceUID?: string } {
  const uid = (state === 'owned' || state === 'adopt') && ns?.metadata.uid ? ns.metadata.uid : lns.status?.namespaceUID;
  return uid ? { namespaceUID: uid } : {};
}

/** Does this state let the LNamespace grant anything inside the namespace? Not someone else's, nor one on its way out. */
const grantsInside = (state: NamespaceState): boolean => state !== 'conflict' && state !== 'terminating';

/** An object another holder still holds loses only this holder's share; the last holder deletes it. */
export function releaseShared(lns: LNamespace, live: KubeObject): LnsWrite {
  const mine = lns.metadata.uid ?? '';
  const others = ownerUids(live).filter((u) => u !== mine);
  const key = keyOf(live);
  if (others.length === 0) return { op: 'delete', key, object: live, resourceVersion: live.metadata.resourceVersion, why: 'last holder let go' };
  const husk: KubeObject = { apiVersion: live.apiVersion, kind: live.kind, metadata: { name: live.metadata.name } };
  return { op: 'apply', key, object: husk, manager: holderManager(lns.metadata.name!), why: `released; still held by ${others.length} other LNamespace(s)` };
}

function condition(state: NamespaceState, name: string, skippedBilling: string[]): NonNullable<LNamespaceStatus['conditions']>[number] {
  switch (state) {
    case 'conflict':
      return { type: 'Ready', status: 'False', reason: 'NamespaceConflict', message: `namespace "${name}" exists and is not this LNamespace's; set annotation ${LNS_KEY.adopt}: "true" (needs verb "adopt" on lnamespaces.furnish.dev) to adopt it` };
    case 'terminating':
      return { type: 'Ready', status: 'False', reason: 'NamespaceTerminating', message: `namespace "${name}" is being deleted; it is created again once it is gone` };
    default:
      return skippedBilling.length > 0
        ? { type: 'Ready', status: 'True', reason: 'BillingFieldsSkipped', message: `billing field(s) not usable as annotation keys: ${skippedBilling.join(', ')}` }
        : { type: 'Ready', status: 'True', reason: 'Converged', message: `namespace "${name}" and its bindings are in place` };
  }
}

export function planLNamespace(obs: LnsObservation, settings: LnsSettings): LnsPlan {
  const { lns } = obs;
  const name = lns.metadata.name!;
  const state = namespaceState(lns, obs.namespace);
  const billing = effectiveBilling(obs.organizationBilling, lns.spec?.billing);
  const skippedBilling = Object.keys(billing).filter((k) => billingFieldError(k) !== undefined).sort();
  const status: LNamespaceStatus = {
    namespace: name,
    ...recordedNamespaceUid(lns, obs.namespace, state),
    sudo: { group: sudoersGroup(lnsIdentity(lns)), standIn: sudoStandIn(lnsIdentity(lns)) },
    observedGeneration: lns.metadata.generation,
    bindings: { users: subjectsOf(lns.spec?.users).length, managers: subjectsOf(lns.spec?.managers).length, sudoers: subjectsOf(lns.spec?.sudoers).length },
    billing,
    conditions: [condition(state, name, skippedBilling)],
  };
  const writes: LnsWrite[] = [];
  const inside = grantsInside(state);
  if (inside) {
    const ns = namespaceObject(lns, billing);
    if (!obs.namespace || !carries(ns, obs.namespace)) writes.push({ op: 'apply', key: keyOf(ns), object: ns, why: state === 'create' ? 'create namespace' : state === 'adopt' ? 'adopt namespace' : 'namespace drifted' });
  }

  // Someone else's namespace, or one on its way out: nothing is granted inside it (what we hold
  // there is deleted). Everything else converges in every state, so a name leaving a list always
  // loses what it alone needed: a revocation never waits for the namespace.
  const live = new Map<string, KubeObject>([...obs.shared, ...obs.held].map((o) => [keyOf(o), o]));
  const wanted = new Set<string>();
  for (const want of exclusiveObjects(lns, settings).filter((o) => inside || o.metadata.namespace !== name)) {
    const key = keyOf(want);
    wanted.add(key);
    const have = live.get(key);
    if (!have || !carries(want, have)) writes.push({ op: 'apply', key, object: want, why: have ? 'drifted' : 'missing' });
  }
  for (const want of sharedObjects(lns)) {
    const key = keyOf(want);
    wanted.add(key);
    const have = live.get(key);
    if (!have || !carries(want, have)) writes.push({ op: 'apply', key, object: want, manager: holderManager(name), why: have ? 'hold shared' : 'missing' });
  }
  for (const have of obs.held) {
    const key = keyOf(have);
    if (wanted.has(key)) continue;
    // Shared objects are cluster-scoped; a namespaced one wearing the label was made by someone else (a namespace admin) and is simply not wanted.
    if (have.metadata.labels?.[LNS_KEY.selfImpersonation] === 'true' && !have.metadata.namespace) writes.push(releaseShared(lns, have));
    else writes.push({ op: 'delete', key, object: have, why: 'no longer needed' });
  }
  return { namespace: state, writes, status, skippedBilling };
}

/** Status write needed? Compared without transition times, so an unchanged status is never rewritten. */
export function statusNeedsWrite(live: LNamespaceStatus | undefined, want: LNamespaceStatus): boolean {
  // Canonical JSON: a real API server returns custom resources with their keys sorted.
  const strip = (s: LNamespaceStatus | undefined) => canonicalJson({ ...s, billing: s?.billing ?? {}, conditions: (s?.conditions ?? []).map(({ lastTransitionTime: _t, ...c }) => c) });
  return strip(live) !== strip(want);
}

/** Keeps a condition's transition time while its status stays the same. */
export function withTransitionTimes(live: LNamespaceStatus | undefined, want: LNamespaceStatus, now: Date): LNamespaceStatus {
  const conditions = (want.conditions ?? []).map((c) => {
    const before = live?.conditions?.find((l) => l.type === c.type);
    return { ...c, lastTransitionTime: before && before.status === c.status && before.lastTransitionTime ? before.lastTransitionTime : now.toISOString() };
  });
  return { ...want, conditions };
}
