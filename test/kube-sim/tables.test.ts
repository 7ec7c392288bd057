// Server-side printing (issue 28): kube-sim answers the Table kubectl asks for as kube-apiserver
// 1.26 does, checked against tables captured from the real server
// (test/fixtures/kube-apiserver-1.26/tables, made from objects.yaml there): the same column
// definitions, the same cells (ages and timestamps aside), the same row objects and list metadata.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import https from 'node:https';
import { join } from 'node:path';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { evaluateJsonPath, formatLabelSelector, humanDuration } from '../support/kube-sim/tables.ts';
import { runKubectl } from '../support/kubectl.ts';
import { call } from './helpers.ts';
import { TABLE_ACCEPT, applyCrds, tableFixture } from './tables-helpers.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'kube-apiserver-1.26', 'tables');
const NS = '/api/v1/namespaces/team-a';
const FURNISH = '/apis/furnish.dev/v1alpha1';

/** The status writes made after objects.yaml, as Furnish's reconcilers would. */
const STATUS_PATCHES: Array<[string, unknown]> = [
  [`${FURNISH}/namespacetemplates/starter/status`, { status: { matched: 4, applied: 3, failed: 1 } }],
  [`${FURNISH}/organizations/acme/status`, { status: { namespaces: 2 } }],
  [`${FURNISH}/lnamespaces/proj-x/status`, { status: { bindings: { users: 1, managers: 0, sudoers: 2 }, conditions: [{ type: 'Other', status: 'False' }, { type: 'Ready', status: 'True' }] } }],
];

