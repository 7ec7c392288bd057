// kube-sim holds its ValidatingAdmissionPolicies as kube-apiserver 1.30+ does: compiled from its
// informers again at most once per refresh interval (policy_source.go, 1 s), so a policy just
// written is not in force yet, and one just deleted still is. What npm start's enforcement checks
// wait out (start-policies.test.ts).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../../support/kube-sim/index.ts';
import { call } from '../../kube-sim/helpers.ts';

const GV = '/apis/admissionregistration.k8s.io/v1';
const INTERVAL_MS = 300;
let cluster: SimCluster;

beforeAll(async () => {
  cluster = await startCluster({ policyRefreshIntervalMs: INTERVAL_MS });
});

afterAll(async () => {
  await cluster?.stop();
});

let n = 0;
const createConfigMap = async () => (await call(cluster, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `cm-${++n}` } } })).status;
const pastRefresh = () => new Promise((r) => setTimeout(r, INTERVAL_MS + 50));

it('a policy takes effect, and stops, at the next refresh: not with its write', async () => {
  expect(await createConfigMap()).toBe(201);
  expect((await call(cluster, 'POST', `${GV}/validatingadmissionpolicies`, { body: { metadata: { name: 'no-configmaps' }, spec: {
    matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
    validations: [{ expression: 'false', message: 'no configmaps' }], // refused as Invalid (422), the default reason
  } } })).status).toBe(201);
  expect((await call(cluster, 'POST', `${GV}/validatingadmissionpolicybindings`, { body: { metadata: { name: 'no-configmaps' }, spec: { policyName: 'no-configmaps', validationActions: ['Deny'] } } })).status).toBe(201);
  expect(await createConfigMap()).toBe(201);
  await pastRefresh();
  expect(await createConfigMap()).toBe(422);

  expect((await call(cluster, 'DELETE', `${GV}/validatingadmissionpolicybindings/no-configmaps`)).status).toBe(200);
  expect(await createConfigMap()).toBe(422);
  await pastRefresh();
  expect(await createConfigMap()).toBe(201);
});
