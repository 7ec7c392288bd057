// `npm start` registers the webhooks with field manager `furnish-local` and removes them on exit;
// a run that was killed leaves them behind, failing closed on a local server that is gone (even
// cluster-admin then cannot create a namespace). The next start removes exactly those (never
// registrations written by `furnish install` or by hand) before it writes anything.
import type { KubeClient } from '../shared/kube/client.ts';
import type { KubeObject } from '../shared/kube/types.ts';
import type { Logger } from '../shared/log.ts';

export const LOCAL_FIELD_MANAGER = 'furnish-local';

const KINDS = [
  { kind: 'MutatingWebhookConfiguration', plural: 'mutatingwebhookconfigurations' },
  { kind: 'ValidatingWebhookConfiguration', plural: 'validatingwebhookconfigurations' },
] as const;

/** Written by `npm start`: one of its field managers is ours. */
export function isLocalRegistration(o: KubeObject): boolean {
  return ((o.metadata.managedFields ?? []) as { manager?: string }[]).some((f) => f.manager === LOCAL_FIELD_MANAGER);
}

/** The kubectl command that deletes these webhook registrations. */
export function removeRegistrationsCommand(configs: readonly KubeObject[]): string {
  return KINDS.map(({ kind, plural }) => [plural.replace(/s$/, ''), configs.filter((c) => c.kind === kind).map((c) => c.metadata.name).join(' ')])
    .filter(([, names]) => names !== '').map(([resource, names]) => `kubectl delete ${resource} ${names}`).join('; ');
}

/** Deletes the registrations an earlier `npm start` left; returns them. */
export async function removeStaleLocalRegistrations(kube: KubeClient, log: Logger): Promise<KubeObject[]> {
  const stale: KubeObject[] = [];
  for (const { kind, plural } of KINDS) {
    const path = `/apis/admissionregistration.k8s.io/v1/${plural}`;
    const list = await kube.call<{ items?: KubeObject[] }>({ method: 'GET', path });
    for (const o of (list.data?.items ?? []).filter(isLocalRegistration)) {
      const res = await kube.call({ method: 'DELETE', path: `${path}/${o.metadata.name}` });
      if (res.ok || res.status === 404) stale.push({ ...o, kind });
      else log.log('WARNING', 'could not remove a webhook registration left by an earlier npm start', { name: o.metadata.name, status: res.status, error: res.error, removeByHand: removeRegistrationsCommand([{ ...o, kind }]) });
    }
  }
  if (stale.length > 0) log.log('WARNING', 'removed webhook registrations left by an earlier npm start that did not stop cleanly', { registrations: stale.map((o) => o.metadata.name), byHand: removeRegistrationsCommand(stale) });
  return stale;
}
