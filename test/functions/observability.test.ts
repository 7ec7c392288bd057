// What an operator sees of the functions: one structured line per admission decision, and
// Prometheus text at GET /metrics of a webhook and of a reconciler (decisions, latency, deliveries,
// Kubernetes writes). Served by the functions framework, as deployed.
import { beforeAll, describe, expect, it } from '@jest/globals';
import * as functions from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { createWebhookAuthenticator } from '../../shared/auth/webhook-token.ts';
import { audienceFor, loadConfig } from '../../shared/config/load.ts';
import { encodeMessage, MESSAGE_VERSION } from '../../shared/bus/envelope.ts';
import type { KubeClient, KubeMetrics } from '../../shared/kube/client.ts';
import { collectingLogger, silentLogger } from '../../shared/log.ts';
import { MetricsRegistry } from '../../shared/metrics.ts';
import { registerReconciler, useRuntime } from '../../shared/reconcile/functions.ts';
import { reconcileConfig } from '../../shared/reconcile/config.ts';
import type { Runtime } from '../../shared/reconcile/runtime.ts';
import { clusterDepsCache } from '../../shared/webhooks/cluster-deps.ts';
import { HANDLERS } from '../../shared/webhooks/handlers/index.ts';
import { webhookHttpFunction } from '../../shared/webhooks/http.ts';
import { admissionFixture, mintToken, testEnv } from '../support/fixtures.ts';
import { parsePrometheus } from '../support/prometheus.ts';

describe('Prometheus text', () => {
  it('writes counters and cumulative histograms with HELP, TYPE and escaped labels', () => {
    const registry = new MetricsRegistry();
    registry.counter('c_total', 'a counter').inc({ webhook: 'a"b\\c\nd' }, 2);
    const h = registry.histogram('h_seconds', 'a histogram', [0.1, 1]);
    h.observe({ w: 'x' }, 0.05);
    h.observe({ w: 'x' }, 0.5);
    h.observe({ w: 'x' }, 3);
    expect(registry.text()).toBe([
      '# HELP c_total a counter', '# TYPE c_total counter', 'c_total{webhook="a\\"b\\\\c\\nd"} 2',
      '# HELP h_seconds a histogram', '# TYPE h_seconds histogram',
      'h_seconds_bucket{w="x",le="0.1"} 1', 'h_seconds_bucket{w="x",le="1"} 2', 'h_seconds_bucket{w="x",le="+Inf"} 3',
      'h_seconds_sum{w="x"} 3.55', 'h_seconds_count{w="x"} 3', '',
    ].join('\n'));
  });
});

