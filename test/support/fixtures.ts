// Real AdmissionReviews captured from kube-apiserver 1.26 (see
// test/fixtures/kube-apiserver-1.26/admission). Read once, handed out as deep clones so that a
// test may change its copy freely.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdmissionRequest, DecodedReview } from '../../shared/admission/types.ts';
import type { AccessCheck, AccessDecision, Authorizer } from '../../shared/kube/sar.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';
import type { PolicySettings } from '../../shared/config/types.ts';
import { defaultPolicySettings, WEBHOOKS } from '../../shared/config/types.ts';
import type { WebhookDeps } from '../../shared/webhooks/deps.ts';
import { staticTemplates } from '../../shared/webhooks/deps.ts';
import { SignJWT } from 'jose';
import { KEY } from '../../shared/keys.ts';
import { applySetId } from '../../shared/render/applyset.ts';

export const ADMISSION_FIXTURES = [
  '001-mutate-CREATE-namespaces-team-a-alice',
  '002-validate-CREATE-namespaces-team-a-alice',
  '003-mutate-CREATE-namespaces-priv-b-bob',
  '004-validate-CREATE-namespaces-priv-b-bob',
  '005-guard-CREATE-serviceaccounts-default-system_serviceaccount_kube_system_service_account_controller',
  '006-guard-CREATE-configmaps-kube-root-ca.crt-system_serviceaccount_kube_system_root_ca_cert_publisher',
  '007-mutate-UPDATE-namespaces-team-a-alice',
  '008-validate-UPDATE-namespaces-team-a-alice',
  '009-mutate-UPDATE-namespaces-team-a-admin',
  '010-validate-UPDATE-namespaces-team-a-admin',
  '011-mutate-CREATE-namespaces-dry-one-alice',
  '012-validate-CREATE-namespaces-dry-one-alice',
  '013-guard-CREATE-rolebindings-alice-edit-admin',
  '014-mutate-CREATE-namespacetemplates-default-admin',
  '015-guard-CREATE-serviceaccounts-ci-bot-admin',
  '016-mutate-CREATE-namespaces-from-ci-system_serviceaccount_team_a_ci_bot',
  '017-validate-CREATE-namespaces-from-ci-system_serviceaccount_team_a_ci_bot',
  '018-mutate-DELETE-namespaces-priv-b-admin',
  '019-validate-DELETE-namespaces-priv-b-admin',
  '020-guard-CREATE-rolebindings-alice-ca-admin',
  '021-guard-CREATE-configmaps-app-config-alice',
  '022-guard-CREATE-configmaps-ssa-config-alice',
  '023-guard-UPDATE-configmaps-ssa-config-alice',
  '024-mutate-CREATE-namespaces-team-c-alice',
  '025-validate-CREATE-namespaces-team-c-alice',
  '026-guard-CREATE-configmaps-app-config-admin',
  '027-mutate-UPDATE-namespaces-team-a-admin',
  '028-guard-CREATE-configmaps-furnished-admin',
  '029-guard-UPDATE-configmaps-furnished-admin',
  '030-guard-UPDATE-configmaps-furnished-admin',
  '031-guard-CREATE-configmaps-furnished-json-admin',
  '032-mutate-DELETE-namespaces-team-c-admin',
  '033-validate-DELETE-namespaces-team-c-admin',
  // protect-objects (objectSelector furnish.dev/template Exists; UPDATE, DELETE of every namespaced kind): see docs/reference/webhooks.md.
  '034-protect-UPDATE-networkpolicies-default-deny-alice',
  '035-protect-UPDATE-networkpolicies-default-deny-alice',
  '036-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler',
  '037-protect-DELETE-networkpolicies-default-deny-alice',
  '038-protect-UPDATE-networkpolicies-default-deny-system_serviceaccount_furnish_system_furnish_reconciler',
  '039-protect-DELETE-networkpolicies-default-deny-system_serviceaccount_kube_system_namespace_controller',
] as const;

export type AdmissionFixtureName = (typeof ADMISSION_FIXTURES)[number];

/** One captured call: the path kube-apiserver posted to, its headers, and the review. */
export interface CapturedAdmission {
  path: string;
  headers: Record<string, string>;
  review: DecodedReview;
}

const DIR = join(import.meta.dirname, '..', 'fixtures', 'kube-apiserver-1.26', 'admission');
const loaded = new Map<AdmissionFixtureName, CapturedAdmission>();

export function admissionFixture(name: AdmissionFixtureName): CapturedAdmission {
  let captured = loaded.get(name);
  if (!captured) {
    captured = JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8')) as CapturedAdmission;
    loaded.set(name, captured);
  }
  return structuredClone(captured);
}

export function admissionReview(name: AdmissionFixtureName): DecodedReview {
  return admissionFixture(name).review;
}

export function admissionRequest(name: AdmissionFixtureName): AdmissionRequest {
  return admissionFixture(name).review.request;
}

/**
 * The request with its objects members of the namespace's ApplySet, the label applied by field
 * manager furnish, as Furnish applies them now (shared/ownership.ts): the protect-objects captures
 * predate the ApplySet label counting as ownership.
 */
