// The reconciler's part in pluggable initializers: once Furnish's templates are in place it
// removes its own `furnish` initializer (the last one to go turns the phase `ready`), and on every
// pass (resync included) it marks a namespace `failed` whose working initializer is past its
// timeout. Decisions are in shared/initializers/; this file only reads and writes.
import { KEY } from '../keys.ts';
import { listAll, patchNamespaceStatus } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { resourcePath, type ResourceInfo } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { mergeConfigurations } from '../initializers/config.ts';
import { failurePatch, pendingInitializers, timedOut } from '../initializers/decide.ts';
import { CONFIG_RESOURCE, FURNISH_INITIALIZER, INIT_PHASE } from '../initializers/keys.ts';
import { classifyApiError, TransientError } from '../kube/errors.ts';
import type { Logger } from '../log.ts';
import { withReadyCondition, type NamespacePatch } from './phase.ts';

export const CONFIGURATIONS: ResourceInfo = { group: 'furnish.dev', version: 'v1alpha1', plural: CONFIG_RESOURCE, namespaced: false };

async function patchNamespace(kube: KubeClient, name: string, patch: NamespacePatch, what: string, log: Logger): Promise<KubeObject | undefined> {
  const res = await patchNamespaceStatus(kube, name, patch);
  if (res.ok) return res.data;
  const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
  if (c.class === 'transient') throw new TransientError(`${what} of ${name}: ${c.why}`, { status: res.status, reason: res.reason });
  log.log('ERROR', `could not ${what}`, { namespace: name, status: res.status, error: res.error });
  return undefined;
}

/**
 * Marks the namespace failed when its working initializer (other than Furnish) is past its
 * timeout. Reads the configurations only for a namespace waiting on another initializer.
 * Returns the namespace as that write left it; undefined when it wrote nothing.
 */
export async function markTimedOutInitializer(kube: KubeClient, ns: KubeObject, now: Date, log: Logger): Promise<KubeObject | undefined> {
  if (ns.metadata.labels?.[KEY.phase] !== INIT_PHASE.pending) return undefined;
  const pending = pendingInitializers(ns.metadata.annotations ?? {});
  if (!pending?.length || pending[0] === FURNISH_INITIALIZER) return undefined;
  const { result, items } = await listAll(kube, resourcePath(CONFIGURATIONS));
  if (!result.ok && result.status !== 404) {
    const c = classifyApiError({ status: result.status, reason: result.reason, message: result.error });
    if (c.class === 'transient') throw new TransientError(`list ${CONFIG_RESOURCE}: ${c.why}`, { status: result.status, reason: result.reason });
    log.log('ERROR', `could not list ${CONFIG_RESOURCE}`, { status: result.status, error: result.error });
    return undefined;
  }
  const failed = timedOut(ns.metadata.creationTimestamp ?? undefined, pending, mergeConfigurations(items).initializers, now);
  if (!failed) return undefined;
  const name = ns.metadata.name ?? '';
  const written = await patchNamespace(kube, name, withReadyCondition(ns, failurePatch(failed), now)!, 'mark initializer timed out', log);
  if (written) log.log('WARNING', 'initializer timed out: namespace failed', { namespace: name, initializer: failed.initializer, reason: failed.reason });
  return written;
}
