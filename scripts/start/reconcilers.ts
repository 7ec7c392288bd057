// The reconcilers of `npm start` on one local HTTP server (Pub/Sub push format, auth off): each
// registered from its factory with the stack's runtime, record-billing beside them.
import { createServer as createHttpServer } from 'node:http';
import * as functions from '@google-cloud/functions-framework';
import type { Bus } from '../../shared/bus/types.ts';
import type { MessageKind, ReconcileMessage } from '../../shared/bus/envelope.ts';
import { billingRuntime, RECORD_BILLING, registerRecordBilling, useBillingRuntime } from '../../shared/billing/function.ts';
import { connect, createKubeClient, type KubeClientOptions } from '../../shared/kube/client.ts';
import type { Credentials } from '../../shared/kube/connection.ts';
import { lnamespaceHandler } from '../../shared/lnamespace/function.ts';
import type { Logger } from '../../shared/log.ts';
import { organizationHandler } from '../../shared/org/function.ts';
import type { ReconcileConfig } from '../../shared/reconcile/config.ts';
import { registerReconciler, useRuntime } from '../../shared/reconcile/functions.ts';
import { createRuntime, type Runtime } from '../../shared/reconcile/runtime.ts';
import { close, functionRouter, listen, serverTimeouts } from './http.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** Each reconciler: the message kind it accepts and its handler, made from the stack's settings. */
const RECONCILER_FACTORIES: ReadonlyArray<{ name: string; kind: MessageKind; handler(env: Env): (rt: Runtime, msg: ReconcileMessage) => Promise<object> }> = [
  { name: 'reconcile-namespace', kind: 'Namespace', handler: () => (rt, msg) => rt.namespace(msg) },
  { name: 'reconcile-template', kind: 'NamespaceTemplate', handler: () => (rt, msg) => rt.template(msg) },
  { name: 'reconcile-organization', kind: 'Namespace', handler: (env) => organizationHandler(env) },
  { name: 'reconcile-lnamespace', kind: 'LNamespace', handler: (env) => lnamespaceHandler(env) },
];

export const RECONCILERS = RECONCILER_FACTORIES.map((r) => r.name);

export interface ServedReconcilers {
  url: string;
  runtime: Runtime;
  stop(): Promise<void>;
}

/**
 * The reconcilers and record-billing on one local HTTP server (push format, auth off), calling the
 * cluster with `credentials`: the stack gives them furnish-reconciler's (identities.ts).
 */
export async function serveReconcilers(opts: { credentials: Credentials; config: ReconcileConfig; bus: Bus; port: number; log: Logger; kubeOptions?: KubeClientOptions; env?: Env }): Promise<ServedReconcilers> {
  // Settings the caller read (the stack: the environment overlaid with its options); none by default.
  const { config, log, credentials, env = {} } = opts;
  const runtime = createRuntime({
    config,
    log,
    bus: async () => opts.bus,
    kubeFor: async () => createKubeClient(await connect(credentials), { pacing: { maxPerSecond: config.kube.qps, maxInflight: config.kube.maxInflight }, timeoutMs: config.kube.timeoutMs, ...opts.kubeOptions }),
  });
  for (const { name, kind, handler } of RECONCILER_FACTORIES) {
    registerReconciler(functions, name, kind, handler(env));
    useRuntime(name, runtime);
  }
  registerRecordBilling(functions);
  const billing = await billingRuntime(runtime, env, log);
  useBillingRuntime(billing);
  const http = serverTimeouts(createHttpServer(await functionRouter([...RECONCILERS, RECORD_BILLING])));
  const port = await listen(http, opts.port);
  return {
    url: `http://127.0.0.1:${port}`,
    runtime,
    async stop() {
      await close(http);
      await billing.deps.sink.close();
      (await runtime.cluster(config.cluster).catch(() => null))?.kube.close();
    },
  };
}
