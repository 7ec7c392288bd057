// Builders for organization tests: Organizations, and AdmissionReviews of namespaces, Pods and
// Organizations derived from the ones a real kube-apiserver 1.26 sent.
import type { AdmissionRequest, DecodedReview } from '../../shared/admission/types.ts';
import type { UserInfo } from '../../shared/kube/types.ts';
import type { OrganizationSettings } from '../../shared/org/settings.ts';
import type { Organization, OrganizationMember, OrganizationStatus } from '../../shared/org/types.ts';
import type { WebhookDeps } from '../../shared/webhooks/deps.ts';
import { memoryOrganizations } from '../../shared/org/source.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { admissionReview, testDeps } from './fixtures.ts';

export function organization(name: string, members: OrganizationMember[] = [], options: { quota?: number; status?: OrganizationStatus } = {}): Organization {
  return {
    apiVersion: 'furnish.dev/v1alpha1',
    kind: 'Organization',
    metadata: { name },
    spec: { members, ...(options.quota !== undefined ? { namespaceQuota: options.quota } : {}) },
    ...(options.status ? { status: options.status } : {}),
  };
}

export function namespaceObject(name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels }, annotations } };
}

/** acme (alice default, group acme-devs, SA ci/deployer) and globex (bob default); namespace acme-tools belongs to acme. */
export function scenario(): { organizations: Organization[]; namespaces: KubeObject[] } {
  return {
    organizations: [
      organization('acme', [{ kind: 'User', name: 'alice', default: true }, { kind: 'Group', name: 'acme-devs' }, { kind: 'ServiceAccount', namespace: 'ci', name: 'deployer' }], { quota: 25 }),
      organization('globex', [{ kind: 'User', name: 'bob', default: true }, { kind: 'User', name: 'alice' }]),
    ],
    namespaces: [namespaceObject('acme-tools', { 'furnish.dev/organization': 'acme' }), namespaceObject('ci')],
  };
}

export function orgDeps(options: { organizations?: Organization[]; namespaces?: KubeObject[]; lnamespaces?: KubeObject[]; settings?: Partial<OrganizationSettings> } = {}): WebhookDeps & { organizations: ReturnType<typeof memoryOrganizations> } {
  const base = scenario();
  const deps = testDeps();
  const organizations = memoryOrganizations(options.organizations ?? base.organizations, options.namespaces ?? base.namespaces, options.lnamespaces);
  return { ...deps, settings: { ...deps.settings, organizations: { enabled: true, ...options.settings } }, organizations };
}

let uids = 0;

/** A namespace CREATE or UPDATE review (from the captured `kubectl create namespace team-a` of alice). */
export function namespaceRequest(options: { operation?: 'CREATE' | 'UPDATE'; user?: UserInfo; name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; old?: { labels?: Record<string, string>; annotations?: Record<string, string> }; subResource?: string; dryRun?: boolean; webhook?: 'mutate' | 'validate' } = {}): AdmissionRequest {
  const review = admissionReview(options.webhook === 'mutate' ? '001-mutate-CREATE-namespaces-team-a-alice' : '002-validate-CREATE-namespaces-team-a-alice');
  const request = review.request;
  const name = options.name ?? 'team-a';
  request.uid = `uid-${++uids}`;
  request.name = name;
  request.namespace = name;
  request.operation = options.operation ?? 'CREATE';
  if (options.user) request.userInfo = options.user;
  if (options.subResource) request.subResource = options.subResource;
  request.dryRun = options.dryRun ?? false;
  // What mutate-namespace recorded: the requester at CREATE, alice (the stored creator) at UPDATE.
  const creator = request.operation === 'UPDATE' ? 'alice' : request.userInfo.username ?? '';
  const object = namespaceObject(name, options.labels, options.annotations ?? (options.webhook === 'mutate' ? {} : { 'furnish.dev/creator': creator }));
  request.object = { ...request.object!, metadata: { ...request.object!.metadata, ...object.metadata } };
  if (request.operation === 'UPDATE') {
    request.oldObject = { ...request.object, metadata: { ...request.object.metadata, labels: { 'kubernetes.io/metadata.name': name, ...options.old?.labels }, annotations: { 'furnish.dev/creator': 'alice', ...options.old?.annotations } } };
  }
  return request;
}

/** A captured CREATE review turned into one of another resource. */
function createReviewOf(group: string, version: string, kind: string, resource: string): DecodedReview {
  const review = admissionReview('002-validate-CREATE-namespaces-team-a-alice');
  const r = review.request;
  r.kind = { group, version, kind };
  r.resource = { group, version, resource };
  r.requestKind = r.kind;
  r.requestResource = r.resource;
  delete r.namespace;
  return review;
}

/** A Pod CREATE review in `namespace`. */
export function podReview(namespace: string, spec: Record<string, unknown>): DecodedReview {
  const review = createReviewOf('', 'v1', 'Pod', 'pods');
  const r = review.request;
  r.name = 'job-1';
  r.namespace = namespace;
  r.object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'job-1', namespace }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } };
  return review;
}

/** An Organization CREATE review. */
export function organizationReview(object: unknown): DecodedReview {
  const review = createReviewOf('furnish.dev', 'v1alpha1', 'Organization', 'organizations');
  const r = review.request;
  r.name = (object as Organization).metadata?.name ?? '';
  r.object = object as KubeObject;
  return review;
}
