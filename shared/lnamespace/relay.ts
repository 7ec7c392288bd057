// What the LNamespace reconciler sees of an LNamespace, as a short hash: the relay publishes a
// change only when it moved, so the reconciler's own status writes do not send it straight back.
import { createHash } from 'node:crypto';
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { canonicalJson } from '../render/hash.ts';
import { LNS_KEY } from './types.ts';

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
