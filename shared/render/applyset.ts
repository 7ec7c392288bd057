// ApplySet (KEP-3659): one parent ConfigMap per namespace names the inventory of everything
// Furnish applied there, so `kubectl apply --prune --applyset` and Furnish's own pruning agree on
// what belongs to the set.
import { hash } from 'node:crypto';
import type { KubeObject } from '../kube/types.ts';
import { KEY } from '../keys.ts';
import { formatGroupKind } from './kinds.ts';
import type { GroupKind } from './types.ts';

export const APPLYSET_PARENT_NAME = 'furnish-applyset';
export const APPLYSET_PARENT_KIND: GroupKind = { group: '', kind: 'ConfigMap' };
export const APPLYSET_TOOLING = 'furnish/v1alpha1';

/**
 * The KEP-3659 v1 id of the parent: `applyset-` + base64url-no-padding(sha256 of
 * `<name>.<namespace>.<Kind>.<group>`) + `-v1`, exactly as kubectl computes it.
 */
export function applySetId(namespace: string): string {
  const { kind, group } = APPLYSET_PARENT_KIND;
  const digest = hash('sha256', `${APPLYSET_PARENT_NAME}.${namespace}.${kind}.${group}`, 'base64url');
  return `applyset-${digest}-v1`;
}

/** Sorted, de-duplicated `Kind.group` list (core kinds as `Kind`). */
export function formatGroupKinds(groupKinds: Iterable<GroupKind>): string {
  return [...new Set([...groupKinds].map(formatGroupKind))].sort().join(',');
}

/** The parent ConfigMap of the namespace's ApplySet, listing the member group-kinds; `id` when the caller has it already. */
export function applySetParent(namespace: string, groupKinds: Iterable<GroupKind>, id = applySetId(namespace)): KubeObject {
  return {
    apiVersion: 'v1',
    kind: APPLYSET_PARENT_KIND.kind,
    metadata: {
      name: APPLYSET_PARENT_NAME,
      namespace,
      labels: { [KEY.applySetId]: id },
      annotations: {
        [KEY.applySetTooling]: APPLYSET_TOOLING,
        [KEY.applySetGroupKinds]: formatGroupKinds(groupKinds),
      },
    },
  };
}
