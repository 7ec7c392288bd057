// record-billing as a Cloud Function, registered like the reconcilers: an HTTP function for
// Pub/Sub push (OIDC-verified; the status is the ack) and a CloudEvent function for Eventarc.
//   200 recorded (or already recorded: a duplicate);  204 undecodable, acknowledged and logged;
//   503 a row not stored yet or the API server unavailable: Pub/Sub redelivers;  500 a bug.
import type { HttpFunction, CloudEventFunction } from '@google-cloud/functions-framework';
import type { PushVerifier } from '../auth/oidc.ts';
import { readSetting } from '../config/settings.ts';
import { reconcileConfig } from '../reconcile/config.ts';
import { TransientError } from '../kube/errors.ts';
import { jsonLogger, type Logger } from '../log.ts';
import { openEnvelope, refusedPush, type PushAnswer } from '../reconcile/push.ts';
import { createRuntime, type Runtime } from '../reconcile/runtime.ts';
import { decodeBillingMessage } from './event.ts';
import { organizationBillingReader, recordBilling, type RecordDeps } from './record.ts';
import { openSink, parseSinkSpec, SinkNotReady } from './sink.ts';

export const RECORD_BILLING = 'record-billing';

export interface BillingRuntime {
  verify: PushVerifier;
  deps: RecordDeps;
}

let runtime: Promise<BillingRuntime> | undefined;

/** The local stack and tests install their own runtime (SQLite file, kubeconfig, auth off). */
export function useBillingRuntime(rt: BillingRuntime): void {
  runtime = Promise.resolve(rt);
}

/** record-billing on top of a reconcilers' runtime (its clusters and push verifier) and the sink FURNISH_BILLING names. */
export async function billingRuntime(clusters: Runtime, env: Record<string, string | undefined>, log: Logger): Promise<BillingRuntime> {
  const sink = await openSink(parseSinkSpec(readSetting(env, 'billing')), { env });
  const kubeFor = async (c: string) => (await clusters.cluster(c || clusters.config.cluster)).kube;
  return { verify: clusters.verify, deps: { sink, log, now: () => new Date(), organizationBilling: organizationBillingReader(kubeFor, log) } };
}

function runtimeFromEnv(): Promise<BillingRuntime> {
  runtime ??= (async () => {
    const config = reconcileConfig(process.env);
    const log = jsonLogger(RECORD_BILLING);
    const clusters = createRuntime({ config, log, bus: () => Promise.reject(new Error('record-billing publishes nothing')) });
    return billingRuntime(clusters, process.env, log);
  })();
  runtime.catch(() => (runtime = undefined));
  return runtime;
}

export async function handleBillingEnvelope(deps: RecordDeps, body: unknown): Promise<PushAnswer> {
  const decoded = openEnvelope(body, decodeBillingMessage, deps.log, 'billing message');
  if (!decoded.ok) return decoded.answer;
  const { messageId } = decoded;
  try {
    return { status: 200, body: { acknowledged: true, ...(await recordBilling(deps, decoded.message)) } };
  } catch (e) {
    const transient = e instanceof TransientError;
    // A sink not set up is the operator's to fix (its error says how), not a crash: no stack.
    const known = transient || e instanceof SinkNotReady;
    const what = transient ? 'transient failure' : known ? 'sink not set up' : 'crashed';
    deps.log.log(transient ? 'WARNING' : 'ERROR', `billing: ${what}, delivery will be retried`, { messageId, error: known ? (e as Error).message : ((e as Error).stack ?? String(e)) });
    return { status: known ? 503 : 500, body: { error: (e as Error).message } };
  }
}

export async function handleBillingPush(rt: BillingRuntime, authorization: string | undefined, body: unknown): Promise<PushAnswer> {
  return (await refusedPush(rt.verify, authorization, rt.deps.log)) ?? handleBillingEnvelope(rt.deps, body);
}

export interface FunctionsFramework {
  http(name: string, fn: HttpFunction): void;
  cloudEvent<T = unknown>(name: string, fn: CloudEventFunction<T>): void;
}

export function registerRecordBilling(ff: FunctionsFramework): void {
  ff.http(RECORD_BILLING, async (req, res) => {
    let rt: BillingRuntime;
    try {
      rt = await runtimeFromEnv();
    } catch (e) {
      res.status(500).json({ error: `configuration: ${(e as Error).message}` });
      return;
    }
    const answer = await handleBillingPush(rt, req.get('authorization'), req.body);
    res.status(answer.status).json(answer.body);
  });
  ff.cloudEvent(`${RECORD_BILLING}-event`, async (event) => {
    const rt = await runtimeFromEnv();
    const answer = await handleBillingEnvelope(rt.deps, event.data);
    if (answer.status >= 500) throw new Error(String(answer.body.error ?? `HTTP ${answer.status}`));
  });
}
