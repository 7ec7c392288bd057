// Registers a reconciler with the Functions Framework twice over: an HTTP function for Pub/Sub
// push (OIDC-verified; the status code is the ack) and a CloudEvent function for Eventarc
// Pub/Sub triggers (throwing nacks). Both decode the same envelope and call the same runtime.
import { readSetting } from '../config/settings.ts';
import type { CloudEvent, CloudEventFunction, HttpFunction } from '@google-cloud/functions-framework';
import { createPubSubBus } from '../bus/pubsub.ts';
import { callWindowMs, reconcileConfig } from './config.ts';
import { jsonLogger } from '../log.ts';
import type { MessageKind, ReconcileMessage } from '../bus/envelope.ts';
import { handleEnvelope, handlePush } from './push.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { observeDelivery, reconcilerMetrics, trackClient } from './metrics.ts';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics.ts';
import { outsideDomain } from '../functions/outside-domain.ts';

export interface FunctionsFramework {
  http(name: string, fn: HttpFunction): void;
  cloudEvent<T = unknown>(name: string, fn: CloudEventFunction<T>): void;
}

const runtimes = new Map<string, Promise<Runtime>>();

/** The local stack and tests install their own runtime (kubeconfig, in-process bus, auth). */
export function useRuntime(name: string, runtime: Runtime): void {
  runtimes.set(name, Promise.resolve(runtime));
}

function runtimeFor(name: string): Promise<Runtime> {
  let r = runtimes.get(name);
  if (!r) {
    r = (async () => {
      const config = reconcileConfig(process.env);
      const log = jsonLogger(name, undefined, readSetting(process.env, 'logLevel'));
      return createRuntime({ config, log, bus: () => createPubSubBus({ projectId: config.pubsubProject, log }) });
    })();
    r.catch(() => runtimes.delete(name));
    runtimes.set(name, r);
  }
  return r;
}

/** When a delivery that started at `started` sends its last call (config.ts callWindowMs). */
function callsUntil(rt: Runtime, started: number): number {
  return started + callWindowMs(rt.config.deliveryTimeoutSeconds, rt.config.kube.timeoutMs);
}

export function registerReconciler(ff: FunctionsFramework, name: string, kind: MessageKind, handle: (rt: Runtime, msg: ReconcileMessage) => Promise<object>): void {
  ff.http(name, outsideDomain(async (req, res) => {
    if (req.method === 'GET' && req.path.endsWith('/metrics')) {
      res.status(200).type(PROMETHEUS_CONTENT_TYPE).send(reconcilerMetrics.text());
      return;
    }
    // Before the runtime: a cold start's set-up counts against the push's request timeout too.
    const started = performance.now();
    let rt: Runtime;
    try {
      rt = await runtimeFor(name);
    } catch (e) {
      res.status(500).json({ error: `configuration: ${(e as Error).message}` });
      return;
    }
    const handled = async (m: ReconcileMessage) => {
      try {
        return { ...(await handle(rt, m)) };
      } finally {
        // Failed deliveries write too; a cluster without credentials has no client to count.
        void rt.cluster(m.cluster).then((c) => trackClient(name, m.cluster, c.kube), () => undefined);
      }
    };
    const answer = await handlePush({ verify: rt.verify, accept: kind, handle: handled, log: rt.log, callsUntil: callsUntil(rt, started) }, req.get('authorization'), req.body);
    observeDelivery(name, answer.status, (performance.now() - started) / 1000);
    res.status(answer.status).json(answer.body);
  }));
  ff.cloudEvent(`${name}-event`, outsideDomain(async (event: CloudEvent<unknown>) => {
    const started = performance.now();
    const rt = await runtimeFor(name);
    const answer = await handleEnvelope({ accept: kind, handle: async (m) => ({ ...(await handle(rt, m)) }), log: rt.log, callsUntil: callsUntil(rt, started) }, event.data);
    if (answer.status >= 500) throw new Error(String(answer.body.error ?? `HTTP ${answer.status}`));
  }));
}
