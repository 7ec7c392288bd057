// Generated namespace writes for the agreement and matchCondition properties: each key Furnish
// judges kept, changed, added or removed; every path; requesters with and without the grants.
import fc from 'fast-check';
import { canonicalIdentity, CREATOR_IDENTITY, REQUESTER_ANNOTATIONS } from '../../../shared/auth/creator.ts';
import { defaultPolicySettings, type PolicySettings } from '../../../shared/config/types.ts';
import { INITIALIZER_KEY } from '../../../shared/initializers/keys.ts';
import { KEY, PHASE } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { LNS_KEY } from '../../../shared/lnamespace/types.ts';
import { namespace, type Grant, type UserInfo } from './harness.ts';

export const SETTINGS: PolicySettings = { ...defaultPolicySettings(), autoOptOutPrincipals: ['ci'], systemNamespaces: ['platform'] };
export const NAME = 'team-a';
export const USERS: UserInfo[] = [
  { username: 'alice', uid: 'u1', groups: ['dev'] }, { username: SETTINGS.guard.reconciler[0]! }, { username: 'ci' },
  { username: 'system:kube-scheduler' }, { username: 'root', groups: ['system:masters'] }, {},
];

const absent = fc.constant(undefined);
const value = (...values: string[]) => fc.oneof(absent, fc.constantFrom(...values));
export const LABEL_VALUES = {
  [KEY.phase]: value(PHASE.pending, PHASE.ready, PHASE.failed, ''), team: value('x', 'y'), tier: value('gold'),
  [KEY.metadataName]: value(NAME, 'other'), [KEY.organization]: value('acme', 'other', ''),
  // The organization allowlist's wildcard `app.kubernetes.io/*` matches the first, not the second.
  'app.kubernetes.io/name': value('web'), 'appXkubernetes.io/name': value('web'),
  // An annotation's own-rule key as a label: no rule of its own judges it there, the allowlist does.
  [`${KEY.creator}`]: value('mallory'),
};
export const ANNOTATION_VALUES = {
  [KEY.creator]: value('alice', 'bob'),
  [CREATOR_IDENTITY]: value(canonicalIdentity({ username: 'alice', uid: 'u1', groups: ['dev'] }), 'user=bob'),
  [KEY.optOut]: value('true', 'false'),
  [INITIALIZER_KEY.initializers]: value('', 'furnish', 'furnish,vault', ' vault , furnish', ',,', 'b,furnish,vault'),
  [INITIALIZER_KEY.initializerFailed]: value('furnish: x', 'vault: y', 'bad', ':x', 'furnish:', 'furnish: a:b', ' b :c'),
  [KEY.failure]: value('template t: x', 'vault: y'),
  [REQUESTER_ANNOTATIONS[0]]: value('carol', ''),
  description: value('d', 'e'),
  // Furnish's own keys on a namespace (ANNOTATIONS_WRITTEN_BY_FURNISH, by wildcard): the allowlist exempts them for Furnish alone.
  [`${LNS_KEY.billingPrefix}team`]: value('t'),
  // A label's own-rule key as an annotation: judged by the allowlist.
  [`${KEY.phase}`]: value('ready'),
};
const READY_CONDITION = fc.constantFrom({ type: 'Ready', status: 'True', reason: 'Ready' }, { type: 'Ready', status: 'False', reason: 'Pending' }, { type: 'Ready', status: 'False', reason: 'Pending', message: 'm' }, { type: 'ready', status: 'True' }, { type: 'READY', status: 'true' });
// None, one, or two (the server keeps a second Ready condition written through namespaces/status).
const READY = fc.array(READY_CONDITION, { maxLength: 2 });

type Maps = Record<string, string | undefined>;
const maps = (arbs: Record<string, fc.Arbitrary<string | undefined>>) => fc.record(arbs);
export const defined = (m: Maps) => Object.fromEntries(Object.entries(m).filter((e): e is [string, string] => e[1] !== undefined));

/**
 * Each key of `old` kept (three times in four: with a dozen keys per map, an update that changes
 * none of a map's keys, the one a matchCondition keeps out, stays common) or given another
 * generated value.
 */
function changed(old: Maps, arbs: Record<string, fc.Arbitrary<string | undefined>>): fc.Arbitrary<Maps> {
  return fc.record(Object.fromEntries(Object.entries(arbs).map(([k, arb]) => [k, fc.oneof({ arbitrary: fc.constant(old[k]), weight: 3 }, { arbitrary: arb, weight: 1 })])));
}

export function namespaceOf(labels: Maps, annotations: Maps, ready: object[] = [], name = NAME): KubeObject {
  return { ...namespace({ name, labels: defined(labels), annotations: defined(annotations) }), ...(ready.length > 0 ? { status: { phase: 'Active', conditions: ready } } : {}) };
}

export const grants = fc.subarray<Grant>(USERS.flatMap((u) => u.username ? [
  { user: u.username, verb: 'initialize', resource: 'namespaces', name: NAME }, { user: u.username, verb: 'initialize', resource: 'namespaces', name: 'other' },
  { user: u.username, verb: 'optout', resource: 'namespacetemplates' }, { user: u.username, verb: 'use', resource: 'namespacetemplates' },
] : []));

export const namespaceUpdate = fc.record({ labels: maps(LABEL_VALUES), annotations: maps(ANNOTATION_VALUES), ready: READY }).chain((old) => fc.record({
  oldObject: fc.constant(namespaceOf(old.labels, old.annotations, old.ready)),
  object: fc.record({ labels: changed(old.labels, LABEL_VALUES), annotations: changed(old.annotations, ANNOTATION_VALUES), ready: fc.oneof(fc.constant(old.ready), READY) })
    .map((n) => namespaceOf(n.labels, n.annotations, n.ready)),
  user: fc.constantFrom(...USERS),
  grants,
  subResource: fc.constantFrom(undefined, 'status', 'finalize'),
}));

export const namespaceCreate = fc.record({
  labels: maps(LABEL_VALUES), annotations: maps(ANNOTATION_VALUES), user: fc.constantFrom(...USERS), grants,
  name: fc.constantFrom(NAME, 'platform', 'kube-system', SETTINGS.furnishNamespace, 'kube-x', 'openshift-x'),
}).map((c) => ({ ...c, object: namespaceOf(c.labels, c.annotations, [], c.name) }));