/** fixture → the request it answered (Accept: kubectl's, unless given). */
const REQUESTS: Record<string, { path: string; accept?: string }> = {
  namespaces: { path: '/api/v1/namespaces?limit=500' },
  'namespace-get': { path: NS },
  'namespaces-page': { path: '/api/v1/namespaces?limit=2' },
  events: { path: `${NS}/events?limit=500` },
  'events-none-selected': { path: `${NS}/events?limit=500&labelSelector=x%3Dy` },
  rolebindings: { path: '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings?limit=500' },
  'clusterrolebinding-get': { path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crb-x' },
  configmaps: { path: `${NS}/configmaps?limit=500` },
  secrets: { path: `${NS}/secrets?limit=500` },
  resourcequotas: { path: `${NS}/resourcequotas?limit=500` },
  limitranges: { path: `${NS}/limitranges?limit=500` },
  'roles-empty': { path: '/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles?limit=500' },
  networkpolicies: { path: '/apis/networking.k8s.io/v1/namespaces/team-a/networkpolicies?limit=500' },
  serviceaccounts: { path: `${NS}/serviceaccounts?limit=500` },
  deployments: { path: '/apis/apps/v1/namespaces/team-a/deployments?limit=500' },
  validatingwebhookconfigurations: { path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?limit=500' },
  namespacetemplates: { path: `${FURNISH}/namespacetemplates?limit=500` },
  'namespacetemplate-get': { path: `${FURNISH}/namespacetemplates/starter` },
  'namespacetemplates-include-object': { path: `${FURNISH}/namespacetemplates?limit=500&includeObject=Object` },
  'namespacetemplates-include-none': { path: `${FURNISH}/namespacetemplates?limit=500&includeObject=None` },
  'namespacetemplates-none-selected': { path: `${FURNISH}/namespacetemplates?limit=500&labelSelector=x%3Dy` },
  organizations: { path: `${FURNISH}/organizations?limit=500` },
  lnamespaces: { path: `${FURNISH}/lnamespaces?limit=500` },
  namespaceinitializationconfigurations: { path: `${FURNISH}/namespaceinitializationconfigurations?limit=500` },
  'table-v1beta1': { path: `${NS}/configmaps/settings`, accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' },
  'table-bad-version': { path: `${NS}/configmaps/settings`, accept: 'application/json;as=Table;v=v2;g=meta.k8s.io' },
};

const TIME_COLUMNS = new Set(['Age', 'Last Seen', 'First Seen', 'Created At']);

/** What must match: everything but ages, timestamps, uids, resourceVersions and continue tokens. */
function comparable(body: any): unknown { // eslint-disable-line @typescript-eslint/no-explicit-any -- a Table or a Status
  if (body.kind !== 'Table') return body;
  const columns = (body.columnDefinitions ?? []) as Array<{ name: string; type: string }>;
  const timed = new Set(columns.flatMap((c, i) => (TIME_COLUMNS.has(c.name) ? [i] : [])));
  return {
    kind: body.kind, apiVersion: body.apiVersion, columnDefinitions: body.columnDefinitions,
    metadata: { ...body.metadata, resourceVersion: typeof body.metadata.resourceVersion, ...(body.metadata.continue ? { continue: 'set' } : {}) },
    rows: body.rows === null ? null : (body.rows as Array<{ cells: unknown[]; object: any }>).map((row) => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
      // A pod's restarts say how long ago the last one was: "3 (13m ago)".
      cells: row.cells.map((cell, i) => (timed.has(i) && cell !== null ? '<time>' : typeof cell === 'string' ? cell.replace(/\(\S+ ago\)$/, '(<time> ago)') : cell)),
      object: row.object === null ? null : {
        kind: row.object.kind, apiVersion: row.object.apiVersion,
        name: row.object.metadata.name, namespace: row.object.metadata.namespace, labels: row.object.metadata.labels,
        ...(row.object.spec ? { spec: row.object.spec } : {}),
      },
    })),
  };
}

let cluster: SimCluster;

beforeAll(async () => {
  cluster = await startCluster();
  await applyCrds(cluster.kubeconfigPath);
  const applied = await runKubectl(cluster.kubeconfigPath, 'admin', ['apply', '-f', join(FIXTURES, 'objects.yaml')]);
  expect(applied.stderr).toBe('');
  for (const [path, body] of STATUS_PATCHES) {
    expect((await call(cluster, 'PATCH', path, { body, contentType: 'application/merge-patch+json' })).status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await cluster.stop();
});

describe('kube-sim answers Table requests as kube-apiserver 1.26', () => {
  for (const [name, request] of Object.entries(REQUESTS)) {
    it(`${name}: ${request.path}`, async () => {
      const real = tableFixture(name);
      const reply = await call(cluster, 'GET', request.path, { headers: { Accept: request.accept ?? TABLE_ACCEPT } });
      expect(reply.status).toBe(real.status);
      expect(comparable(reply.body)).toEqual(comparable(real.body));
    });
  }

  it('a missing object is 404 as usual; an unknown includeObject is 400', async () => {
    const missing = await call(cluster, 'GET', `${NS}/configmaps/nope`, { headers: { Accept: TABLE_ACCEPT } });
    expect(missing.status).toBe(404);
    const bad = await call(cluster, 'GET', `${NS}/configmaps?includeObject=All`, { headers: { Accept: TABLE_ACCEPT } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('unrecognized includeObject value: "All"');
  });

  it('without as=Table the object itself is answered', async () => {
    const reply = await call(cluster, 'GET', `${NS}/configmaps/settings`, { headers: { Accept: 'application/json' } });
    expect(reply.body.kind).toBe('ConfigMap');
  });
});

/** The events of a watch that the server ends after `timeoutSeconds`. */
function watchEvents(path: string): Promise<Array<{ type: string; object: any }>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    const request = https.get(`${cluster.server}${path}`, {
      ca: cluster.caPem, agent: false, headers: { Accept: TABLE_ACCEPT, Authorization: `Bearer ${cluster.users.admin!.token}` },
    }, (response) => {
      let text = '';
      response.on('data', (c: Buffer) => (text += c.toString()));
      response.on('end', () => resolve(text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))));
    });
    request.on('error', reject);
  });
}

describe('watch as Table (kubectl get -w)', () => {
  for (const [name, path] of [['namespaces-watch', '/api/v1/namespaces'], ['namespacetemplates-watch', `${FURNISH}/namespacetemplates`]] as const) {
    it(`${name}: a one-row Table per event, column definitions in the first only`, async () => {
      const real = (tableFixture(name).body as string).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
      const events = await watchEvents(`${path}?watch=true&timeoutSeconds=1`);
      const shape = (e: { type: string; object: any }, i: number): unknown => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
        index: i === 0 ? 'first' : 'later', type: e.type, kind: e.object.kind, rows: e.object.rows.length,
        columns: e.object.columnDefinitions, object: e.object.rows[0].object.kind,
      });
      const initial = real.filter((e) => e.type === 'ADDED').slice(0, events.length);
      expect(events.map(shape)).toEqual(initial.map(shape));
      expect(events[0]!.object.columnDefinitions).toEqual(tableFixture(name.replace('-watch', '')).body.columnDefinitions);
    });
  }
});

