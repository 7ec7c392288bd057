// protect-objects on subresources (issue 25 finding 12): `kubectl scale` goes through
// `deployments/scale`, whose request carries an autoscaling/v1 Scale without the Deployment's
// labels, so the handler reads the Deployment and judges the scale as an update of its replicas;
// a Pod's ephemeral containers are judged like the Pod.
import { describe, expect, it } from '@jest/globals';
import type { AdmissionRequest } from '../../../shared/admission/types.ts';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject, UserInfo } from '../../../shared/kube/types.ts';
import { applySetId } from '../../../shared/render/applyset.ts';
import { HANDLERS } from '../../../shared/webhooks/handlers/index.ts';
import type { ObjectSource } from '../../../shared/webhooks/deps.ts';
import { objectPath, staticObjects } from '../../../shared/webhooks/object-lookups.ts';
import { allowSystemPrincipals, scaledObject } from '../../../shared/webhooks/rules/protect-objects.ts';
import { namespaceTemplate, testDeps, testSettings } from '../../support/fixtures.ts';

const RECONCILER = 'system:serviceaccount:furnish-system:furnish-reconciler';
const HPA = 'system:serviceaccount:kube-system:horizontal-pod-autoscaler';
const MEMBERSHIP = { 'f:metadata': { 'f:labels': { [`f:${KEY.applySetPartOf}`]: {} } } };
const alice: UserInfo = { username: 'alice', groups: ['dev', 'system:authenticated'] };

function deployment(furnish = true): KubeObject {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: {
      name: 'web', namespace: 'team-a', uid: 'u-web', resourceVersion: '7',
      labels: furnish ? { [KEY.template]: 'workloads', [KEY.applySetPartOf]: applySetId('team-a') } : { app: 'web' },
      managedFields: furnish ? [{ manager: 'furnish', operation: 'Apply', time: '2026-11-27T05:00:00Z', fieldsV1: MEMBERSHIP }] : [],
    },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } },
  };
}

/** What kube-apiserver builds from a Deployment: name, namespace, uid, resourceVersion, no labels. */
function scale(replicas: number): KubeObject {
  return { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'team-a', uid: 'u-web', resourceVersion: '7' }, spec: { replicas }, status: { replicas: 2, selector: 'app=web' } } as KubeObject;
}

function scaleRequest(user: UserInfo, replicas: number): AdmissionRequest {
  return {
    uid: 's1', kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, resource: { group: 'apps', version: 'v1', resource: 'deployments' }, subResource: 'scale',
    name: 'web', namespace: 'team-a', operation: 'UPDATE', userInfo: user, object: scale(replicas), oldObject: scale(2),
  };
}

function objects(stored: KubeObject | undefined, reads: string[] = []): ObjectSource {
  return { get: async (resource, namespace, name) => (reads.push(objectPath(resource, namespace, name)), stored) };
}

function deps(stored: KubeObject | undefined, protect = true, reads: string[] = []) {
  const t = namespaceTemplate('workloads');
  t.spec.protect = protect;
  return { ...testDeps({ templates: [t] }), objects: objects(stored, reads) };
}

