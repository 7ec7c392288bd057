// reconcile-organization's handler on the shared reconciler runtime: any namespace event trues up
// the Organizations' namespace counts of its cluster (see reconcile.ts).
import type { ReconcileMessage } from '../bus/envelope.ts';
import type { KubeCall } from '../kube/http.ts';
import type { Runtime } from '../reconcile/runtime.ts';
import { reconcileOrganizations } from './reconcile.ts';
import { clusterOrganizations } from './source.ts';

/**
 * Whether a namespace message can change an Organization's count: a template's fan-out (FANOUT)
 * asks a namespace to take its templates again and changes no membership, so it is acknowledged
 * without the two cluster-wide lists a true-up costs (one per namespace of every fan-out before).
 */
export function concernsOrganizations(msg: Pick<ReconcileMessage, 'type'>): boolean {
  return msg.type !== 'FANOUT';
}

export async function reconcileOrganizationsOf(rt: Runtime, msg: ReconcileMessage): Promise<object> {
  if (!concernsOrganizations(msg)) return { skipped: 'a template fan-out changes no organization membership' };
  const { kube } = await rt.cluster(msg.cluster || rt.config.cluster);
  const http = <T,>(c: KubeCall) => kube.http<T>(c);
  const result = await reconcileOrganizations(clusterOrganizations(http), http);
  if (result.failed.length > 0) throw new Error(`organizations not trued up: ${result.failed.map((f) => `${f.organization} (${f.error})`).join(', ')}`);
  return result;
}
