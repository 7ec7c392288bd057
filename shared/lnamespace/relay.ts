// The relay's LNamespace decisions. What the LNamespace reconciler sees of an LNamespace, as a
// short hash: the relay publishes a change only when it moved, so the reconciler's own status
// writes do not send it straight back. And drift on what LNamespaces hold (their RBAC objects,
// the shared self-impersonation ClusterRoles/Bindings included): a change or deletion by anyone
// else sends a reconcile of every LNamespace holding it, repaired in seconds, not at the resync.
import { createHash } from 'node:crypto';
import { FIELD_MANAGER, KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { canonicalJson } from '../render/hash.ts';
import { lastWrittenByFurnish } from '../kube/managed-fields.ts';
import { holderManager } from './desired.ts';
import { LNS_KEY } from './types.ts';

/** What LNamespaces hold, watched by label (the managed-by label every held object carries). */
export const LNS_DRIFT_RESOURCES = ['clusterroles.rbac.authorization.k8s.io/v1', 'clusterrolebindings.rbac.authorization.k8s.io/v1', 'roles.rbac.authorization.k8s.io/v1', 'rolebindings.rbac.authorization.k8s.io/v1'];
export const LNS_DRIFT_SELECTOR = `${LNS_KEY.managedBy}=furnish`;

/** The LNamespace reconciler writes as `furnish`, and a holder's share of a shared object as `furnish-lns-<name>`. */
const lnsManager = (manager: string): boolean => manager === FIELD_MANAGER || manager.startsWith(holderManager(''));

/** The LNamespaces holding an object (its `lns.furnish.dev/<name>` labels). */
export function holdersOf(obj: KubeObject): string[] {
  return Object.keys(obj.metadata.labels ?? {}).filter((k) => k.startsWith(LNS_KEY.holderPrefix)).map((k) => k.slice(LNS_KEY.holderPrefix.length)).sort();
}

/** The LNamespaces to reconcile for a watch event on a held object: none when the change was Furnish's own. */
export function driftedLNamespaces(type: string, obj: KubeObject | undefined): string[] {
  if (!obj?.metadata) return [];
  if (type === 'DELETED') return holdersOf(obj);
  if (type === 'MODIFIED' && !lastWrittenByFurnish(obj, lnsManager)) return holdersOf(obj);
  return [];
}

export function lnamespaceFingerprint(obj: KubeObject): string {
  const a = obj.metadata.annotations ?? {};
  const relevant = {
    uid: obj.metadata.uid ?? '',
    spec: obj.spec ?? null,
    organization: obj.metadata.labels?.[KEY.organization] ?? null,
    creator: a[KEY.creator] ?? null,
    adopt: a[LNS_KEY.adopt] ?? null,
    deleting: Boolean(obj.metadata.deletionTimestamp),
  };
  return createHash('sha256').update(canonicalJson(relevant)).digest('hex').slice(0, 16);
}
