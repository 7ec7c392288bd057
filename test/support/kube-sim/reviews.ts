// The review kinds, answered per request and never stored: SubjectAccessReview (and its Self and
// Local forms, which `kubectl auth can-i` uses), SelfSubjectRulesReview (`can-i --list`) and
// SelfSubjectReview (`kubectl auth whoami`).
import type { KubeObject } from '../../../shared/kube/types.ts';
import type { Authenticated } from './authn.ts';
import { badRequest } from './errors.ts';
import { isObject } from './fieldsets.ts';
import { recordUpdate, setManagedFields } from './managed-fields.ts';
import { managerOf, type ApiReply, type ApiRequest } from './operations.ts';
import type { Attributes } from './rbac.ts';
import type { Sim } from './sim.ts';

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

interface ReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  uid?: string;
  extra?: Record<string, string[]>;
  namespace?: string;
}

function attributesOf(user: Authenticated, spec: ReviewSpec): Attributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user, verb: r.verb ?? '', resourceRequest: true, apiGroup: r.group ?? '', resource: r.resource ?? '',
      ...(r.subresource ? { subresource: r.subresource } : {}),
      ...(r.namespace ? { namespace: r.namespace } : {}),
      ...(r.name ? { name: r.name } : {}),
    };
  }
  const n = spec.nonResourceAttributes;
  if (n) return { user, verb: n.verb ?? '', resourceRequest: false, path: n.path ?? '' };
  throw badRequest('exactly one of nonResourceAttributes or resourceAttributes must be specified');
}

/** The answer object: the request echoed with status, creationTimestamp null and managedFields, as kube-apiserver returns. */
function answer(req: ApiRequest, review: KubeObject, status: Record<string, unknown>): ApiReply {
  const out: KubeObject = { kind: req.type.kind, apiVersion: review.apiVersion, metadata: { ...review.metadata, creationTimestamp: null }, spec: review.spec, status };
  const request: KubeObject = { apiVersion: review.apiVersion, kind: review.kind, metadata: review.metadata, spec: review.spec };
  setManagedFields(out, recordUpdate(undefined, request, new Map(), { type: req.type, manager: managerOf(req) }));
  return { status: 201, body: out };
}

function decision(sim: Sim, attributes: Attributes): Record<string, unknown> {
  const result = sim.rbac.authorize(attributes);
  return result.allowed ? { allowed: true, ...(result.reason ? { reason: result.reason } : {}) } : { allowed: false };
}

export function handleReview(sim: Sim, req: ApiRequest): ApiReply {
  if (!isObject(req.body)) throw badRequest('the body of the request must be an object');
  const review = structuredClone(req.body) as KubeObject;
  review.metadata = isObject(review.metadata) ? review.metadata : {};
  const spec = (isObject(review.spec) ? review.spec : {}) as ReviewSpec;
  switch (req.type.kind) {
    case 'SubjectAccessReview': {
      if (!spec.user && !(spec.groups ?? []).length) throw badRequest('at least one of user or group must be specified');
      const subject: Authenticated = { username: spec.user ?? '', groups: spec.groups ?? [], ...(spec.uid ? { uid: spec.uid } : {}) };
      return answer(req, review, decision(sim, attributesOf(subject, spec)));
    }
    case 'LocalSubjectAccessReview': {
      if (spec.resourceAttributes?.namespace !== req.namespace) {
        throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${req.namespace}`);
      }
      const subject: Authenticated = { username: spec.user ?? '', groups: spec.groups ?? [] };
      return answer(req, review, decision(sim, attributesOf(subject, spec)));
    }
    case 'SelfSubjectAccessReview':
      return answer(req, review, decision(sim, attributesOf(req.user, spec)));
    case 'SelfSubjectRulesReview': {
      const rules = sim.rbac.rulesFor(req.user, spec.namespace);
      const resourceRules = rules.filter((r) => !r.nonResourceURLs).map((r) => ({ verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}) }));
      const nonResourceRules = rules.filter((r) => r.nonResourceURLs).map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs }));
      return answer(req, review, { resourceRules, nonResourceRules, incomplete: false });
    }
    case 'SelfSubjectReview':
      return { status: 201, body: { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', metadata: { creationTimestamp: null }, status: { userInfo: req.user } } };
    default:
      throw badRequest(`${req.type.kind} is not a review`);
  }
}