describe('protect-objects judges a scale as the update of the object it scales', () => {
  it('scaledObject: the stored object with the Scale\'s replicas', () => {
    expect(scaledObject(deployment(), scale(5)).spec).toMatchObject({ replicas: 5, selector: { matchLabels: { app: 'web' } } });
    expect(deployment().spec).toMatchObject({ replicas: 2 });
  });

  it('refuses a tenant\'s kubectl scale of a protected Deployment, reading the Deployment', async () => {
    const reads: string[] = [];
    const refused = await HANDLERS['protect-objects'](scaleRequest(alice, 5), deps(deployment(), true, reads));
    expect(refused).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(refused.status!.message).toBe(
      'user "alice" may not scale Deployment "web" in namespace "team-a": it belongs to NamespaceTemplate "workloads", which protects its objects (spec.protect: true), '
        + "so only Furnish's reconciler changes it. To change it, edit the template (kubectl edit namespacetemplate workloads); Furnish applies the change to every namespace the template selects",
    );
    expect(reads).toEqual(['/apis/apps/v1/namespaces/team-a/deployments/web']);
  });

  it('the HorizontalPodAutoscaler scales for whoever made the HPA: refused too; the reconciler is not', async () => {
    expect(await HANDLERS['protect-objects'](scaleRequest({ username: HPA, groups: ['system:serviceaccounts'] }, 5), deps(deployment()))).toMatchObject({ allowed: false });
    expect(allowSystemPrincipals({ operation: 'UPDATE', user: { username: HPA }, kind: 'Deployment', settings: testSettings() })).toBeDefined();
    expect(await HANDLERS['protect-objects'](scaleRequest({ username: RECONCILER }, 5), deps(deployment()))).toMatchObject({ allowed: true });
  });

  it('allows a scale of an unprotected template\'s, a user\'s own, or a vanished object, and one that changes nothing', async () => {
    expect(await HANDLERS['protect-objects'](scaleRequest(alice, 5), deps(deployment(), false))).toMatchObject({ allowed: true });
    expect(await HANDLERS['protect-objects'](scaleRequest(alice, 5), deps(deployment(false)))).toMatchObject({ allowed: true });
    expect(await HANDLERS['protect-objects'](scaleRequest(alice, 5), deps(undefined))).toMatchObject({ allowed: true });
    expect(await HANDLERS['protect-objects'](scaleRequest(alice, 2), deps(deployment()))).toMatchObject({ allowed: true });
  });

  it('furnish admit --cluster finds the object among the given ones', async () => {
    const found = staticObjects([deployment()]);
    expect(await found.get({ group: 'apps', version: 'v1', resource: 'deployments' }, 'team-a', 'web')).toMatchObject({ kind: 'Deployment' });
    expect(await found.get({ group: 'apps', version: 'v1', resource: 'statefulsets' }, 'team-a', 'web')).toBeUndefined();
    expect(await HANDLERS['protect-objects'](scaleRequest(alice, 5), { ...deps(undefined), objects: found })).toMatchObject({ allowed: false, status: { code: 403 } });
  });

  it('fails closed when the object cannot be read, or there is no cluster to read it from', async () => {
    const broken = { ...deps(deployment()), objects: { get: () => Promise.reject(new Error('HTTP 403')) } };
    expect(await HANDLERS['protect-objects'](scaleRequest(alice, 5), broken)).toMatchObject({
      allowed: false, status: { code: 503, message: 'could not read deployments "web" in namespace "team-a", which decides whether scaling it is allowed (HTTP 403); retry' },
    });
    const { objects: _none, ...offline } = deps(deployment());
    expect(await HANDLERS['protect-objects'](scaleRequest(alice, 5), offline)).toMatchObject({ allowed: false, status: { code: 503 } });
  });
});

describe('protect-objects judges a Pod\'s ephemeral containers like the Pod', () => {
  it('refuses adding a debug container to a protected Pod', async () => {
    const pod = (ephemeral: boolean): KubeObject => ({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name: 'agent', namespace: 'team-a', labels: { [KEY.template]: 'workloads', [KEY.applySetPartOf]: applySetId('team-a') }, managedFields: [{ manager: 'furnish', operation: 'Apply', time: '2026-11-27T05:00:00Z', fieldsV1: MEMBERSHIP }] },
      spec: { containers: [{ name: 'a', image: 'agent' }], ...(ephemeral ? { ephemeralContainers: [{ name: 'debug', image: 'busybox' }] } : {}) },
    });
    const request: AdmissionRequest = {
      uid: 'e1', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, subResource: 'ephemeralcontainers',
      name: 'agent', namespace: 'team-a', operation: 'UPDATE', userInfo: alice, object: pod(true), oldObject: pod(false),
    };
    const refused = await HANDLERS['protect-objects'](request, deps(undefined));
    expect(refused).toMatchObject({ allowed: false });
    expect(refused.status!.message).toContain('user "alice" may not update Pod "agent" in namespace "team-a": it belongs to NamespaceTemplate "workloads"');
    // Status is not protected content.
    expect(await HANDLERS['protect-objects']({ ...request, subResource: 'status', object: pod(false) }, deps(undefined))).toMatchObject({ allowed: true });
  });
});
