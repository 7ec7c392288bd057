// Two more decorators around every webhook (after Kyverno's handlers/metrics.go and dump.go):
// one structured log line per admission decision, and counters and a latency histogram per
// webhook, served as Prometheus text at GET /metrics. Both stay synchronous for a synchronous
// decision (see http.ts), and neither can change or delay a decision.
import type { Request, Response } from '@google-cloud/functions-framework';
import type { AdmissionResponse, DecodedReview } from '../admission/types.ts';
import type { Logger } from '../log.ts';
import { MetricsRegistry, PROMETHEUS_CONTENT_TYPE } from '../metrics.ts';

/** One registry per process: every webhook function loaded in it reports there (npm start serves several). */
export const webhookMetrics = new MetricsRegistry();
const decisions = webhookMetrics.counter('furnish_admission_decisions_total', 'Admission decisions, by webhook, operation, resource, outcome and status code.');
const latency = webhookMetrics.histogram('furnish_admission_decision_seconds', 'Time from a decoded review to its decision, by webhook.');
const answers = webhookMetrics.counter('furnish_webhook_http_responses_total', 'HTTP answers of the webhook functions, by webhook and status (401, 4xx, 5xx included).');

/** The fields of the decision's log line; `reason` is the denial's metav1 reason (or Allowed/Denied). */
export function decisionRecord(webhook: string, review: DecodedReview, response: AdmissionResponse, seconds: number): Record<string, unknown> {
  const r = review.request;
  const resource = [r.resource.group || 'core', r.resource.version, r.resource.resource].join('/') + (r.subResource ? `/${r.subResource}` : '');
  return {
    webhook,
    uid: r.uid,
    operation: r.operation,
    resource,
    ...(r.namespace ? { namespace: r.namespace } : {}),
    name: r.name ?? (r.object?.metadata?.name ?? ''),
    user: r.userInfo.username ?? '',
    allowed: response.allowed,
    code: response.status?.code ?? (response.allowed ? 200 : 403),
    reason: response.status?.reason ?? (response.allowed ? 'Allowed' : 'Denied'),
    ...(response.allowed ? {} : { denial: (response.status?.message ?? '').slice(0, 500) }),
    ...(response.patch ? { patched: true } : {}),
    ...(r.dryRun ? { dryRun: true } : {}),
    latencyMs: Math.round(seconds * 1e6) / 1e3,
  };
}

function record(webhook: string, log: Logger, review: DecodedReview, response: AdmissionResponse, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  const line = decisionRecord(webhook, review, response, seconds);
  decisions.inc({ webhook, operation: review.request.operation, resource: String(line.resource), allowed: String(response.allowed), code: String(line.code) });
  latency.observe({ webhook }, seconds);
  log.log('INFO', 'admission decision', line);
}

type Decide<C> = (review: DecodedReview, cluster: C) => AdmissionResponse | Promise<AdmissionResponse>;

/** Logs and counts every decision of `decide` (a thrown error is not a decision: http.ts answers it 500). */
export function withDecisionRecord<C>(webhook: string, log: Logger, decide: Decide<C>): Decide<C> {
  return (review, cluster) => {
    const started = performance.now();
    const decided = decide(review, cluster);
    if (decided instanceof Promise) {
      return decided.then((response) => {
        record(webhook, log, review, response, started);
        return response;
      });
    }
    record(webhook, log, review, decided, started);
    return decided;
  };
}

type Handle = (req: Request, res: Response) => void | Promise<void>;

/** GET /metrics answers the registry (counts only: no name, user or credential); every answer is counted. */
export function withMetrics(webhook: string, next: Handle): Handle {
  return (req, res) => {
    if (req.method === 'GET' && req.path.endsWith('/metrics')) {
      res.status(200).type(PROMETHEUS_CONTENT_TYPE).send(webhookMetrics.text());
      return;
    }
    res.once('finish', () => answers.inc({ webhook, status: String(res.statusCode) }));
    return next(req, res);
  };
}
