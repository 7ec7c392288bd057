// ServiceAccount tokens, as kube-apiserver issues them through the TokenRequest API
// (POST /api/v1/namespaces/NS/serviceaccounts/NAME/token, RBAC `create` on
// `serviceaccounts/token`) and authenticates them: user `system:serviceaccount:NS:NAME` with the
// ServiceAccount's uid and the groups system:serviceaccounts, system:serviceaccounts:NS,
// system:authenticated (what 1.26 put in the AdmissionReviews of test/fixtures/kube-apiserver-1.26).
// A token is refused (401) once expired, and once its ServiceAccount is gone or was recreated
// (another uid), as the real server's token validator checks.
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { badRequest, invalid, notFound } from './errors.ts';
import { isObject } from './fieldsets.ts';

/** The ServiceAccount a token was issued for, as stored now (undefined: deleted). */
export type ServiceAccountLookup = (namespace: string, name: string) => KubeObject | undefined;

interface Issued {
  namespace: string;
  name: string;
  uid: string;
  expiresAt: number;
}

/** kube-apiserver's ValidateTokenRequest bounds. */
const MIN_SECONDS = 10 * 60;
const MAX_SECONDS = 2 ** 32;
const DEFAULT_SECONDS = 3600;
/** The audience of a token requested without one: the API server's own (--api-audiences, here kubeadm's). */
export const API_AUDIENCES = ['https://kubernetes.default.svc.cluster.local'];

/** RFC 3339 to the second, as the API server writes times. */
const atSecond = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class ServiceAccountTokens {
  private readonly issued = new Map<string, Issued>();
  /** The clock tokens expire by; tests move it. */
  now: () => number = Date.now;
  private readonly serviceAccount: ServiceAccountLookup;

  constructor(serviceAccount: ServiceAccountLookup) {
    this.serviceAccount = serviceAccount;
  }

  /**
   * A TokenRequest's answer (201), or the real server's errors: 404 for a missing ServiceAccount,
   * 422 for a bad duration. Like 1.26's, the answer carries the request's time as its
   * creationTimestamp and one managedFields entry of `manager` for the spec fields it was sent
   * (expirationSeconds always: it is defaulted before).
   * As kube-apiserver's TokenREST.Create: the ServiceAccount looked up, the request validated,
   * then `admit` (the validating admission of the serviceaccounts/token CREATE, whose mutating
   * admission the caller ran), then the token.
   */
  async request(namespace: string, name: string, body: unknown, manager: string, admit: (tokenRequest: KubeObject) => Promise<void>): Promise<{ status: number; body: KubeObject }> {
    if (body !== undefined && !isObject(body)) throw badRequest('the body of the request must be an object');
    const spec = (isObject(body) && isObject(body.spec) ? body.spec : {}) as { expirationSeconds?: unknown; audiences?: unknown };
    const seconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? DEFAULT_SECONDS : Number(spec.expirationSeconds);
    if (!Number.isInteger(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
      const detail = seconds > MAX_SECONDS ? 'may not specify a duration larger than 2^32 seconds' : 'may not specify a duration less than 10 minutes';
      throw invalid('authentication.k8s.io', 'TokenRequest', '', [{ type: 'FieldValueInvalid', field: 'spec.expirationSeconds', value: spec.expirationSeconds, detail }]);
    }
    const sa = this.serviceAccount(namespace, name);
    if (!sa) throw notFound({ group: '', resource: 'serviceaccounts' }, name);
    await admit({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name, namespace }, spec: { ...spec } } as KubeObject);
    const token = `kube-sim-sa-${randomBytes(24).toString('base64url')}`;
    const expiresAt = Math.floor(this.now() / 1000) * 1000 + seconds * 1000;
    this.issued.set(token, { namespace, name, uid: sa.metadata.uid!, expiresAt });
    const audiencesGiven = Array.isArray(spec.audiences) && spec.audiences.length > 0;
    const audiences = audiencesGiven ? spec.audiences : API_AUDIENCES;
    const now = atSecond(this.now());
    const managedFields = [{
      manager, operation: 'Update', apiVersion: 'authentication.k8s.io/v1', time: now, fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { ...(audiencesGiven ? { 'f:audiences': {} } : {}), 'f:expirationSeconds': {} } }, subresource: 'token',
    }];
    return {
      status: 201,
      body: {
        kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1',
        metadata: { name, namespace, creationTimestamp: now, managedFields },
        spec: { audiences, expirationSeconds: seconds, boundObjectRef: null },
        status: { token, expirationTimestamp: atSecond(expiresAt) },
      },
    };
  }

  /** Who a token is; undefined when it was never issued, has expired, or its ServiceAccount is not the one it was issued for. */
  authenticate(token: string): { username: string; uid: string; groups: string[] } | undefined {
    const t = this.issued.get(token);
    if (!t) return undefined;
    if (this.now() >= t.expiresAt) return undefined;
    if (this.serviceAccount(t.namespace, t.name)?.metadata.uid !== t.uid) return undefined;
    return { username: `system:serviceaccount:${t.namespace}:${t.name}`, uid: t.uid, groups: ['system:serviceaccounts', `system:serviceaccounts:${t.namespace}`, 'system:authenticated'] };
  }
}
