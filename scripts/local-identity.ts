// Who the local stack's reconcilers are. In a cluster the reconciler is the ServiceAccount
// furnish-system/furnish-reconciler; `npm start` runs it with the kubeconfig's own user, which the
// webhooks must also know as the reconciler: it completes the built-in `furnish` initializer and
// writes into namespaces while that one is working (README "Namespace initializers").
import type { KubeClient } from '../shared/kube/client.ts';
import { defaultPolicySettings } from '../shared/config/types.ts';
import type { Logger } from '../shared/log.ts';

/** SelfSubjectReview: GA in 1.28, beta in 1.27, alpha (behind a feature gate) in 1.26. */
const VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];

export async function whoAmI(kube: KubeClient): Promise<string | undefined> {
  for (const version of VERSIONS) {
    const res = await kube.call<{ status?: { userInfo?: { username?: string } } }>({
      method: 'POST', path: `/apis/authentication.k8s.io/${version}/selfsubjectreviews`,
      body: { apiVersion: `authentication.k8s.io/${version}`, kind: 'SelfSubjectReview' },
      retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 },
    });
    const name = res.data?.status?.userInfo?.username;
    if (res.ok && name) return name;
  }
  return undefined;
}

/** FURNISH_GUARD_RECONCILER for the local webhooks: the deployed reconciler's identity and the local one. */
export async function localReconcilerPrincipals(kube: KubeClient, log: Logger): Promise<string> {
  const deployed = defaultPolicySettings().guard.reconciler;
  const me = await whoAmI(kube);
  if (!me) log.log('WARNING', 'could not tell who the local reconcilers are (SelfSubjectReview): namespaces with initializers may stay pending; set FURNISH_GUARD_RECONCILER', {});
  return [...deployed, ...(me ? [me] : [])].join(',');
}