export function asApplySetMembers(request: AdmissionRequest): AdmissionRequest {
  for (const o of [request.object, request.oldObject]) {
    if (!o) continue;
    o.metadata.labels = { ...o.metadata.labels, [KEY.applySetPartOf]: applySetId(request.namespace!) };
    for (const e of o.metadata.managedFields as { manager: string; fieldsV1: { 'f:metadata'?: { 'f:labels'?: Record<string, unknown> } } }[]) {
      if (e.manager !== 'furnish') continue;
      const metadata = (e.fieldsV1['f:metadata'] ??= {});
      metadata['f:labels'] = { ...metadata['f:labels'], [`f:${KEY.applySetPartOf}`]: {} };
    }
  }
  return request;
}

/** The fixtures a webhook of this kind received (`mutate`, `validate`, `guard`, `protect`). */
export function fixturesFor(kind: 'mutate' | 'validate' | 'guard' | 'protect'): AdmissionFixtureName[] {
  return ADMISSION_FIXTURES.filter((n) => n.split('-')[1] === kind);
}

// ---- Builders and fakes for webhook tests --------------------------------------------------


/** A grant as tests write it: `{ user: 'bob', verb: 'use', name: 'privileged' }` (any field left out matches anything). */
export type Grant = Partial<Omit<AccessCheck, 'user'>> & { user: string };

export interface FakeAuthorizer extends Authorizer {
  calls: AccessCheck[];
}

/** Allows exactly the grants listed; records every check asked. `error` makes every check unanswerable. */
export function fakeAuthorizer(grants: Grant[] = [], error?: string): FakeAuthorizer {
  const calls: AccessCheck[] = [];
  return {
    calls,
    async check(check): Promise<AccessDecision> {
      calls.push(check);
      if (error) return { allowed: false, error };
      const { user, ...rest } = check;
      const allowed = grants.some(
        (g) => g.user === user.username && Object.entries(g).every(([k, v]) => k === 'user' || (rest as Record<string, unknown>)[k] === v),
      );
      return { allowed, reason: allowed ? 'granted by the test' : 'not granted by the test' };
    },
  };
}

export function namespaceTemplate(name: string, options: { matchLabels?: Record<string, string>; requirePermission?: boolean } = {}): NamespaceTemplate {
  return {
    apiVersion: 'furnish.dev/v1alpha1',
    kind: 'NamespaceTemplate',
    metadata: { name, ...(options.requirePermission ? { annotations: { 'furnish.dev/require-permission': 'true' } } : {}) },
    spec: {
      namespaces: { labelSelector: options.matchLabels ? { matchLabels: options.matchLabels } : {} },
      templates: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-cm` }, data: { who: '$(CREATOR)' } }],
    },
  };
}

/** The templates of the end-to-end scenario: `privileged` requires permission for namespace-class=privileged. */
export const SCENARIO_TEMPLATES: NamespaceTemplate[] = [
  namespaceTemplate('default'),
  namespaceTemplate('privileged', { matchLabels: { 'namespace-class': 'privileged' }, requirePermission: true }),
];

export function testSettings(overrides: Partial<PolicySettings> = {}): PolicySettings {
  return { ...defaultPolicySettings(), autoOptOutPrincipals: ['system:serviceaccount:team-a:ci-bot'], ...overrides };
}

export function testDeps(options: { grants?: Grant[]; templates?: NamespaceTemplate[]; settings?: Partial<PolicySettings>; authorizer?: Authorizer } = {}): WebhookDeps & { authorizer: Authorizer } {
  return {
    settings: testSettings(options.settings),
    authorizer: options.authorizer ?? fakeAuthorizer(options.grants ?? []),
    templates: staticTemplates(options.templates ?? SCENARIO_TEMPLATES),
  };
}

// ---- Webhook tokens and configuration for function tests ------------------------------------

export const TEST_CLUSTER = 'test-cluster';
export const TEST_SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';
export const TEST_PUBLIC_URL = 'https://europe-west1-furnish.cloudfunctions.net';

/** A webhook token as an operator would mint it: `sub` names the cluster, `aud` the function URL(s). */
/** A cluster webhook JWT; it expires in an hour unless `expiresIn` says otherwise (`null`: never, which the webhooks refuse). */
export async function mintToken(options: { cluster?: string; secret?: string; audience?: string | string[]; expiresIn?: string | null; issuer?: string } = {}): Promise<string> {
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(options.cluster ?? TEST_CLUSTER)
    .setAudience(options.audience ?? WEBHOOKS.map((n) => `${TEST_PUBLIC_URL}/${n}`))
    .setIssuedAt();
  if (options.expiresIn !== null) jwt = jwt.setExpirationTime(options.expiresIn ?? '1h');
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  return jwt.sign(new TextEncoder().encode(options.secret ?? TEST_SECRET));
}

/** The environment a webhook function starts with in tests (one cluster, HS256, API server optional). */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    FURNISH_PUBLIC_URL: TEST_PUBLIC_URL,
    FURNISH_CLUSTER_ID: TEST_CLUSTER,
    FURNISH_JWT_SECRET: TEST_SECRET,
    FURNISH_AUTO_OPT_OUT_PRINCIPALS: 'system:serviceaccount:team-a:ci-bot',
    ...extra,
  };
}
