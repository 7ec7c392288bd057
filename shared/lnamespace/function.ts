// reconcile-lnamespace's handler on the shared reconciler runtime: the cluster's client, the
// settings read once, the executor.
import type { ReconcileMessage } from '../bus/envelope.ts';
import type { Runtime } from '../reconcile/runtime.ts';
import { lnsSettings } from './config.ts';
import { reconcileLNamespace, type LnsResult } from './reconcile.ts';

export function lnamespaceHandler(env: Record<string, string | undefined>): (rt: Runtime, msg: ReconcileMessage) => Promise<LnsResult> {
  const settings = lnsSettings(env);
  return async (rt, msg) => {
    const { kube } = await rt.cluster(msg.cluster || rt.config.cluster);
    return reconcileLNamespace({ kube, settings, log: rt.log, concurrency: rt.config.applyConcurrency }, msg.name);
  };
}
