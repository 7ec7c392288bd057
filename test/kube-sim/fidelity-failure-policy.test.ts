// kube-sim against the real control plane (test/fixtures/kube-apiserver-1.26/api) on what
// `furnish install` relies on: a webhook nobody answers lets a server-side dry run through under
// failurePolicy Ignore (201, nothing stored) and refuses it under Fail, with the API server's own
// words for the dial error.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { call, fixture } from './helpers.ts';

let cluster: SimCluster;
const CONFIG = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const dryRunConfigMap = () => call(cluster, 'POST', '/api/v1/namespaces/fidelity-dead/configmaps?dryRun=All', { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } });

function deadWebhook(failurePolicy: 'Ignore' | 'Fail') {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'fidelity-dead' },
    webhooks: [{
      name: 'dead.fidelity.furnish.dev', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy, timeoutSeconds: 2,
      clientConfig: { url: 'https://127.0.0.1:1/gone' },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE'] }],
      namespaceSelector: { matchLabels: { 'fidelity-dead': 'yes' } },
    }],
  };
}

beforeAll(async () => {
  cluster = await startCluster({ namespaceDefaultObjects: false });
  await call(cluster, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fidelity-dead', labels: { 'fidelity-dead': 'yes' } } } });
});
afterAll(() => cluster.stop());

describe('a webhook that nobody answers', () => {
  it('Ignore: the dry run is admitted as sent and nothing is stored', async () => {
    await call(cluster, 'POST', CONFIG, { body: deadWebhook('Ignore') });
    const reply = await dryRunConfigMap();
    const real = fixture('webhook-unreachable-ignore-dry-run');
    expect(reply.status).toBe(real.status);
    expect(Object.keys(reply.body as object).sort()).toEqual(Object.keys(real.body as object).sort());
    expect((reply.body as { metadata: object }).metadata).toMatchObject({ name: 'x', namespace: 'fidelity-dead' });
    expect((await call(cluster, 'GET', '/api/v1/namespaces/fidelity-dead/configmaps/x')).status).toBe(404);
  });

  it('Fail: 500 InternalError naming the webhook and the dial error as Go words it', async () => {
    await call(cluster, 'PUT', `${CONFIG}/fidelity-dead`, { body: deadWebhook('Fail') });
    const reply = await dryRunConfigMap();
    const real = fixture('webhook-unreachable-fail');
    expect(reply.status).toBe(real.status);
    expect(reply.body).toEqual(real.body);
  });
});
