// The reconciler's part in pluggable initializers: once Furnish's templates are in place it
// removes its own `furnish` initializer (the last one to go turns the phase `ready`), and on every
// pass (resync included) it marks a namespace `failed` whose working initializer is past its
// timeout. Decisions are in shared/initializers/; this file only reads and writes.
import { KEY } from '../keys.ts';
import { listAll, mergePatch, NAMESPACES } from '../kube/api.ts';
import type { KubeClient } from '../kube/client.ts';
import { resourcePath, type ResourceInfo } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { mergeConfigurations } from '../initializers/config.ts';
import { failurePatch, pendingInitializers, timedOut } from '../initializers/decide.ts';
import type { MetadataPatch } from '../initializers/decide.ts';
import { CONFIG_RESOURCE, FURNISH_INITIALIZER, INIT_PHASE } from '../initializers/keys.ts';
import { classifyApiError, TransientError } from '../kube/errors.ts';
import type { Logger } from '../log.ts';

export const CONFIGURATIONS: ResourceInfo = { group: 'furnish.dev', version: 'v1alpha1', plural: CONFIG_RESOURCE, namespaced: false };

async function patchNamespace(kube: KubeClient, name: string, patch: MetadataPatch, what: string, log: Logger): Promise<boolean> {
  const res = await mergePatch(kube, resourcePath(NAMESPACES, undefined, name), patch);
  if (res.ok) return true;
  const c = classifyApiError({ status: res.status, reason: res.reason, message: res.error });
  if (c.class === 'transient') throw new TransientError(`${what} of ${name}: ${c.why}`, { status: res.status, reason: res.reason });
  log.log('ERROR', `could not ${what}`, { namespace: name, status: res.status, error: res.error });
  return false;
}

/**
 * Marks the namespace failed when its working initializer (other than Furnish) is past its
 * timeout. Reads the configurations only for a namespace waiting on another initializer.
 * Returns the number of writes (0 or 1).
 */
export async function markTimedOutInitializer(kube: KubeClient, ns: KubeObject, now: Date, log: Logger): Promise<number> {
  if (ns.metadata.labels?.[KEY.phase] !== INIT_PHASE.pending) return 0;
  const pending = pendingInitializers(ns.metadata.annotations ?? {});
  if (!pending?.length || pending[0] === FURNISH_INITIALIZER) return 0;
  const { result, items } = await listAll(kube, resourcePath(CONFIGURATIONS));
  if (!result.ok && result.status !== 404) {
    const c = classifyApiError({ status: result.status, reason: result.reason, message: result.error });
    if (c.class === 'transient') throw new TransientError(`list ${CONFIG_RESOURCE}: ${c.why}`, { status: result.status, reason: result.reason });
    log.log('ERROR', `could not list ${CONFIG_RESOURCE}`, { status: result.status, error: result.error });
    return 0;
  }
  const failed = timedOut(ns.metadata.creationTimestamp ?? undefined, pending, mergeConfigurations(items).initializers, now);
  if (!failed) return 0;
  const name = ns.metadata.name ?? '';
  if (await patchNamespace(kube, name, failurePatch(failed), 'mark initializer timed out', log)) log.log('WARNING', 'initializer timed out: namespace failed', { namespace: name, initializer: failed.initializer, reason: failed.reason });
  return 1;
}