describe('a webhook function', () => {
  const log = collectingLogger();
  let token: string;

  beforeAll(async () => {
    const config = await loadConfig(testEnv());
    functions.http('observed-validate-template', webhookHttpFunction({
      webhook: 'validate-template', handler: HANDLERS['validate-template'], depsFor: clusterDepsCache(), maxBodyBytes: config.maxBodyBytes, log,
      authenticator: createWebhookAuthenticator(config.clusters, audienceFor(config, 'validate-template')),
    }));
    token = await mintToken();
  });

  const review = (value: string) => {
    const captured = admissionFixture('014-mutate-CREATE-namespacetemplates-default-admin');
    const object = captured.review.request!.object as unknown as { spec: { templates: { data?: Record<string, string> }[] } };
    object.spec.templates[0]!.data = { who: value };
    return captured.review;
  };
  const post = (body: object) => request(getTestServer('observed-validate-template')).post('/').set('content-type', 'application/json').set('authorization', `Bearer ${token}`).send(JSON.stringify(body));

  it('logs one line per decision with webhook, uid, operation, resource, name, user, outcome, code and latency', async () => {
    const denied = review('$(NO_SUCH_TOKEN)');
    expect((await post(denied)).body.response.allowed).toBe(false);
    expect((await post(review('$(CREATOR)'))).body.response.allowed).toBe(true);
    const lines = log.lines.filter((l) => l.message === 'admission decision');
    expect(lines).toHaveLength(2);
    expect(lines[0]!.fields).toMatchObject({
      webhook: 'validate-template', uid: denied.request!.uid, operation: 'CREATE', resource: 'furnish.dev/v1alpha1/namespacetemplates',
      name: denied.request!.name, user: denied.request!.userInfo.username, allowed: false, code: 422, denial: expect.stringContaining('NO_SUCH_TOKEN'),
    });
    expect(lines[0]!.fields.latencyMs).toEqual(expect.any(Number));
    expect(lines[1]!.fields).toMatchObject({ allowed: true, code: 200, reason: 'Allowed' });
  });

  it('serves the decisions, their latency and every HTTP answer at GET /metrics, without a token', async () => {
    await request(getTestServer('observed-validate-template')).post('/').set('content-type', 'application/json').send('{}');
    const res = await request(getTestServer('observed-validate-template')).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(res.text).toContain('furnish_admission_decisions_total{webhook="validate-template",operation="CREATE",resource="furnish.dev/v1alpha1/namespacetemplates",allowed="false",code="422"} 1');
    expect(res.text).toContain('furnish_admission_decisions_total{webhook="validate-template",operation="CREATE",resource="furnish.dev/v1alpha1/namespacetemplates",allowed="true",code="200"} 1');
    expect(res.text).toContain('furnish_admission_decision_seconds_count{webhook="validate-template"} 2');
    expect(res.text).toContain('furnish_webhook_http_responses_total{webhook="validate-template",status="401"} 1');
    // What a scraper reads: every family with its HELP and TYPE, the text well-formed.
    const parsed = parsePrometheus(res.text);
    expect(parsed.problems).toEqual([]);
    expect(parsed.families.map((f) => `${f.name} ${f.type}`)).toEqual(expect.arrayContaining(['furnish_admission_decisions_total counter', 'furnish_admission_decision_seconds histogram', 'furnish_webhook_http_responses_total counter']));
  });
});

describe('a reconciler function', () => {
  const metrics: KubeMetrics = { requests: 7, writes: 3, retries: 1, failures: 0, throttledMs: 250, byStatus: {}, byVerb: {}, writesByResource: { configmaps: 2, 'namespaces/status': 1 } };

  beforeAll(() => {
    const kube = { metrics } as unknown as KubeClient;
    const runtime = { config: reconcileConfig({ FURNISH_PUSH_AUTH: 'off' }), log: silentLogger, verify: async () => ({ ok: true }), cluster: async () => ({ kube }) } as unknown as Runtime;
    registerReconciler(functions, 'observed-reconciler', 'Namespace', async () => ({ converged: true }));
    useRuntime('observed-reconciler', runtime);
  });

  it('counts deliveries by status and serves the client\'s requests and writes at GET /metrics', async () => {
    const { data, attributes } = encodeMessage({ v: MESSAGE_VERSION, cluster: 'prod', kind: 'Namespace', name: 'team-a', type: 'MODIFIED' });
    const server = getTestServer('observed-reconciler');
    const push = await request(server).post('/').set('content-type', 'application/json').send({ message: { data: data.toString('base64'), attributes, messageId: '1' }, subscription: 's' });
    expect(push.status).toBe(200);
    await request(server).post('/').set('content-type', 'application/json').send({ nope: true });
    const res = await request(server).get('/metrics');
    expect(res.text).toContain('furnish_reconcile_deliveries_total{function="observed-reconciler",status="200"} 1');
    expect(res.text).toContain('furnish_reconcile_deliveries_total{function="observed-reconciler",status="400"} 1');
    expect(res.text).toContain('furnish_reconcile_delivery_seconds_count{function="observed-reconciler"} 2');
    expect(res.text).toContain('furnish_kube_writes_total{function="observed-reconciler",cluster="prod",resource="configmaps"} 2');
    expect(res.text).toContain('furnish_kube_requests_total{function="observed-reconciler",cluster="prod"} 7');
    expect(res.text).toContain('furnish_kube_throttled_seconds_total{function="observed-reconciler",cluster="prod"} 0.25');
    const parsed = parsePrometheus(res.text);
    expect(parsed.problems).toEqual([]);
    expect(parsed.families.map((f) => `${f.name} ${f.type}`)).toEqual(expect.arrayContaining(['furnish_reconcile_deliveries_total counter', 'furnish_reconcile_delivery_seconds histogram', 'furnish_kube_requests_total counter', 'furnish_kube_writes_total counter']));
  });
});
