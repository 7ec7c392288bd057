// Pub/Sub push (HTTP, OIDC) and Eventarc (CloudEvent) entry of the organization reconciler: any
// namespace event trues up the Organizations' namespace counts (see shared/org/reconcile.ts).
import * as functions from '@google-cloud/functions-framework';
import { registerReconciler } from '../../shared/reconcile/functions.ts';
import { reconcileOrganizations } from '../../shared/org/reconcile.ts';
import { clusterOrganizations } from '../../shared/org/source.ts';
import type { KubeCall } from '../../shared/kube/http.ts';

registerReconciler(functions, 'reconcile-organization', 'Namespace', async (rt, msg) => {
  const { kube } = await rt.cluster(msg.cluster || rt.config.cluster);
  const http = <T,>(c: KubeCall) => kube.http<T>(c);
  const result = await reconcileOrganizations(clusterOrganizations(http), http);
  if (result.failed.length > 0) throw new Error(`organizations not trued up: ${result.failed.map((f) => `${f.organization} (${f.error})`).join(', ')}`);
  return result;
});
