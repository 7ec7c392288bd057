// Evaluating the policies as kube-sim (and kube-apiserver) does: a request on a namespace or into
// one, a requester, and an authorizer answering from a small grant table.
import { admitByPolicies, type AuthorizationAttributes, type Authorize, type PolicyAttributes, type UserInfo } from '../../support/kube-sim/policies.ts';
import { admissionPolicies } from '../../../shared/policies/index.ts';
import type { PolicySettings } from '../../../shared/config/types.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { applyChanges, mutationsFor, type MetadataMaps } from '../../../shared/webhooks/rules/mutate-namespace.ts';
import { initializerMutations } from '../../../shared/webhooks/rules/initializers-mutate.ts';

export type { UserInfo };

/** A grant: `verb` on `resource` (group implied by the resource), for `name` only when given. */
export interface Grant {
  user: string;
  verb: string;
  resource: 'namespaces' | 'namespacetemplates';
  name?: string;
}

/** Answers like RBAC: a grant with a name allows that name only; without, every name. */
export function authorizeFrom(grants: readonly Grant[]): Authorize {
  return (user: UserInfo, a: AuthorizationAttributes) =>
    grants.some((g) => g.user === user.username && g.verb === a.verb && g.resource === a.resource && (g.name === undefined || g.name === a.name));
}

export interface NamespaceMeta {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  status?: Record<string, unknown>;
}

export function namespace(meta: NamespaceMeta): KubeObject {
  const { name, labels, annotations, status } = meta;
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) }, ...(status ? { status } : {}) };
}

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const NAMESPACE_KIND = { group: '', version: 'v1', kind: 'Namespace' };

export function namespaceRequest(operation: 'CREATE' | 'UPDATE', user: UserInfo, object: KubeObject, oldObject: KubeObject | null = null, subResource?: string): PolicyAttributes {
  return {
    operation, userInfo: user, object, oldObject, namespaceObject: null, resource: NAMESPACES, name: object.metadata.name ?? '',
    kind: NAMESPACE_KIND, ...(subResource ? { subResource } : {}),
  };
}

/** A write of a ConfigMap into namespace `ns` (as stored). */
export function writeInto(operation: 'CREATE' | 'UPDATE' | 'DELETE', user: UserInfo, ns: KubeObject, name = 'cm'): PolicyAttributes {
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns.metadata.name } };
  return {
    operation, userInfo: user, object: operation === 'DELETE' ? null : cm, oldObject: operation === 'CREATE' ? null : cm, namespaceObject: ns,
    resource: { group: '', version: 'v1', resource: 'configmaps' }, name, namespace: ns.metadata.name!, kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  };
}

export interface Judge {
  (attrs: PolicyAttributes, grants?: readonly Grant[]): { allowed: boolean; message: string };
}

/** Every policy of `settings` (or only those named), judging one request: allowed, or the message the API server would send. */
export function judgeWith(settings: PolicySettings, only?: readonly string[]): Judge {
  const objects = admissionPolicies(settings).filter((o) => only === undefined || only.includes(o.metadata.name!));
  const policies = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy');
  const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding');
  return (attrs, grants = []) => {
    const d = admitByPolicies({ policies, bindings }, attrs, authorizeFrom(grants));
    return d.allowed ? { allowed: true, message: '' } : { allowed: false, message: d.message };
  };
}

/** The namespace as mutate-namespace (with its initializer rules, no configured initializers) leaves it: what the policies see. */
export function mutated(settings: PolicySettings, operation: 'CREATE' | 'UPDATE', user: UserInfo, object: KubeObject, oldObject?: KubeObject): KubeObject {
  const info = (o: KubeObject) => ({ name: o.metadata.name ?? '', labels: { ...o.metadata.labels }, annotations: { ...o.metadata.annotations } });
  const input = { operation, user, namespace: info(object), ...(oldObject ? { old: info(oldObject) } : {}), settings };
  const meta: MetadataMaps = { labels: { ...object.metadata.labels }, annotations: { ...object.metadata.annotations } };
  // As handlers/initializers.ts: both judge the request's object, their changes applied together.
  applyChanges(meta, [...mutationsFor(input), ...initializerMutations({ ...input, configured: [] })]);
  return { ...object, metadata: { ...object.metadata, labels: meta.labels ?? {}, annotations: meta.annotations ?? {} } };
}