/** The status of pods.yaml's pod `web`, as a kubelet would write it: one container ready, one crashing. */
const POD_STATUS = {
  status: {
    phase: 'Running', podIP: '10.0.0.5',
    containerStatuses: [
      { name: 'c', ready: true, restartCount: 2, image: 'nginx', imageID: '', started: true, state: { running: { startedAt: '2026-11-27T05:00:00Z' } },
        lastState: { terminated: { exitCode: 1, startedAt: '2026-11-27T04:00:00Z', finishedAt: '2026-11-27T05:59:00Z' } } },
      { name: 'd', ready: false, restartCount: 1, image: 'busybox', imageID: '', started: false, state: { waiting: { reason: 'CrashLoopBackOff' } } },
    ],
  },
};

describe('pods: readiness, status reason, restarts, IP, node, readiness gates', () => {
  beforeAll(async () => {
    const applied = await runKubectl(cluster.kubeconfigPath, 'admin', ['apply', '-f', join(FIXTURES, 'pods.yaml')]);
    expect(applied.stderr).toBe('');
    const patched = await call(cluster, 'PATCH', '/api/v1/namespaces/pods-a/pods/web/status', { body: POD_STATUS, contentType: 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    // kube-apiserver sets a new pod's status.phase to Pending; kube-sim stores none (test/support/kube-sim/README.md, Known differences).
    await call(cluster, 'PATCH', '/api/v1/namespaces/pods-a/pods/gated/status', { body: { status: { phase: 'Pending' } }, contentType: 'application/merge-patch+json' });
  });

  it('pods: /api/v1/namespaces/pods-a/pods', async () => {
    const reply = await call(cluster, 'GET', '/api/v1/namespaces/pods-a/pods?limit=500', { headers: { Accept: TABLE_ACCEPT } });
    expect(comparable(reply.body)).toEqual(comparable(tableFixture('pods').body));
  });

  it('a finished pod\'s row carries the Completed condition', async () => {
    const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done', namespace: 'pods-a' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    expect((await call(cluster, 'POST', '/api/v1/namespaces/pods-a/pods', { body })).status).toBe(201);
    await call(cluster, 'PATCH', '/api/v1/namespaces/pods-a/pods/done/status', { body: { status: { phase: 'Succeeded' } }, contentType: 'application/merge-patch+json' });
    const reply = await call(cluster, 'GET', '/api/v1/namespaces/pods-a/pods/done', { headers: { Accept: TABLE_ACCEPT } });
    expect(reply.body.rows[0].conditions).toEqual([{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
    expect(reply.body.rows[0].cells.slice(0, 4)).toEqual(['done', '0/1', 'Succeeded', '0']);
  });
});

describe('the rules behind the cells', () => {
  it('ages read as apimachinery HumanDuration says them', () => {
    const s = 1000;
    expect([0, 59, 119, 120, 125, 600, 10799, 10800, 3 * 3600 + 60 * 5, 8 * 3600, 48 * 3600, 50 * 3600, 8 * 86400, 731 * 86400, 3000 * 86400].map((n) => humanDuration(n * s)))
      .toEqual(['0s', '59s', '119s', '2m', '2m5s', '10m', '179m', '3h', '3h5m', '8h', '2d', '2d2h', '8d', '2y1d', '8y']);
    expect(humanDuration(-1500)).toBe('0s');
    expect(humanDuration(-2500)).toBe('<invalid>');
  });

  it('label selectors print as metav1.FormatLabelSelector', () => {
    expect(formatLabelSelector({})).toBe('<none>');
    expect(formatLabelSelector({ matchLabels: { b: '1' }, matchExpressions: [{ key: 'a', operator: 'In', values: ['y', 'x'] }, { key: 'c', operator: 'DoesNotExist' }] }))
      .toBe('a in (x,y),b=1,!c');
  });

  it('printer-column JSONPaths: escaped dots, filters, wildcards (first result)', () => {
    const obj = { metadata: { annotations: { 'furnish.dev/creator': 'alice' } }, status: { conditions: [{ type: 'A', status: 'False' }, { type: 'Ready', status: 'True' }] }, spec: { list: [{ name: 'a' }, { name: 'b' }] } };
    expect(evaluateJsonPath('.metadata.annotations.furnish\\.dev/creator', obj)).toEqual(['alice']);
    expect(evaluateJsonPath('.status.conditions[?(@.type=="Ready")].status', obj)).toEqual(['True']);
    expect(evaluateJsonPath('.spec.list[*].name', obj)).toEqual(['a', 'b']);
    expect(evaluateJsonPath('.spec.list[1].name', obj)).toEqual(['b']);
    expect(evaluateJsonPath('.spec.missing', obj)).toEqual([]);
  });
});
